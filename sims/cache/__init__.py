"""Cache eviction and cache write policies (topic ``cache``).

Eviction policies (``classic``, ``simple``, ``arc``, ``lirs``, ``probation``, ``opt``) subclass ``CachePolicy``
and run in a ``CachePanel``; write policies (``writes``) run in a ``WritePanel`` over an eviction
policy named by their ``evict`` parameter. ``contention trace cache`` replays a key trace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sims.cache import arc, classic, lirs, opt, probation, redis, simple  # noqa: F401  (registers the policies)
from sims.cache.base import CachePolicy
from sims.cache.panel import CachePanel
from sims.cache.writes import WritePanel, WritePolicy
from sims.core.panel import Panel
from sims.core.registry import Param, State, Topic, get_policy, policies, register_topic
from sims.core.trace import InputError, TraceArg, TraceSpec, lines
from sims.replace import Lookahead
from sims.replace import references as references  # the stream's reference string, for OPT
from sims.replace.edit import ReplacementEdits


def eviction_policies() -> list[str]:
    """Names of the registered eviction policies (OPT included), sorted."""
    return sorted(n for n, c in policies("cache").items() if isinstance(c, type) and issubclass(c, CachePolicy))


def build_policy(name: str, size: int, params: dict[str, Any] | None = None, future: Any = ()) -> CachePolicy:
    """An eviction policy by name; OPT gets ``future`` (the reference string it will see, or a
    ``sims.replace.Lookahead`` over it)."""
    cls = get_policy("cache", name)
    if not (isinstance(cls, type) and issubclass(cls, CachePolicy)):
        raise InputError(f"{name!r} is a write policy, not an eviction policy; valid: {', '.join(eviction_policies())}")
    extra = {k: v for k, v in (params or {}).items() if k in cls.PARAMS}
    if cls is opt.OPT:
        extra["ahead"] = future
    return cls(size, **extra)


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("cache", policy)
    if isinstance(cls, type) and issubclass(cls, WritePolicy):
        return WritePanel(name, params, ctx, cls)
    future = Lookahead.of_events(ctx.events) if cls is opt.OPT else ()
    cache = build_policy(policy, params["size"], params, future)
    if hasattr(cache, "use_rng"):  # a sampling policy draws from the panel's own generator
        cache.use_rng(ctx.rng("evict"))
    return CachePanel(name, params, ctx, cache)


def _run_trace(policy: str, args: dict, path: Path) -> dict:
    size = args["size"]
    if size is None or size < 1:
        raise InputError(f"--size must be an integer >= 1, got {size!r}")
    seen: dict[str, str] = {}  # one string object per distinct key: 5M lines of 10k keys hold 10k strings
    keys = [seen.setdefault(text, text) for _, text in lines(path)]
    cache = build_policy(policy, size, future=keys)
    hits = cache.run(keys)  # each policy's batch loop: access inlined, one call for the whole trace
    return {"policy": policy, "hits": hits, "misses": len(keys) - hits, "hit_ratio": hits / len(keys) if keys else 0.0}


TRACE = TraceSpec(
    help="replay a key trace (one key per line, any string) through one eviction policy",
    args=(TraceArg("--size", int, "cache capacity, in objects"),),
    run=_run_trace,
)

register_topic(
    Topic(
        "cache",
        make_panel,
        panel_params={
            "size": Param(int, 100, "cache capacity, in objects", min=1, max=1 << 22, state=State(bytes=16, fill=150))
        },
        trace=TRACE,
        edit=ReplacementEdits(not_editable=("opt",)),  # OPT's look-ahead is wired by this topic only
    )
)
