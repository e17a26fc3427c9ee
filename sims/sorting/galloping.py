"""Timsort's merging (CPython ``Objects/listobject.c``: ``gallop_left``, ``gallop_right``,
``merge_at``, ``merge_lo``, ``merge_hi``), comparison for comparison; ``timsort.py`` finds the runs
and decides the merge order.

A merge first gallops to trim what is already in place (A's items below B's first, B's items
above A's last), copies the shorter run out to aux and merges from that side. It takes one pair
at a time until one run wins ``min_gallop`` times in a row, then gallops: it searches ahead by 1,
3, 7, 15, … and copies the whole stretch that wins. ``min_gallop`` falls by one each round that
galloping pays (at least ``MIN_GALLOP`` items moved at once) and rises by one when it stops.
"""

from __future__ import annotations

from collections.abc import Iterator

from sims.sorting.array import SortState
from sims.sorting.base import Step, compare

MIN_GALLOP = 7  # galloping starts after this many wins in a row (listobject.c MIN_GALLOP)
RUN, INSERT, TRIM, PAIR, GALLOP = 1, 2, 4, 5, 6  # pseudocode lines of ``Timsort.PSEUDOCODE``


class Merging:
    """The merge half of one list.sort call: the pending runs ``[base, length, power]`` and
    ``min_gallop`` live on the sort's state (``TimState``)."""

    s: SortState
    pending: list[list[int]]
    min_gallop: int

    def less(self, p: int, q: int, line: int, what: str) -> Iterator[Step]:
        return compare(self.s, p, q, line, what)

    # -- galloping ----------------------------------------------------------------------------------
    def gallop_left(self, key: int, aux: bool, base: int, n: int, hint: int, line: int) -> Iterator[Step]:
        """Where the item at location ``key`` goes in the sorted n slots at ``base`` (of aux when
        ``aux``), left of any equal keys: searched from ``hint`` by 1, 3, 7, … then by halves."""

        def lt_key(i: int) -> Iterator[Step]:  # slot i < key?
            return self.less(~(base + i) if aux else base + i, key, line, "gallop")

        lastofs, ofs = 0, 1
        if (yield from lt_key(hint)):
            maxofs = n - hint
            while ofs < maxofs and (yield from lt_key(hint + ofs)):
                lastofs, ofs = ofs, (ofs << 1) + 1
            ofs = min(ofs, maxofs)
            lastofs, ofs = lastofs + hint, ofs + hint
        else:
            maxofs = hint + 1
            while ofs < maxofs and not (yield from lt_key(hint - ofs)):
                lastofs, ofs = ofs, (ofs << 1) + 1
            ofs = min(ofs, maxofs)
            lastofs, ofs = hint - ofs, hint - lastofs
        lastofs += 1
        while lastofs < ofs:
            m = lastofs + ((ofs - lastofs) >> 1)
            if (yield from lt_key(m)):
                lastofs = m + 1
            else:
                ofs = m
        return ofs

    def gallop_right(self, key: int, aux: bool, base: int, n: int, hint: int, line: int) -> Iterator[Step]:
        """As ``gallop_left``, but right of any equal keys."""

        def key_lt(i: int) -> Iterator[Step]:  # key < slot i?
            return self.less(key, ~(base + i) if aux else base + i, line, "gallop")

        lastofs, ofs = 0, 1
        if (yield from key_lt(hint)):
            maxofs = hint + 1
            while ofs < maxofs and (yield from key_lt(hint - ofs)):
                lastofs, ofs = ofs, (ofs << 1) + 1
            ofs = min(ofs, maxofs)
            lastofs, ofs = hint - ofs, hint - lastofs
        else:
            maxofs = n - hint
            while ofs < maxofs and not (yield from key_lt(hint + ofs)):
                lastofs, ofs = ofs, (ofs << 1) + 1
            ofs = min(ofs, maxofs)
            lastofs, ofs = lastofs + hint, ofs + hint
        lastofs += 1
        while lastofs < ofs:
            m = lastofs + ((ofs - lastofs) >> 1)
            if (yield from key_lt(m)):
                ofs = m
            else:
                lastofs = m + 1
        return ofs

    # -- merging ------------------------------------------------------------------------------------
    def move(self, dest: int, src: int, line: int) -> Iterator[Step]:
        s = self.s
        s.write(dest, s.item(src))
        yield line, "a[{}] ← {}", (dest, s.a[dest][0])

    def merge_at(self, i: int) -> Iterator[Step]:
        """Merge pending runs i and i + 1 (the top two, or the two below the top)."""
        p = self.pending
        ba, na = p[i][0], p[i][1]
        bb, nb = p[i + 1][0], p[i + 1][1]
        p[i][1] = na + nb
        if i == len(p) - 3:
            p[i + 1] = p[i + 2]
        p.pop()
        self.s.span = (ba, bb + nb)
        k = yield from self.gallop_right(bb, False, ba, na, 0, TRIM)
        ba += k
        na -= k
        if na == 0:
            return
        nb = yield from self.gallop_left(ba + na - 1, False, bb, nb, nb - 1, TRIM)
        if nb <= 0:
            return
        yield from (self.merge_lo if na <= nb else self.merge_hi)(ba, na, bb, nb)
        self.s.release()

    def merge_lo(self, ba: int, na: int, bb: int, nb: int) -> Iterator[Step]:
        """Merge left to right, A (the shorter) copied out to aux."""
        s = self.s
        s.use(na, at=ba)
        for k in range(na):
            s.write(~k, s.a[ba + k])
            yield TRIM, "copy A's {} out to aux[{}]", (s.aux[k][0], k)
        pa, pb, dest = 0, bb, ba
        yield from self.move(dest, pb, PAIR)
        dest, pb, nb = dest + 1, pb + 1, nb - 1
        done, copy_b = nb == 0, na == 1 and nb > 0
        min_gallop = self.min_gallop
        while not (done or copy_b):
            acount = bcount = 0
            while True:
                if (yield from self.less(pb, ~pa, PAIR, "merge, is B's head less")):
                    yield from self.move(dest, pb, PAIR)
                    dest, pb, nb, bcount, acount = dest + 1, pb + 1, nb - 1, bcount + 1, 0
                    if nb == 0:
                        done = True
                    if done or bcount >= min_gallop:
                        break
                else:
                    yield from self.move(dest, ~pa, PAIR)
                    dest, pa, na, acount, bcount = dest + 1, pa + 1, na - 1, acount + 1, 0
                    if na == 1:
                        copy_b = True
                    if copy_b or acount >= min_gallop:
                        break
            if done or copy_b:
                break
            min_gallop += 1
            while True:
                min_gallop -= min_gallop > 1
                self.min_gallop = min_gallop
                k = acount = yield from self.gallop_right(pb, True, pa, na, 0, GALLOP)
                for j in range(k):
                    yield from self.move(dest + j, ~(pa + j), GALLOP)
                dest, pa, na = dest + k, pa + k, na - k
                if k and na <= 1:
                    copy_b, done = na == 1, na == 0
                    break
                yield from self.move(dest, pb, GALLOP)
                dest, pb, nb = dest + 1, pb + 1, nb - 1
                if nb == 0:
                    done = True
                    break
                k = bcount = yield from self.gallop_left(~pa, False, pb, nb, 0, GALLOP)
                for j in range(k):
                    yield from self.move(dest + j, pb + j, GALLOP)
                dest, pb, nb = dest + k, pb + k, nb - k
                if k and nb == 0:
                    done = True
                    break
                yield from self.move(dest, ~pa, GALLOP)
                dest, pa, na = dest + 1, pa + 1, na - 1
                if na == 1:
                    copy_b = True
                    break
                if not (acount >= MIN_GALLOP or bcount >= MIN_GALLOP):
                    break
            if done or copy_b:
                break
            min_gallop += 1
            self.min_gallop = min_gallop
        if copy_b:
            for j in range(nb):
                yield from self.move(dest + j, pb + j, PAIR)
            yield from self.move(dest + nb, ~pa, PAIR)
        else:
            for j in range(na):
                yield from self.move(dest + j, ~(pa + j), PAIR)

    def merge_hi(self, ba: int, na: int, bb: int, nb: int) -> Iterator[Step]:
        """Merge right to left, B (the shorter) copied out to aux."""
        s = self.s
        s.use(nb, at=bb)
        for k in range(nb):
            s.write(~k, s.a[bb + k])
            yield TRIM, "copy B's {} out to aux[{}]", (s.aux[k][0], k)
        dest, pa, pb = bb + nb - 1, ba + na - 1, nb - 1
        yield from self.move(dest, pa, PAIR)
        dest, pa, na = dest - 1, pa - 1, na - 1
        done, copy_a = na == 0, nb == 1 and na > 0
        min_gallop = self.min_gallop
        while not (done or copy_a):
            acount = bcount = 0
            while True:
                if (yield from self.less(~pb, pa, PAIR, "merge from the right, is B's tail less")):
                    yield from self.move(dest, pa, PAIR)
                    dest, pa, na, acount, bcount = dest - 1, pa - 1, na - 1, acount + 1, 0
                    if na == 0:
                        done = True
                    if done or acount >= min_gallop:
                        break
                else:
                    yield from self.move(dest, ~pb, PAIR)
                    dest, pb, nb, bcount, acount = dest - 1, pb - 1, nb - 1, bcount + 1, 0
                    if nb == 1:
                        copy_a = True
                    if copy_a or bcount >= min_gallop:
                        break
            if done or copy_a:
                break
            min_gallop += 1
            while True:
                min_gallop -= min_gallop > 1
                self.min_gallop = min_gallop
                k = yield from self.gallop_right(~pb, False, ba, na, na - 1, GALLOP)
                k = acount = na - k
                for j in range(k):
                    yield from self.move(dest - j, pa - j, GALLOP)
                dest, pa, na = dest - k, pa - k, na - k
                if k and na == 0:
                    done = True
                    break
                yield from self.move(dest, ~pb, GALLOP)
                dest, pb, nb = dest - 1, pb - 1, nb - 1
                if nb == 1:
                    copy_a = True
                    break
                k = yield from self.gallop_left(pa, True, 0, nb, nb - 1, GALLOP)
                k = bcount = nb - k
                for j in range(k):
                    yield from self.move(dest - j, ~(pb - j), GALLOP)
                dest, pb, nb = dest - k, pb - k, nb - k
                if k and nb <= 1:
                    copy_a, done = nb == 1, nb == 0
                    break
                yield from self.move(dest, pa, GALLOP)
                dest, pa, na = dest - 1, pa - 1, na - 1
                if na == 0:
                    done = True
                    break
                if not (acount >= MIN_GALLOP or bcount >= MIN_GALLOP):
                    break
            if done or copy_a:
                break
            min_gallop += 1
            self.min_gallop = min_gallop
        if copy_a:
            for j in range(na):
                yield from self.move(dest - j, pa - j, PAIR)
            yield from self.move(dest - na, ~pb, PAIR)
        else:
            for j in range(nb):
                yield from self.move(dest - (nb - 1) + j, ~j, PAIR)
