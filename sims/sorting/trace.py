"""``contention trace sorting``: sort the numbers of a file with one algorithm, to the end.

One number a line: an integer, or a finite decimal (blank lines and ``#`` comments are skipped).
Keys are integers when every line is one, else all become floats. The key range a counting,
radix or bucket sort is given is the file's smallest and largest number. Each algorithm takes at
most its ``trace_max`` numbers (2,000 for the quadratic sorts, 50,000 for the n log n ones and
bucket sort, 100,000 for counting and radix), refused at the first line past it, before anything
is sorted; and a run stops with exit 2 after ``MAX_STEPS`` steps, which only a worst case reaches
(quicksort's first-item pivot on sorted numbers, bucket sort with every key in one bucket).
A variant flag (``--pivot``, ``--variant``, ``--base``, ``--buckets``, ``--cpython``) sets the
parameter of the one algorithm that has it.
"""

from __future__ import annotations

from pathlib import Path

from sims.core.limits import InputError
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, resolve_params
from sims.core.trace import TraceArg, TraceError, TraceSpec, bad_token, lines
from sims.sorting.panel import check_input

MAX_KEY = 10**18  # integers beyond ±this are refused: radix passes grow with their digits
MAX_STEPS = 10_000_000  # a run that needs more (a worst case: quicksort's, bucket sort's) stops with exit 2
VARIANTS = {"pivot": "quick", "variant": "merge", "base": "radix", "buckets": "bucket", "cpython": "timsort"}


def _number(text: str) -> int | float | None:
    try:
        x = int(text)
    except ValueError:
        pass
    else:
        return x if -MAX_KEY <= x <= MAX_KEY else None
    try:
        f = float(text)
    except ValueError:
        return None
    return f if f - f == 0 else None  # rejects inf and nan


def read(path: Path, algo_cls) -> list:
    """The numbers of the file; TraceError names the file and line of a bad one, or of the first
    number past what ``algo_cls`` sorts (``trace_max``)."""
    keys: list = []
    name = algo_cls.policy_name
    for n, text in lines(path):
        if len(keys) >= algo_cls.trace_max:
            raise TraceError(f"{path}:{n}: more than {algo_cls.trace_max} numbers, the most {name} sorts here")
        x = _number(text)
        if x is None:
            raise bad_token(path, n, f"one number (an integer within ±{MAX_KEY:.0e} or a finite decimal)", text)
        if algo_cls.integer_keys and not isinstance(x, int):
            raise TraceError(f"{path}:{n}: {name} sorts integers, got {text[:40]!r}")
        keys.append(x)
    if any(isinstance(k, float) for k in keys):
        keys = [float(k) for k in keys]
    return keys


def replay(algorithm: str, keys: list, variant: dict | None = None) -> dict:
    """Sort ``keys`` with ``algorithm`` to the end; DESIGN.md's result for ``contention trace sorting``."""
    topic = load_topic("sorting")
    cls = get_policy("sorting", algorithm)
    variant = variant or {}
    for flag in variant:
        if VARIANTS[flag] != algorithm:
            raise InputError(f"--{flag} applies to --algorithm {VARIANTS[flag]}, not {algorithm}")
    params = resolve_params(dict(topic.panel_params) | dict(cls.PARAMS), variant, "trace")
    lo, hi = min(keys, default=0), max(keys, default=0)
    check_input(cls, keys, lo, hi)
    ev = {"t": 0.0, "kind": "array", "keys": keys, "lo": lo, "hi": hi}
    panel = topic.make_panel(algorithm, algorithm, params, PanelContext(0, 0.0, [ev], algorithm))
    panel.on_event(ev)
    if not panel.run_to_end(MAX_STEPS):
        raise InputError(
            f"{algorithm} took more than {MAX_STEPS:,} steps on these {len(keys)} numbers and was stopped: "
            "this input is a worst case for it (try another algorithm or a shorter file)"
        )
    panel.check_invariants()
    m = panel.metrics()
    out = {"algorithm": algorithm, "n": len(keys)}
    out.update({k: m[k] for k in ("comparisons", "writes", "swaps", "extra", "stable", "sorted")})
    return out


def _run(algorithm: str, args: dict, path: Path) -> dict:
    cls = get_policy("sorting", algorithm)  # an unknown algorithm is named before the file is read
    variant = {k: v for k, v in args.items() if k in VARIANTS and v is not None}
    keys = read(path, cls)
    return replay(algorithm, keys, variant)


TRACE = TraceSpec(
    help="sort the numbers of a file (one per line) with one algorithm",
    args=(
        TraceArg("--pivot", str, "quick: first | median3 | random", required=False, positive=False),
        TraceArg("--variant", str, "merge: top_down | bottom_up", required=False, positive=False),
        TraceArg("--base", int, "radix: the base (at least 2)", required=False),
        TraceArg("--buckets", int, "bucket: how many (default one per number)", required=False),
        TraceArg("--cpython", str, "timsort: whose list.sort, 3.13 or 3.11", required=False, positive=False),
    ),
    run=_run,
    policy_flag="--algorithm",
)
