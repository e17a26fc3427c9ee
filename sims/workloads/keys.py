"""Key-reference streams for caches and paging: zipf, scan mix, loop, an explicit sequence,
working-set phases. Events: ``{"t", "kind": "ref", "key": int}`` (+ ``"op": "w"`` for writes)."""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.dists import Zipf
from sims.core.registry import Param, workload

_RATE = Param(float, 1000.0, "references per virtual second (evenly spaced)")
_WRITES = Param(float, 0.0, "fraction of references that are writes")


def _emit(keys: Iterator[int], params: dict, rng: Random, duration: float) -> Iterator[dict]:
    dt = 1.0 / params["rate"]
    wr = params.get("write_ratio", 0.0)
    i = 0
    for key in keys:
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
    n=Param(int, 10000, "distinct keys"),
    s=Param(float, 0.9, "zipf exponent"),
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
    hot_n=Param(int, 80, "hot-set keys (0..hot_n-1)"),
    hot_s=Param(float, 0.8, "zipf exponent within the hot set"),
    scan_len=Param(int, 300, "keys per scan, fresh cold keys each time"),
    scan_every=Param(int, 1500, "hot references between scans"),
    write_ratio=_WRITES,
)
def scan_mix(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """A zipf hot set interrupted by sequential scans over never-seen cold keys."""
    z = Zipf(params["hot_n"], params["hot_s"])
    base = 1_000_000

    def keys() -> Iterator[int]:
        nonlocal base
        while True:
            for _ in range(params["scan_every"]):
                yield z.sample(rng) - 1
            for k in range(params["scan_len"]):
                yield base + k
            base += params["scan_len"]

    return _emit(keys(), params, rng, duration)


@workload("loop", rate=_RATE, n=Param(int, 101, "loop length"), write_ratio=_WRITES)
def loop(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Keys 0, 1, ..., n-1, 0, 1, ... forever."""

    def keys() -> Iterator[int]:
        while True:
            yield from range(params["n"])

    return _emit(keys(), params, rng, duration)


@workload(
    "sequence",
    rate=Param(float, 1.0, "references per virtual second"),
    keys=Param(list, None, "the keys, in order", required=True),
    repeat=Param(bool, False, "loop the sequence"),
    write_ratio=_WRITES,
)
def sequence(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """An explicit reference string, e.g. Belady's 1,2,3,4,1,2,5,1,2,3,4,5."""
    seq = params["keys"]
    for k in seq:
        if isinstance(k, bool) or not isinstance(k, int):
            raise ValueError(f"workload.keys: expected integers, got {k!r}")

    def keys() -> Iterator[int]:
        while True:
            yield from seq
            if not params["repeat"]:
                return

    return _emit(keys(), params, rng, duration)


@workload(
    "phases",
    rate=_RATE,
    pages=Param(int, 1000, "address space, pages"),
    ws=Param(int, 40, "working-set size per phase"),
    phase_refs=Param(int, 2000, "references per phase"),
    s=Param(float, 0.6, "zipf exponent inside a working set"),
    write_ratio=_WRITES,
)
def phases(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Locality: each phase references a fresh random working set of ``ws`` pages."""
    z = Zipf(params["ws"], params["s"])

    def keys() -> Iterator[int]:
        while True:
            ws = rng.sample(range(params["pages"]), params["ws"])
            for _ in range(params["phase_refs"]):
                yield ws[z.sample(rng) - 1]

    return _emit(keys(), params, rng, duration)
