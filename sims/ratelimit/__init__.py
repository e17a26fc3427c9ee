"""Rate limiting: token bucket, leaky bucket, fixed window, sliding log, sliding counter.

Each limiter (``limiters.py``) is a policy registered by name; ``LimiterPanel`` runs one over the
shared request stream. A policy registered as a ``Panel`` subclass (the token-per-minute family)
builds its own panel.
"""

from __future__ import annotations

from pathlib import Path

from sims.core.limits import MAX_DURATION
from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_topic
from sims.core.trace import InputError, TraceArg, TraceError, TraceSpec, bad_token, lines
from sims.ratelimit import limiters, nginx  # noqa: F401  (nginx registers its limit_req models)
from sims.ratelimit import tpm_policies as _tpm  # noqa: F401  (registers the token-per-minute policies)
from sims.ratelimit.panel import LimiterPanel


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("ratelimit", policy)
    if isinstance(cls, type) and issubclass(cls, Panel):
        return cls(name, params, ctx)
    return LimiterPanel(name, params, ctx, cls(**params))


def _run_trace(policy: str, args: dict, path: Path) -> dict:
    cls = get_policy("ratelimit", policy)
    if not (isinstance(cls, type) and issubclass(cls, limiters.Limiter)):
        raise InputError(f"policy {policy!r} cannot replay a plain arrival trace")
    needed = [k for k in cls.PARAMS if args.get(k) is None]
    if needed:
        raise InputError(f"policy {policy} needs " + " and ".join(f"--{k}" for k in cls.PARAMS))
    limiter = cls(**{k: (int(args[k]) if cls.PARAMS[k].type is int else float(args[k])) for k in cls.PARAMS})
    accepted = []
    last = float("-inf")
    for i, (n, text) in enumerate(lines(path)):
        try:
            t = float(text)
        except ValueError:
            raise bad_token(path, n, "an arrival time in seconds", text) from None
        if t != t or t in (float("inf"), float("-inf")):
            raise bad_token(path, n, "a finite arrival time", text)
        if t < last:
            raise TraceError(f"{path}:{n}: arrival time {t} is before the previous one ({last})")
        last = t
        if limiter.admit(t):
            accepted.append(i)
    return {"policy": policy, "accepted": accepted, "accepted_count": len(accepted)}


TRACE = TraceSpec(
    help="replay arrival times (seconds, one per line, non-decreasing) through one limiter",
    args=(
        TraceArg("--rate", float, "token/leaky bucket: rate per second", required=False),
        TraceArg("--burst", float, "token/leaky bucket: capacity", required=False),
        TraceArg("--limit", int, "window limiters: requests per window", required=False),
        TraceArg("--window", float, "window limiters: window length in seconds", required=False),
    ),
    run=_run_trace,
)

register_topic(
    Topic(
        "ratelimit",
        make_panel,
        panel_params={
            "measure_window": Param(float, 1.0, "window for max_in_any_window, seconds", above=0.0, max=MAX_DURATION)
        },
        trace=TRACE,
    )
)
