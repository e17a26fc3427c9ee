"""What every graph algorithm is: a stepping algorithm (``sims.steps``) over the search state.

One step is one expansion, one relaxation, one union or one edge considered. ``run(g, s, q)``
yields ``(line, template, args)`` steps; ``show`` and ``narrate`` come from ``sims.steps``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from sims.graphs.graph import Graph, Search
from sims.steps import Step, StepAlgorithm

__all__ = ["Algorithm", "Query", "Step"]


@dataclass(frozen=True)
class Query:
    """What the run is asked: from where, to where, and whether reaching the target ends it."""

    source: int  # -1: the algorithm needs none
    target: int  # -1: none
    stop_at_target: bool = True


class Algorithm(StepAlgorithm):
    """A policy: ``run`` yields the steps of one algorithm; the search state is the mechanism."""

    kind: ClassVar[str] = "path"  # path | order | tree | sets | all_pairs | sides | pairs: its result's shape
    frontier_kind: ClassVar[str] = ""  # queue | stack | heap
    needs_source: ClassVar[bool] = True
    needs_target: ClassVar[bool] = False
    needs_coords: ClassVar[bool] = False

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        raise NotImplementedError
