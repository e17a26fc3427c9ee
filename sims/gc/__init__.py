"""Garbage collection: a collector competes with the program for time and memory.

The heap (``heap.py``) owns objects, roots, pointers, free lists and the pause log; each
collector (``collectors/``, one module per family) is a policy over it; ``GCPanel`` replays the
mutator's operations (``workload.py``) and charges collector work to the clock, so pauses delay
the program and MMU (``mmu.py``) follows from the pause intervals.
"""

from __future__ import annotations

from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_topic
from sims.gc import collectors, workload
from sims.gc.heap import Costs
from sims.gc.panel import GCPanel
from sims.gc.trace import TRACE

__all__ = ["PANEL_PARAMS", "GCPanel", "collectors", "make_panel", "workload"]

_C = Costs()
PANEL_PARAMS = {
    "heap": Param(int, 1 << 20, "heap size, bytes (copying uses half of it at a time)", min=64, max=1 << 30),
    "mark_cost": Param(float, _C.mark, "seconds per object marked", min=0.0, max=1.0),
    "copy_cost": Param(float, _C.copy, "seconds per byte copied or slid", min=0.0, max=1.0),
    "sweep_cost": Param(float, _C.sweep, "seconds per object swept or freed by reference counting", min=0.0, max=1.0),
    "pause_cost": Param(float, _C.pause, "fixed seconds of each stop-the-world pause", min=0.0, max=1.0),
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("gc", policy)
    own = {k: params[k] for k in cls.PARAMS}
    return GCPanel(name, params, ctx, lambda heap: cls(heap, **own))


register_topic(Topic("gc", make_panel, panel_params=PANEL_PARAMS, trace=TRACE))
