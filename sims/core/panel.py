"""The panel interface: one policy's view of the shared stream.

A panel sees every stream event in order through ``on_event``; between events it may run its own
timed work (engine steps, server completions, refills) in ``advance(until)``. It never draws from
the stream's generator; panel-local noise comes from ``ctx.rng(purpose)``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from sims.core import rng as _rng


@dataclass(frozen=True)
class PanelContext:
    """What a panel may know besides its parameters."""

    seed: int
    duration: float
    events: list  # the whole stream: only oracles (OPT, sjf_oracle) may look ahead
    panel_name: str
    preset: Any = None

    def rng(self, purpose: str = "noise") -> random.Random:
        return _rng.derive(self.seed, f"panel:{self.panel_name}:{purpose}")


class Panel:
    """Base class; subclasses set ``topic`` and implement the hooks they need."""

    topic = ""

    def __init__(self, name: str, params: dict[str, Any], ctx: PanelContext) -> None:
        self.name = name
        self.params = params
        self.ctx = ctx

    def on_event(self, ev: dict) -> None:
        """Handle one stream event at time ev["t"] (the panel was advanced to it first)."""

    def advance(self, until: float) -> None:
        """Run internal timed work up to ``until``."""

    def next_time(self) -> float | None:
        """Time of the next internal event, or None; lets ``step()`` stop at engine steps."""
        return None

    def metrics(self) -> dict[str, float]:
        raise NotImplementedError

    def view(self) -> dict[str, Any]:
        return {}

    def check_invariants(self) -> None:
        """Raise AssertionError if the panel's state is inconsistent."""
