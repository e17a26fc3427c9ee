"""The sorting panel: one sort stepping over its own copy of the stream's array.

The array arrives as one stream event (``kind = "array"``); ``sims.steps.StepPanel`` takes one
step (a comparison, an element write or a count-table update) every ``1 / speed`` virtual
seconds. ``sorted`` and ``stable`` are measured once the sort is done: 1 when the array is the
input in key order, and when equal keys also kept their input order (0 before the end).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sims.core.limits import InputError
from sims.sorting.array import SortState
from sims.sorting.distribution import MAX_TABLE
from sims.steps import Step, StepPanel

MAX_DRAWN = 2000  # bars drawn at most: a longer array is drawn one bar per stride items
METRICS = "comparisons writes swaps extra stable sorted passes runs depth tallies steps done".split()


def check_input(algo, keys: list, lo: Any, hi: Any) -> None:
    """InputError when ``algo`` cannot sort these keys (integers only, or a table too large)."""
    if algo.integer_keys:
        bad = next((k for k in keys if not isinstance(k, int)), None)
        if bad is not None:
            raise InputError(f"{algo.policy_name} sorts integer keys, got {bad!r}")
        if keys and algo.key_table and hi - lo + 1 > MAX_TABLE:
            raise InputError(
                f"{algo.policy_name} needs a table of hi − lo + 1 = {hi - lo + 1} slots for keys {lo} … {hi}; "
                f"at most {MAX_TABLE}"
            )


class SortPanel(StepPanel):
    topic = "sorting"
    INPUT = "array"

    def __init__(self, name: str, params: dict, ctx, algo) -> None:
        super().__init__(name, params, ctx, algo)
        self.s: SortState | None = None
        self._result: tuple[int, int] | None = None  # (sorted, stable), once done

    def start(self, ev: dict) -> Iterator[Step]:
        keys = ev["keys"]
        lo, hi = ev.get("lo", min(keys, default=0)), ev.get("hi", max(keys, default=0))
        check_input(self.algo, keys, lo, hi)
        self.s = SortState(keys, lo, hi)
        self._result = None
        return self.algo.run(self.s, self.ctx.rng("pivot"))

    # -- reading ------------------------------------------------------------------------------------
    def result(self) -> tuple[int, int]:
        """(sorted, stable): both 0 until the sort is done."""
        if not self.done or self.s is None:
            return 0, 0
        if self._result is None:
            self._result = (int(self.s.is_sorted()), int(self.s.is_stable()))
        return self._result

    def metrics(self) -> dict[str, float]:
        self._ready()
        s = self.s
        if s is None:
            return dict.fromkeys(METRICS, 0)
        ok, stable = self.result()
        return {
            "comparisons": s.comparisons,
            "writes": s.writes,
            "swaps": s.swaps,
            "extra": s.extra,
            "stable": stable,
            "sorted": ok,
            "passes": s.passes,
            "runs": s.runs,
            "depth": s.depth,
            "tallies": s.tallies,
            "steps": self.steps,
            "done": 1 if self.done else 0,
        }

    def view(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "bars", **self.step_view()}
        s = self.s
        if s is None:
            return out
        stride = -(-s.n // MAX_DRAWN) or 1
        keys = s.keys
        out.update(
            n=s.n,
            stride=stride,
            keys=[x[0] for x in s.a[::stride]],
            low=min(keys, default=0),
            high=max(keys, default=0),
            aux=[None if x is None else x[0] for x in s.aux[::stride]] if any(s.aux) else [],
            aux_at=s.aux_at // stride,
            cuts=[c // stride for c in s.cuts],
            counts=s.counts[:MAX_DRAWN],
            held=None if s.held is None else s.held[0],
            cmp=list(s.cmp),
            wrote=s.wrote,
            counted=s.counted,
            span=list(s.span),
            comparisons=s.comparisons,
            writes=s.writes,
            sorted=self.result()[0],
        )
        return out

    def check_invariants(self) -> None:
        self._ready()
        s = self.s
        if s is None:
            return
        s.check_invariants()
        assert self.steps == s.comparisons + s.writes + s.tallies, "a step that is no comparison, write or tally"
