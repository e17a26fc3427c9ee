"""What every algorithm is: a generator of steps over the search state.

One step is one expansion, one relaxation, one union or one edge considered. Each step is
``(line, template, args)``: the index of the pseudocode line it came from, and a sentence
(``template.format(*args)``, formatted only when a view asks for it, so replaying is cheap).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from sims.graphs.graph import INF, Graph, Search

Step = tuple[int, str, tuple]


@dataclass(frozen=True)
class Query:
    """What the run is asked: from where, to where, and whether reaching the target ends it."""

    source: int  # -1: the algorithm needs none
    target: int  # -1: none
    stop_at_target: bool = True


class Algorithm:
    """A policy: ``run`` yields the steps of one algorithm; the search state is the mechanism."""

    PARAMS: ClassVar[dict[str, Any]] = {}
    PSEUDOCODE: ClassVar[tuple[str, ...]] = ()
    kind: ClassVar[str] = "path"  # path | order | tree | sets | all_pairs: the shape of its result
    frontier_kind: ClassVar[str] = ""  # queue | stack | heap
    needs_source: ClassVar[bool] = True
    needs_target: ClassVar[bool] = False
    needs_coords: ClassVar[bool] = False

    def run(self, g: Graph, s: Search, q: Query) -> Iterator[Step]:
        raise NotImplementedError


def show(x: Any) -> str:
    """A distance or weight as narration shows it."""
    if isinstance(x, float):
        if x == INF:
            return "∞"
        if x == -INF:
            return "-∞"
        return f"{x:.3g}" if x != int(x) else str(int(x))
    return str(x)


def narrate(step: Step | None) -> str:
    if step is None:
        return ""
    _, template, args = step
    return template.format(*(show(a) for a in args))
