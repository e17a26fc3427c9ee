"""Cluster routing: N engine replicas behind a router, from random to llm-d's precise scheduler.

Routers (``routers.py``, ``prefix_routers.py``) are policies registered by name; ``ClusterPanel`` (``panel.py``) runs
one over the shared request stream with N ``sims.engine`` replicas. The panel params set the
replicas (each one ``EngineConfig``); a router's own params are declared on its class.
"""

from __future__ import annotations

from sims.cluster import bloom, prefix_routers, routers  # noqa: F401  (register the policies: bloom imports the others first)
from sims.cluster.panel import ClusterPanel
from sims.core.panel import Panel
from sims.core.registry import Param, Topic, register_topic
from sims.engine.bill import PARAMS as BILL_PARAMS
from sims.engine.config import knobs

PANEL_PARAMS = {
    "replicas": Param(int, 8, "engine replicas behind the router", min=1, max=256, work=1),
    # each replica's engine knobs (sims/engine/config.py), with llm-d's benchmark as the defaults
    **knobs(
        "gpu model tp kv_tokens block_size max_num_seqs max_num_batched_tokens eviction prefix_caching max_model_len".split(),
        gpu="H100-80GB",
        model="Qwen3-32B",
        kv_tokens=307328,  # llm-d's pods
        block_size=64,  # also the hashed block for routing
    ),
    # read by routers that listen to KV events (precise_prefix); shared so a slider can set it
    "event_delay": prefix_routers.PrecisePrefix.PARAMS["event_delay"],
    **BILL_PARAMS,  # the price of a GPU-hour and the SLO of goodput (sims/engine/bill.py)
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    return ClusterPanel(name, params, ctx, policy)


register_topic(Topic("cluster", make_panel, panel_params=PANEL_PARAMS))
