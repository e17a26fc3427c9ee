"""Sorting: ten sorts race over one array, one comparison or write at a time.

The mechanism (``array.py``) is the array, the auxiliary memory and the count table, which count
every comparison and write and own the invariants; each sort (``simple.py``, ``divide.py``,
``distribution.py``, ``timsort.py``) is a generator of steps over it. ``SortPanel``, a
``sims.steps.StepPanel``, takes one step every ``1 / speed`` virtual seconds.
"""

from __future__ import annotations

from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_topic
from sims.sorting import distribution, divide, simple, timsort, workload
from sims.sorting.panel import SortPanel
from sims.sorting.trace import TRACE

__all__ = ["PANEL_PARAMS", "SortPanel", "distribution", "divide", "make_panel", "simple", "timsort", "workload"]

PANEL_PARAMS = {
    "speed": Param(
        float, 50.0, "sort steps (comparisons, writes, tallies) per virtual second", above=0, max=1e7, work=1
    ),
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("sorting", policy)
    algo = cls(**{k: params[k] for k in cls.PARAMS})
    return SortPanel(name, params, ctx, algo)


register_topic(Topic("sorting", make_panel, panel_params=PANEL_PARAMS, trace=TRACE))
