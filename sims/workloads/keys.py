"""Key-reference streams for caches and paging: zipf, scan mix, loop, an explicit sequence,
working-set phases. Events: ``{"t", "kind": "ref", "key": int}`` (+ ``"op": "w"`` for writes).
A generator with phases marks each change (``stream.Mark``): its keys iterator yields the mark's
label, a str, just before the first key of the new phase."""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.dists import Zipf
from sims.core.limits import MAX_RATE, show
from sims.core.registry import Param, State, workload
from sims.core.stream import Mark

MAX_KEYS = 1_000_000  # a bounded zipf keeps a CDF of this many floats
MAX_ZIPF_S = 10.0
_RATE = Param(float, 1000.0, "references per virtual second (evenly spaced)", above=0.0, max=MAX_RATE)
_WRITES = Param(float, 0.0, "fraction of references that are writes", min=0.0, max=1.0)


def _emit(keys: Iterator[int | str], params: dict, rng: Random, duration: float) -> Iterator[dict | Mark]:
    """Evenly spaced references to ``keys``; a str among them is a mark's label, at the time of
    the reference that follows it."""
    dt = 1.0 / params["rate"]
    wr = params.get("write_ratio", 0.0)
    i = 0
    for key in keys:
        if isinstance(key, str):
            if (i + 1) * dt <= duration:
                yield Mark((i + 1) * dt, key)
            continue
        i += 1
        t = i * dt
        if t > duration:
            return
        if wr and rng.random() < wr:
            yield {"t": t, "kind": "ref", "key": key, "op": "w"}
        else:
            yield {"t": t, "kind": "ref", "key": key}


@workload(
    "zipf_keys",
    rate=_RATE,
    n=Param(int, 10000, "distinct keys", min=1, max=MAX_KEYS, state=State(bytes=32)),
    s=Param(float, 0.9, "zipf exponent", min=0.0, max=MAX_ZIPF_S),
    write_ratio=_WRITES,
)
def zipf_keys(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Keys 0..n-1 drawn from a bounded zipf (key 0 the hottest)."""
    z = Zipf(params["n"], params["s"])

    def keys() -> Iterator[int]:
        while True:
            yield z.sample(rng) - 1

    return _emit(keys(), params, rng, duration)


@workload(
    "scan_mix",
    rate=_RATE,
    hot_n=Param(int, 80, "hot-set keys (0..hot_n-1)", min=1, max=MAX_KEYS, state=State(bytes=32)),
    hot_s=Param(float, 0.8, "zipf exponent within the hot set", min=0.0, max=MAX_ZIPF_S),
    scan_len=Param(int, 300, "keys per scan, fresh cold keys each time", min=0, max=MAX_KEYS),
    scan_every=Param(int, 1500, "hot references between scans", min=1, max=10**9),
    write_ratio=_WRITES,
)
def scan_mix(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """A zipf hot set interrupted by sequential scans over never-seen cold keys."""
    z = Zipf(params["hot_n"], params["hot_s"])
    base = 1_000_000

    def keys() -> Iterator[int | str]:
        nonlocal base
        while True:
            for _ in range(params["scan_every"]):
                yield z.sample(rng) - 1
            if params["scan_len"]:
                yield "scan starts"
            for k in range(params["scan_len"]):
                yield base + k
            base += params["scan_len"]

    return _emit(keys(), params, rng, duration)


@workload("loop", rate=_RATE, n=Param(int, 101, "loop length", min=1, max=MAX_KEYS), write_ratio=_WRITES)
def loop(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Keys 0, 1, ..., n-1, 0, 1, ... forever."""

    def keys() -> Iterator[int]:
        while True:
            yield from range(params["n"])

    return _emit(keys(), params, rng, duration)


@workload(
    "sequence",
    rate=Param(float, 1.0, "references per virtual second", above=0.0, max=MAX_RATE),
    keys=Param(list, None, "the keys, in order", required=True, max_items=100_000),
    repeat=Param(bool, False, "loop the sequence"),
    write_ratio=_WRITES,
)
def sequence(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """An explicit reference string, e.g. Belady's 1,2,3,4,1,2,5,1,2,3,4,5."""
    seq = params["keys"]
    for k in seq:
        if isinstance(k, bool) or not isinstance(k, int):
            raise ValueError(f"workload.keys: expected integers, got {show(k)}")
    if params["repeat"] and not seq:
        raise ValueError("workload.keys: a repeated sequence needs at least one key")

    def keys() -> Iterator[int]:
        while True:
            yield from seq
            if not params["repeat"]:
                return

    return _emit(keys(), params, rng, duration)


@workload(
    "phases",
    rate=_RATE,
    pages=Param(int, 1000, "address space, pages", min=1, max=MAX_KEYS),
    ws=Param(int, 40, "working-set size per phase (<= pages)", min=1, max=MAX_KEYS, state=State(bytes=32)),
    phase_refs=Param(int, 2000, "references per phase", min=1, max=10**9),
    s=Param(float, 0.6, "zipf exponent inside a working set", min=0.0, max=MAX_ZIPF_S),
    write_ratio=_WRITES,
)
def phases(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Locality: each phase references a fresh random working set of ``ws`` pages."""
    if params["ws"] > params["pages"]:
        raise ValueError(f"workload.ws: expected <= pages ({params['pages']}), got {params['ws']}")
    z = Zipf(params["ws"], params["s"])

    def keys() -> Iterator[int | str]:
        phase = 0
        while True:
            ws = rng.sample(range(params["pages"]), params["ws"])
            phase += 1
            if phase > 1:
                yield f"phase {phase}: new working set"
            for _ in range(params["phase_refs"]):
                yield ws[z.sample(rng) - 1]

    return _emit(keys(), params, rng, duration)
