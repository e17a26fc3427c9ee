"""Circuit breakers: clients call a backend that degrades, through a breaker that stops calling it.

The mechanism is the state machine (``machine.py``: closed, open, half-open) over a window of
outcomes (``windows.py``); each policy (``policies.py``) only decides when the window says trip,
how long to stay open and what the trial calls say. ``BreakerPanel`` runs the clients, their
retries (the queues topic's retry model) and the backend (``backend.py``), whose health the
stream's events set (``workload.py``).
"""

from __future__ import annotations

from sims.breakers import policies, workload
from sims.breakers.panel import BreakerPanel
from sims.core.limits import MAX_DURATION
from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_topic
from sims.queues.retry import RETRY_PARAMS

__all__ = ["PANEL_PARAMS", "BreakerPanel", "make_panel", "policies", "workload"]

PANEL_PARAMS = {
    "timeout": Param(
        float, 0.0, "a client stops waiting after this many seconds (a failure); 0 = never", min=0.0, max=MAX_DURATION
    ),
    "retries": Param(int, 0, "attempts a client makes after a failure (not after a refusal)", min=0, max=100),
    **RETRY_PARAMS,
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("breakers", policy)
    own = {k: params[k] for k in cls.PARAMS}
    return BreakerPanel(name, params, ctx, cls(**own))


register_topic(Topic("breakers", make_panel, panel_params=PANEL_PARAMS))
