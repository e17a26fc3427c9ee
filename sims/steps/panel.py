"""The stepping panel: one algorithm taking one step every ``1 / speed`` virtual seconds.

The input arrives as one stream event (of the kind the subclass names in ``INPUT``); step k
(1-based) happens at ``t0 + k / speed``, where t0 is the event's time, so play, step
(``next_time``) and seek work as in every topic. The algorithm is a generator, which cannot be
copied: a checkpoint records how many steps were taken, and the copy replays them
(deterministically) the first time it is used. A subclass writes ``start(ev)`` (build the state
from the event and return the algorithm's steps), ``metrics`` and ``view``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from sims.core.panel import Panel
from sims.steps.base import Step, narrate


class StepPanel(Panel):
    INPUT: ClassVar[str] = ""  # the stream event kind that carries the input ("graph", "array")

    def __init__(self, name: str, params: dict, ctx, algo) -> None:
        super().__init__(name, params, ctx)
        if not params["speed"] > 0:
            raise ValueError(f"speed must be > 0 steps per second, got {params['speed']!r}")
        self.algo = algo
        self.speed = params["speed"]
        self.gen: Iterator[Step] | None = None
        self.ev: dict | None = None
        self.t0 = 0.0
        self.steps = 0
        self.done = False
        self.last: Step | None = None  # the latest step
        self._pending = 0  # steps a checkpoint copy still has to replay

    def start(self, ev: dict) -> Iterator[Step]:
        """Build the state from the input event; return the algorithm's steps over it."""
        raise NotImplementedError

    # -- checkpoints --------------------------------------------------------------------------------
    def __deepcopy__(self, memo: dict) -> StepPanel:
        new = type(self)(self.name, self.params, self.ctx, self.algo)
        memo[id(self)] = new
        if self.ev is not None:
            new.ev, new.t0 = self.ev, self.t0
            new._pending = self.steps + self._pending
        return new

    def _ready(self) -> None:
        if self.ev is not None and self.gen is None:
            n = self._pending
            self._pending = 0
            self._start(self.ev)
            for _ in range(n):
                self._step()

    # -- driving ------------------------------------------------------------------------------------
    def _start(self, ev: dict) -> None:
        self.gen = self.start(ev)
        self.steps, self.done, self.last = 0, False, None

    def _step(self) -> None:
        try:
            self.last = next(self.gen)
            self.steps += 1
        except StopIteration:
            self.done = True

    def on_event(self, ev: dict) -> None:
        if ev.get("kind") == self.INPUT:
            self.ev, self.t0 = ev, ev["t"]
            self._pending = 0
            self._start(ev)

    def advance(self, until: float) -> None:
        self._ready()
        while self.gen is not None and not self.done and self.t0 + (self.steps + 1) / self.speed <= until:
            self._step()

    def next_time(self) -> float | None:
        self._ready()
        if self.gen is None or self.done:
            return None
        return self.t0 + (self.steps + 1) / self.speed

    def run_to_end(self, limit: int | None = None) -> bool:
        """Every remaining step at once (``contention trace``), or until ``limit`` steps in all;
        returns whether the algorithm finished."""
        self._ready()
        while self.gen is not None and not self.done and (limit is None or self.steps < limit):
            self._step()
        return self.done

    # -- reading ------------------------------------------------------------------------------------
    def step_view(self) -> dict[str, Any]:
        """The parts of a view every stepping panel shares (``web/static/js/stepframe.js`` draws them)."""
        self._ready()
        a = self.algo
        return {
            "algorithm": a.policy_name,
            "pseudocode": list(a.PSEUDOCODE),
            "line": self.last[0] if self.last else -1,
            "narration": narrate(self.last),
            "steps": self.steps,
            "done": self.done,
        }
