"""Graphs: ten algorithms on one graph, each answering its own question.

The mechanism (``graph.py``) is the graph, the frontier and the distance table, which own the
invariants; each algorithm (``search.py``, ``structure.py``, ``unionfind.py``, and ``checks.py``, which
tells what kind a graph is) is a small generator of steps over them. ``GraphPanel``, a
``sims.steps.StepPanel``, takes one step every ``1 / speed`` virtual seconds.
"""

from __future__ import annotations

from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_topic
from sims.graphs import checks, search, structure, unionfind, workload
from sims.graphs.panel import GraphPanel
from sims.graphs.trace import TRACE

__all__ = ["PANEL_PARAMS", "GraphPanel", "checks", "make_panel", "search", "structure", "unionfind", "workload"]

PANEL_PARAMS = {
    "speed": Param(float, 20.0, "algorithm steps per virtual second", above=0, max=1e6, work=1),
    "source": Param(str, "", "the start node; empty: the workload's"),
    "target": Param(str, "", "the goal node; empty: the workload's"),
    "stop_at_target": Param(bool, True, "single-source searches stop once the target is settled"),
    "undirected": Param(bool, False, "read every edge both ways (the graph without its arrows)"),
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("graphs", policy)
    algo = cls(**{k: params[k] for k in cls.PARAMS})
    return GraphPanel(name, params, ctx, algo)


register_topic(Topic("graphs", make_panel, panel_params=PANEL_PARAMS, trace=TRACE))
