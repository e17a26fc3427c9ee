"""Page-replacement policies: FIFO, LRU, CLOCK, LFU and OPT from ``sims.replace`` (written once,
shared with the cache topic), plus random eviction. Each owns its page table (the resident set,
at most ``frames`` pages) in the structure its decision needs.

Interface (``sims.replace.Replacement``): ``access(page) -> hit`` for one reference,
``serve(events, lo, hi) -> (refs, hits)`` for the tight loop over a stream slice, ``resident()``
(the next victim first where the policy has one), and ``check_invariants()``; paging adds
``state()`` for the frames view. A policy is built as ``cls(frames, events, rng)``.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable

from sims import replace
from sims.core.diverge import Decision
from sims.core.registry import register_policy
from sims.replace import why
from sims.replace.base import Replacement, random_run, scan_keys
from sims.replace.opt import Lookahead

scan_pages = scan_keys  # the pages a "scan" event touches (the same event the cache topic uses)


class PagingPolicy(Replacement):
    """The paging face of a replacement policy: built from the stream and the panel's generator
    (only OPT reads the one, only random the other), sized in frames, with a ``state()``."""

    size_name = "frames"

    def __init__(self, frames: int, events: list | None = None, rng: random.Random | None = None, **_) -> None:
        super().__init__(frames)

    def wrote(self, key: Hashable) -> None:
        """The reference to ``key`` just served was a write (NRU's M bit); most policies ignore it."""

    @property
    def frames(self) -> int:
        return self.size

    def state(self) -> dict:
        return {}

    def check_invariants(self) -> None:
        super().check_invariants()
        res = self.resident()
        assert len(res) == len(self) <= self.frames, (len(res), self.frames)
        assert len(set(res)) == len(res), "a page is resident twice"


@register_policy("paging", "fifo")
class Fifo(PagingPolicy, replace.FIFO):
    __doc__ = replace.FIFO.__doc__


@register_policy("paging", "lru")
class Lru(PagingPolicy, replace.LRU):
    __doc__ = replace.LRU.__doc__


@register_policy("paging", "clock")
class Clock(PagingPolicy, replace.Clock):
    __doc__ = replace.Clock.__doc__

    def state(self) -> dict:
        return {"hand": self.hand, "ring": list(self.keys), "bits": list(self.ref)}


@register_policy("paging", "lfu")
class Lfu(PagingPolicy, replace.LFU):
    __doc__ = replace.LFU.__doc__

    def state(self) -> dict:
        return {"counts": [[p, self.freq[p]] for p in self.resident()]}


@register_policy("paging", "opt")
class Opt(PagingPolicy, replace.OPT):
    __doc__ = replace.OPT.__doc__

    def __init__(self, frames: int, events: list | None = None, rng: random.Random | None = None) -> None:
        replace.OPT.__init__(self, frames, Lookahead.of_events(events or []))

    def state(self) -> dict:
        never = self.ahead.never
        return {"next_use": [[p, -1 if v >= never else v] for p, v in sorted(self.next_use.items())]}


@register_policy("paging", "random")
class RandomEvict(PagingPolicy):
    """Evict a resident page chosen uniformly by the panel's own generator."""

    def __init__(self, frames: int, events: list | None = None, rng: random.Random | None = None) -> None:
        super().__init__(frames)
        if rng is None:
            raise ValueError("random eviction needs the panel's generator")
        self.rng = rng
        self.pages: list[Hashable] = []  # frame order
        self.index: dict[Hashable, int] = {}  # page -> position in ``pages``

    def access(self, key: Hashable) -> bool:
        index, pages = self.index, self.pages
        if key in index:
            return True
        if len(pages) >= self.frames:
            i = self.rng.randrange(len(pages))
            victim = pages[i]
            del index[victim]
            pages[i] = key
            self._evicted(victim)
        else:
            i = len(pages)
            pages.append(key)
        index[key] = i
        return False

    def run(self, keys: Iterable[Hashable]) -> int:
        """``access`` inlined over ``keys`` (``sims.replace.base.random_run``)."""
        return random_run(self.index, self.pages, self.size, self.on_evict, self.rng, keys)

    def explain(self, d: Decision, other: Decision | None = None) -> str:
        return why.say(
            self, d, f"the panel's generator drew its frame uniformly from all {self.frames} (last used at {{last}})"
        )

    def resident(self) -> list[Hashable]:
        return list(self.pages)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.index

    def __len__(self) -> int:
        return len(self.pages)

    def check_invariants(self) -> None:
        super().check_invariants()
        for page, i in self.index.items():
            assert self.pages[i] == page
