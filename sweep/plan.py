"""Capacity planning: the smallest value of one knob whose confidence bound meets every target.

``--vary defaults.replicas=1:16`` gives the candidates in order; each probe runs N seeds of one
panel. A "<" target is met when the one-sided upper confidence bound of the mean is below it (">"
uses the lower bound). The search bisects, which assumes more of the knob never hurts; the probes
it made are all reported, so a reader can see the assumption hold or not.
A probe whose figures are censored lower bounds (requests that never got a first token) cannot
prove a "<" target: it counts as not met. At the end of a loaded run the last arrivals are always
still waiting, so plan latency targets with ``--drain`` (arrivals stop at the duration and every
request finishes), which leaves nothing censored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sims.core import presets
from sweep import grid, run, stats

_TARGET = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$")


@dataclass(frozen=True)
class Target:
    metric: str
    op: str
    value: float

    @property
    def upper(self) -> bool:
        return self.op in ("<", "<=")

    def met(self, bound: float) -> bool:
        return {"<": bound < self.value, "<=": bound <= self.value, ">": bound > self.value, ">=": bound >= self.value}[
            self.op
        ]

    def margin(self, bound: float) -> float:
        """How far inside the target the bound is (positive = met with room)."""
        return self.value - bound if self.upper else bound - self.value

    def text(self) -> str:
        return f"{self.metric}{self.op}{self.value:g}"


def parse_target(text: str) -> Target:
    m = _TARGET.match(text)
    if not m:
        raise grid.SweepError(f"--target {text!r}: expected METRIC<X, METRIC<=X, METRIC>X or METRIC>=X")
    try:
        value = float(m.group(3))
    except ValueError:
        raise grid.SweepError(f"--target {text!r}: {m.group(3)!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise grid.SweepError(f"--target {text!r}: the threshold must be finite")
    return Target(m.group(1), m.group(2), value)


def plan(
    preset: presets.Preset,
    vary: str,
    targets: list[Target],
    n_seeds: int,
    panel: str,
    execute,
    confidence: float = 0.95,
    drain: bool = False,
) -> dict:
    """``{"answer", "feasible", "margins", "runs"}``; answer None when even the largest value fails."""
    if not targets:
        raise grid.SweepError("give at least one --target METRIC<X")
    if not 0.5 < confidence < 1.0:
        raise grid.SweepError(f"--confidence must lie in (0.5, 1), got {confidence}")
    if not 2 <= n_seeds <= grid.MAX_SEEDS:
        raise grid.SweepError(f"--seeds must be between 2 (for a confidence bound) and {grid.MAX_SEEDS}, got {n_seeds}")
    spec = grid.parse_grid([vary])
    ((key, values),) = spec.items()
    if panel not in preset.panel_names():
        raise grid.SweepError(f"--panel {panel!r}: valid: {', '.join(preset.panel_names())}")
    grid.validate(preset, spec, max_cells=len(values), yes=True)  # each probe is one cell
    probes: dict[int, dict] = {}

    def probe(i: int) -> dict:
        if i not in probes:
            rows = run.run(preset, {key: [values[i]]}, n_seeds, [panel], execute, drain=drain)
            probes[i] = judge(values[i], rows, targets, confidence)
        return probes[i]

    lo, hi = 0, len(values) - 1
    if not probe(hi)["ok"]:
        answer, feasible = None, False
    else:
        while lo < hi:  # the smallest index that meets every target, assuming monotone
            mid = (lo + hi) // 2
            if probe(mid)["ok"]:
                hi = mid
            else:
                lo = mid + 1
        answer, feasible = values[hi], True
    best = probes[hi if feasible else len(values) - 1]
    runs = [probes[i] for i in sorted(probes)]
    return {
        "answer": answer,
        "feasible": feasible,
        "key": key,
        "panel": panel,
        "margins": best["margins"],
        "runs": runs,
    }


def judge(value, rows: list[dict], targets: list[Target], confidence: float) -> dict:
    errors = sorted({r["error"] for r in rows if r["error"]})
    margins, bounds, ok, lower = {}, {}, not errors, {}
    for t in targets:
        vals = [r["metrics"].get(t.metric) for r in rows if not r["error"]]
        if any(v is None for v in vals) and not errors:
            raise grid.SweepError(f"--target {t.text()}: the panel reports no metric {t.metric!r}")
        censored = sum(1 for r in rows if r["metrics"].get(f"{t.metric}_censored"))
        bound = stats.one_sided_bound(vals, confidence, t.upper) if vals else None
        bounds[t.text()] = bound
        margins[t.text()] = None if bound is None else t.margin(bound)
        if bound is None or not t.met(bound) or (censored and t.upper):
            ok = False
        if censored:
            lower[t.text()] = censored  # seeds whose figure is only a lower bound
    out = {"value": value, "ok": ok, "seeds": len(rows), "bounds": bounds, "margins": margins, "errors": errors}
    return out | ({"censored_seeds": lower} if lower else {})
