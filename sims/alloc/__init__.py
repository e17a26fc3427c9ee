"""Allocators over a heap of N bytes: first, next, best and worst fit on an address-ordered
coalescing free list, binary buddy, slab size classes, and fixed pages.

Each policy (``policies.py``) is registered by name; ``AllocPanel`` runs one over the shared
stream of alloc/grow/free events and measures fragmentation. Sizes are bytes.
"""

from __future__ import annotations

from pathlib import Path

from sims.alloc import policies as _policies  # noqa: F401  (registers the policies)
from sims.alloc.panel import AllocPanel
from sims.core.panel import Panel, PanelContext
from sims.core.registry import Param, Topic, get_policy, register_topic
from sims.core.trace import TraceArg, TraceError, TraceSpec, bad_token, built, lines, show

PANEL_PARAMS = {
    "heap": Param(int, 1 << 20, "heap size, bytes", min=1, max=1 << 40),
    "align": Param(
        int, 16, "allocation unit, bytes: sizes round up to a multiple (buddy's smallest block)", min=1, max=1 << 20
    ),
    "reserve": Param(bool, False, "reserve an object's 'max' size at alloc (a contiguous reservation)"),
}


def build_policy(policy: str, params: dict):
    cls = get_policy("alloc", policy)
    extra = {k: params[k] for k in cls.PARAMS if k in params}
    return cls(params["heap"], params["align"], **extra)


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    return AllocPanel(name, params, ctx, build_policy(policy, params))


def _run_trace(policy: str, args: dict, path: Path) -> dict:
    params = {
        "heap": args["heap"],
        "align": args.get("align") or 1,
        "reserve": False,
        "page_size": args.get("page_size") or 4096,
        "slab_size": args.get("slab_size") or 4096,
    }
    ctx = PanelContext(seed=0, duration=0.0, events=[], panel_name=policy)
    panel = AllocPanel(policy, params, ctx, built(lambda: build_policy(policy, params)))
    ever: set[str] = set()
    for n, text in lines(path):
        parts = text.split()
        op = parts[0]
        if op == "a" and len(parts) == 3:
            oid = parts[1]
            try:
                size = int(parts[2]) if len(parts[2]) <= 20 else 0
            except ValueError:
                size = 0
            if size < 1:
                raise bad_token(path, n, "a positive integer size", parts[2])
            if oid in panel.sizes:
                raise TraceError(f"{path}:{n}: id {show(oid)} is already allocated")
            ever.add(oid)
            panel.alloc(oid, size)
        elif op == "f" and len(parts) == 2:
            oid = parts[1]
            if oid in panel.sizes:
                panel.free(oid)
            elif oid not in ever:
                raise TraceError(f"{path}:{n}: free of id {show(oid)}, which was never allocated")
        else:
            raise bad_token(path, n, "'a ID SIZE' or 'f ID'", text)
    m = panel.metrics()
    return {
        "policy": policy,
        "failed": panel.failed_ids,
        "peak_used": panel.peak,
        "external_frag": m["external_frag"],
        "internal_frag": m["internal_frag"],
    }


TRACE = TraceSpec(
    help="replay 'a ID SIZE' / 'f ID' lines through one allocator",
    args=(
        TraceArg("--heap", int, "heap size, bytes"),
        TraceArg("--align", int, "allocation unit, bytes (default 1)", required=False),
        TraceArg("--page-size", int, "paged: bytes per page (default 4096)", required=False),
        TraceArg("--slab-size", int, "slab: bytes per slab (default 4096)", required=False),
    ),
    run=_run_trace,
)

register_topic(Topic("alloc", make_panel, panel_params=PANEL_PARAMS, trace=TRACE))
