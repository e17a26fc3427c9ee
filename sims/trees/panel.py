"""The trees panel: one structure taking the stream's operations, one step at a time.

The operations arrive as one stream event (``kind = "ops"``); ``sims.steps.StepPanel`` takes one
step (a node visited, a page read, a rotation, a split, an operation's outcome) every
``1 / speed`` virtual seconds. The metrics are read from the structure's counters; the view is its
layout (``web/static/js/topics/trees.js`` draws it) with the operation in hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sims.steps import Step, StepPanel
from sims.trees.base import Structure, op_text

METRICS = (
    "ops size height height_bound rotations recolourings visits visits_mean visits_max splits merges borrows "
    "pages_read pages_per_op range_pages found nodes bytes steps done"
).split()


class TreePanel(StepPanel):
    topic = "trees"
    INPUT = "ops"

    def __init__(self, name: str, params: dict, ctx, algo) -> None:
        super().__init__(name, params, ctx, algo)
        self.d: Structure | None = None

    def start(self, ev: dict) -> Iterator[Step]:
        self.d = self.algo.build(ev)
        return self.algo.run(self.d, ev["ops"], ev)

    # -- reading ------------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        self._ready()
        d = self.d
        if d is None:
            return dict.fromkeys(METRICS, 0)
        ops = d.ops
        return {
            "ops": ops,
            "size": d.size,
            "height": d.height(),
            "height_bound": d.height_bound(),
            "rotations": d.rotations,
            "recolourings": d.recolourings,
            "visits": d.visits,
            "visits_mean": d.visits / ops if ops else 0.0,
            "visits_max": d.visits_max,
            "splits": d.splits,
            "merges": d.merges,
            "borrows": d.borrows,
            "pages_read": d.pages_read,
            "pages_per_op": d.pages_read / ops if ops else 0.0,
            "range_pages": d.range_visits / d.ranges if d.ranges and d.PAGED else 0.0,
            "found": d.found,
            "nodes": d.node_count(),
            "bytes": d.bytes_held(),
            "steps": self.steps,
            "done": 1 if self.done else 0,
        }

    def view(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "tree", **self.step_view()}
        d = self.d
        if d is None:
            return out
        out.update(d.layout())
        out.update(
            op=op_text(d.op) if d.op else "",
            size=d.size,
            height=d.height(),
            bound=round(d.height_bound(), 2),
            ops=d.ops,
            visits=d.visits,
            rotations=d.rotations,
            splits=d.splits,
            pages=d.PAGED,
        )
        return out

    def check_invariants(self) -> None:
        """The structure's rules, between operations (halfway through a rebalancing they need not
        hold); the counters always."""
        self._ready()
        d = self.d
        if d is None:
            return
        if d.busy:
            Structure.check_invariants(d)
        else:
            d.check_invariants()
