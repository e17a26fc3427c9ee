"""Cluster routing: N engine replicas behind a router, from random to llm-d's precise scheduler.

Routers (``routers.py``) are policies registered by name; ``ClusterPanel`` (``panel.py``) runs
one over the shared request stream with N ``sims.engine`` replicas. The panel params set the
replicas (each one ``EngineConfig``); a router's own params are declared on its class.
"""

from __future__ import annotations

from sims.cluster import routers  # noqa: F401  (registers the policies)
from sims.cluster.panel import ClusterPanel
from sims.core.panel import Panel
from sims.core.registry import Param, Topic, register_topic

PANEL_PARAMS = {
    "replicas": Param(int, 8, "engine replicas behind the router"),
    "gpu": Param(str, "H100-80GB", "GPU profile of each replica (sims/engine/profiles.toml)"),
    "model": Param(str, "Qwen3-32B", "model profile; its tensor parallelism unless tp is set"),
    "tp": Param(int, 0, "tensor-parallel GPUs per replica; 0 = the model profile's"),
    "kv_tokens": Param(int, 307328, "KV token slots per replica (llm-d's pods: 307,328)"),
    "block_size": Param(int, 64, "tokens per KV block, and per hashed block for routing"),
    "max_num_seqs": Param(int, 256, "sequences per engine step"),
    "max_num_batched_tokens": Param(int, 8192, "token budget per engine step"),
    "eviction": Param(str, "lru", "prefix-cache eviction in each replica: lru | cost_aware"),
    "prefix_caching": Param(bool, True, "replicas share hashed full blocks"),
    "max_model_len": Param(int, 0, "longest prompt + output a replica accepts; 0 = the model's"),
    # read by routers that listen to KV events (precise_prefix); shared so a slider can set it
    "event_delay": routers.PrecisePrefix.PARAMS["event_delay"],
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    return ClusterPanel(name, params, ctx, policy)


register_topic(Topic("cluster", make_panel, panel_params=PANEL_PARAMS))
