"""Consistent hashing: which member owns a key, and how many keys move when members change.

Placements (``placement.py``, ``maglev.py``) are policies registered by name; ``HashPanel`` runs one over the
shared key stream and the membership events (``add_node`` / ``remove_node``) in it.
"""

from __future__ import annotations

from sims.core.limits import MAX_DURATION
from sims.core.panel import Panel
from sims.core.registry import Param, State, Topic, get_policy, register_topic
from sims.hashing import maglev, placement
from sims.hashing.panel import HashPanel

__all__ = ["HashPanel", "maglev", "placement"]


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("hashing", policy)
    own = {k: params[k] for k in cls.PARAMS}
    return HashPanel(name, params, ctx, cls(**own))


register_topic(
    Topic(
        "hashing",
        make_panel,
        panel_params={
            "nodes": Param(
                int, 10, "members at the start, named n0, n1, ...", min=1, max=10_000, state=State(bytes=200)
            ),
            "hold": Param(
                float, 0.01, "seconds a request occupies its member (bounded_load's load)", min=0.0, max=MAX_DURATION
            ),
        },
    )
)
