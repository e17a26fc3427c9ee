"""What every stepping algorithm is: a generator of steps over its topic's state.

Each step is ``(line, template, args)``: the index of the pseudocode line it came from, and a
sentence (``template.format(*args)``, formatted only when a view asks for it, so replaying is cheap).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

Step = tuple[int, str, tuple]

INF = float("inf")


class StepAlgorithm:
    """A policy: ``run`` yields the steps of one algorithm; the state it mutates is the mechanism.
    ``PARAMS`` are its own panel parameters (a variant: a pivot rule, a radix base)."""

    PARAMS: ClassVar[dict[str, Any]] = {}
    PSEUDOCODE: ClassVar[tuple[str, ...]] = ()

    def run(self, *state: Any) -> Iterator[Step]:
        raise NotImplementedError


def show(x: Any) -> str:
    """A number as narration shows it: ∞ for infinities, whole floats without ``.0``, others to 3
    significant digits."""
    if isinstance(x, float):
        if x == INF:
            return "∞"
        if x == -INF:
            return "-∞"
        return f"{x:.3g}" if x != int(x) else str(int(x))
    return str(x)


def narrate(step: Step | None) -> str:
    """The step's sentence ("" before the first step)."""
    if step is None:
        return ""
    _, template, args = step
    return template.format(*(show(a) for a in args))
