"""Cluster routing: N engine replicas behind a router (random ... llm-d's precise prefix).

Routers (``routers.py``) are policies registered by name; ``ClusterPanel`` (``panel.py``) runs
one over the shared request stream with N ``sims.engine`` replicas.
"""

from __future__ import annotations

from sims.cluster import routers  # noqa: F401  (registers the policies)
from sims.core.registry import Param, Topic, register_topic


def make_panel(policy: str, name: str, params: dict, ctx):
    from sims.cluster.panel import ClusterPanel

    return ClusterPanel(name, params, ctx, policy)


register_topic(Topic("cluster", make_panel, panel_params={"replicas": Param(int, 8, "engine replicas")}))
