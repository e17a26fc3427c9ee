"""Trees: nine structures take one stream of operations, one node visited at a time.

Each structure is a mechanism (its nodes, pages or array, which own the invariants and count
every visit, rotation and split) and a policy of generators over it: the binary search trees
(``binary.py``, ``searchtrees.py``, ``redblack.py``), the B-trees (``pages.py``, ``btree.py``,
``bplus.py``), the heap (``heap.py``), the trie (``trie.py``) and the trees of sums (``sums.py``).
``TreePanel``, a ``sims.steps.StepPanel``, takes one step every ``1 / speed`` virtual seconds.
"""

from __future__ import annotations

from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_topic
from sims.trees import bplus, btree, heap, redblack, searchtrees, sums, trie, workload
from sims.trees.panel import TreePanel
from sims.trees.trace import TRACE

__all__ = [
    "PANEL_PARAMS",
    "TreePanel",
    "bplus",
    "btree",
    "heap",
    "make_panel",
    "redblack",
    "searchtrees",
    "sums",
    "trie",
    "workload",
]

PANEL_PARAMS = {
    "speed": Param(
        float, 20.0, "steps (nodes visited, rotations, splits) per virtual second", above=0, max=1e6, work=1
    ),
}


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("trees", policy)
    algo = cls(**{k: params[k] for k in cls.PARAMS})
    return TreePanel(name, params, ctx, algo)


register_topic(Topic("trees", make_panel, panel_params=PANEL_PARAMS, trace=TRACE))
