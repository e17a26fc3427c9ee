"""Queues: who waits, for how long, and who gets served at all when demand outruns servers.

A discipline (``policies.py``) orders the waiting line and may refuse or shed requests;
``QueuePanel`` owns the servers, client timeouts and retries, and the books (Little's law is
measured: ``mean_in_system`` integrates the number in the system over time).
"""

from __future__ import annotations

from sims.core.limits import MAX_DURATION
from sims.core.panel import Panel
from sims.core.registry import Param, State, Topic, get_policy, register_topic
from sims.queues import policies, workload
from sims.queues.panel import QueuePanel
from sims.queues.retry import RETRY_PARAMS
from sims.queues.trace import TRACE

__all__ = ["PANEL_PARAMS", "QueuePanel", "make_panel", "policies", "workload"]

PANEL_PARAMS = {
    "servers": Param(
        int, 1, "servers in all, split evenly between the queues", min=1, max=100_000, state=State(bytes=200)
    ),
    "queues": Param(
        int, 1, "separate waiting lines; an arrival joins one by `split`", min=1, max=100_000, state=State(bytes=200)
    ),
    "split": Param(
        str,
        "random",
        "how an arrival picks a queue: random | round_robin | shortest",
        choices=("random", "round_robin", "shortest"),
    ),
    "speed": Param(float, 1.0, "work per second of each server (service time = size / speed)", above=0.0, max=1e6),
    "timeout": Param(
        float, 0.0, "a client stops waiting after this many seconds; 0 = never", min=0.0, max=MAX_DURATION
    ),
    "retries": Param(int, 0, "attempts a client makes after a timeout or a drop", min=0, max=100),
    **RETRY_PARAMS,
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("queues", policy)
    own = {k: params[k] for k in cls.PARAMS}
    return QueuePanel(name, params, ctx, lambda: cls(**own))


register_topic(Topic("queues", make_panel, panel_params=PANEL_PARAMS, trace=TRACE))
