"""Load balancing: which server gets the next request, given speeds, queues and stale news.

Policies (``policies.py``, ``variants.py``) are registered by name and only pick a server; ``BalancePanel``
owns the servers, their FIFO queues and the completion heap. Scheduled events kill, revive or
slow a server.
"""

from __future__ import annotations

from sims.balance import policies, variants
from sims.balance.panel import BalancePanel
from sims.core.limits import MAX_DURATION
from sims.core.panel import Panel
from sims.core.registry import Param, State, Topic, get_policy, register_topic

__all__ = ["BalancePanel", "policies", "variants"]


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("balance", policy)
    own = {k: params[k] for k in cls.PARAMS}
    speeds = [float(s) for s in params["speeds"]]
    return BalancePanel(name, params, ctx, cls(speeds, ctx.rng("route"), **own))


register_topic(
    Topic(
        "balance",
        make_panel,
        panel_params={
            "speeds": Param(
                list, [1.0] * 8, "one entry per server: work units per second", max_items=10_000, state=State(bytes=300)
            ),
            "stale": Param(
                float,
                0.0,
                "seconds between load reports to the balancer; 0 = live (ewma counts its own requests: always live)",
                min=0.0,
                max=MAX_DURATION,
                work=-1,
            ),
        },
    )
)
