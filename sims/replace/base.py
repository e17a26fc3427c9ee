"""The replacement mechanism: a resident set of at most ``size`` keys (any hashable).

``access(key)`` returns True on a hit; on a miss it admits the key (demand fetch: the key is
resident afterwards), evicting one resident key first when the set is full, and reports each
victim through ``on_evict``. ``serve(events, lo, hi)`` runs a stream slice (``ref`` keys, ``scan``
ranges; other kinds skipped) and returns (references, hits) through ``run(keys)``, the batch loop
that policies override with ``access`` inlined; a property test holds every fast path to one
``access`` per reference.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Iterator

MAX_SCAN = 1_000_000  # keys in one scan event


def scan_keys(ev: dict) -> range:
    """The keys of a ``{"kind": "scan", "start": K, "length": N}`` event: K, K+1, ..., K+N-1.
    The event carries everything needed, so every panel sees the same keys."""
    start, length = ev.get("start"), ev.get("length")
    for name, v in (("start", start), ("length", length)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"scan event at t={ev.get('t')}: field {name!r} must be an integer, got {v!r}")
    if not 0 <= length <= MAX_SCAN:
        raise ValueError(f"scan event at t={ev.get('t')}: length must be in [0, {MAX_SCAN}], got {length}")
    return range(start, start + length)


def getrandbits_of(rng: random.Random) -> Callable[[int], int] | None:
    """``rng.getrandbits`` where ``rng.randrange(n)`` is exactly ``r = getrandbits(k)`` until
    ``r < n`` (k = n.bit_length(): CPython's ``Random._randbelow_with_getrandbits``), so a batch
    loop can draw the same numbers inline; None for any other generator (call its randrange)."""
    cls = type(rng)
    if cls is random.Random and cls._randbelow is cls._randbelow_with_getrandbits:  # type: ignore[attr-defined]
        return rng.getrandbits
    return None


def random_run(where: dict, slots: list, size: int, on_evict, rng: random.Random, keys: Iterable[Hashable]) -> int:
    """Random replacement's ``access`` inlined over ``keys`` (cache and paging alike): ``where``
    maps a resident key to its slot in ``slots``; a miss on a full cache replaces the slot
    ``rng.randrange(len(slots))`` names, drawn inline where ``getrandbits_of`` allows. The hits."""
    bits, draw, k = getrandbits_of(rng), rng.randrange, size.bit_length()
    hits = 0
    for key in keys:
        if key in where:
            hits += 1
            continue
        n = len(slots)
        if n >= size:
            if bits is None:
                i = draw(n)
            else:  # rng.randrange(n), n == size
                i = bits(k)
                while i >= n:
                    i = bits(k)
            victim = slots[i]
            del where[victim]
            slots[i] = key
            if on_evict is not None:
                on_evict(victim)
        else:
            i = n
            slots.append(key)
        where[key] = i
    return hits


def references(events: list[dict]) -> Iterator[Hashable]:
    """Every key the stream references, in order (scans expanded): what OPT looks ahead over."""
    for ev in events:
        kind = ev["kind"]
        if kind == "ref":
            yield ev["key"]
        elif kind == "scan":
            yield from scan_keys(ev)


class Replacement:
    """Base class: the capacity, the eviction hook and the generic stream loop. A policy keeps
    its resident keys in the structure its decision needs and asserts it in ``check_invariants``."""

    policy_name = ""
    size_name = "size"  # how errors name the capacity ("cache size", "frames")

    def __init__(self, size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"{self.size_name} must be an integer >= 1, got {size!r}")
        self.size = size
        self.on_evict: Callable[[Hashable], None] | None = None  # called with each victim

    def access(self, key: Hashable) -> bool:
        raise NotImplementedError

    def run(self, keys: Iterable[Hashable]) -> int:
        """Access each of ``keys`` in order and return the hits: the loop a trace replay and
        ``serve`` run. Policies override it with ``access`` inlined (one record, no call per key);
        tests/test_replace_run.py holds every override to one ``access`` per key."""
        access = self.access
        hits = 0
        for key in keys:
            if access(key):
                hits += 1
        return hits

    def serve(self, events: list[dict], lo: int, hi: int) -> tuple[int, int]:
        """Serve the references in events[lo:hi] and return (references, hits): the ``ref`` keys
        gathered in runs between scans, each run through ``run``."""
        if isinstance(events, list):
            part: Iterable[dict] = events[lo:hi]
            keys = [ev["key"] for ev in part if ev["kind"] == "ref"]
            if len(keys) == hi - lo or not any(ev["kind"] == "scan" for ev in part):
                return len(keys), self.run(keys)
        else:  # a sequence that builds each event on demand (paging's trace): read each as it comes
            part = (events[k] for k in range(lo, hi))
        run = self.run
        hits = requests = 0
        keys = []
        for ev in part:
            kind = ev["kind"]
            if kind == "ref":
                keys.append(ev["key"])
            elif kind == "scan":
                scan = scan_keys(ev)
                hits += run(keys) + run(scan)
                requests += len(keys) + len(scan)
                keys = []
        return requests + len(keys), hits + run(keys)

    def resident(self) -> list[Hashable]:
        """The resident keys, the next victim first where the policy has one."""
        raise NotImplementedError

    def __contains__(self, key: Hashable) -> bool:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def explain(self, d, other=None) -> str:
        """One sentence on decision ``d`` (``sims.replace.why``), right after it: every policy says its own."""
        raise NotImplementedError(f"{type(self).__name__} does not explain its decisions")

    def _evicted(self, key: Hashable) -> None:
        if self.on_evict is not None:
            self.on_evict(key)

    def check_invariants(self) -> None:
        assert 0 <= len(self) <= self.size, (self.policy_name, len(self), self.size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={self.size}, resident={len(self)})"
