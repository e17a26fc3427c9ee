"""Fit the step-time model's per-GPU constants (``sims.hw.step.CALIBRATED``: the GEMMs' and the
attention kernels' achieved fractions of peak FLOP/s and bandwidth, and the host's per-step
overhead) to measured replay steps, and write them into the GPU's table of
``sims/hw/efficiency.toml``, which the simulations read.

The fit minimises the mean squared relative error of ``CostModel.step_time`` (the engine's own
function) over the steps by a coordinate search on a log grid around each constant, narrowing as
it goes (five constants, a few thousand steps; no SciPy). The file is edited as text: only the
``[GPU]`` table is replaced or appended, so the comments and every other table stay as they were.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from sims.engine import cost as _cost
from sims.hw import step as _step

PARAMS = _step.CALIBRATED
_BOUNDS = {
    "gemm_mfu": (0.01, 1.0),
    "gemm_bw": (0.01, 1.0),
    "attn_mfu": (0.01, 1.0),
    "attn_bw": (0.01, 1.0),
    "step_overhead_s": (1e-6, 0.2),
}


@dataclasses.dataclass(frozen=True)
class StepFeatures:
    """The cost model's inputs for one step, plus what the device measured (seconds)."""

    prefill_tokens: int
    prefill_pairs: int
    prefill_kv_read: int
    n_decode: int
    decode_ctx: int
    measured_s: float

    def args(self) -> tuple[int, int, int, int, int]:
        return (self.prefill_tokens, self.prefill_pairs, self.prefill_kv_read, self.n_decode, self.decode_ctx)


def features(seqs: list[tuple[int, int]], measured_s: float) -> StepFeatures:
    """From ``[(new_tokens, context_after), ...]``, as the engine counts them: one new token = a
    decode over the ``context_after - 1`` tokens before it; more = a prefill chunk reading the ``context_after - new`` cached tokens, each new token
    attending to every token at or before it."""
    pt = pp = pkv = nd = dctx = 0
    for new, ctx in seqs:
        if new == 1:
            nd += 1
            dctx += ctx - 1
        elif new > 1:
            cached = ctx - new
            pt += new
            pkv += cached
            pp += new * cached + new * (new + 1) // 2
    return StepFeatures(pt, pp, pkv, nd, dctx, measured_s)


def rel_errors(model: _cost.CostModel, steps: list[StepFeatures]) -> list[float]:
    """(predicted - measured) / measured per step."""
    return [(model.step_time(*s.args()) - s.measured_s) / s.measured_s for s in steps if s.measured_s > 0]


def _loss(model: _cost.CostModel, steps: list[StepFeatures]) -> float:
    errs = rel_errors(model, steps)
    return sum(e * e for e in errs) / max(1, len(errs))


def _clamp(name: str, value: float) -> float:
    lo, hi = _BOUNDS[name]
    return min(hi, max(lo, value))


def values(model: _cost.CostModel) -> dict[str, float]:
    return {k: float(model.consts[k]) for k in PARAMS}


def fit(model: _cost.CostModel, steps: list[StepFeatures], rounds: int = 8) -> tuple[_cost.CostModel, dict]:
    """The calibrated model and a report: constants before/after, mean |relative error| before/after,
    and the same restricted to decode-only steps."""
    steps = [s for s in steps if s.measured_s > 0 and (s.prefill_tokens or s.n_decode)]
    if len(steps) < 3:
        raise ValueError(f"calibration needs at least 3 measured steps, got {len(steps)}")
    best, best_loss = model, _loss(model, steps)
    factor = 2.0
    for _ in range(rounds):
        for name in PARAMS:
            cur = float(best.consts[name])
            for k in (-4, -3, -2, -1, 1, 2, 3, 4):
                cand = best.with_constants(**{name: _clamp(name, cur * factor ** (k / 4))})
                loss = _loss(cand, steps)
                if loss < best_loss:
                    best, best_loss = cand, loss
        factor = factor**0.5
    decode = [s for s in steps if not s.prefill_tokens]

    def mean_abs(m: _cost.CostModel, ss: list[StepFeatures]) -> float | None:
        errs = rel_errors(m, ss)
        return sum(abs(e) for e in errs) / len(errs) if errs else None

    report = {
        "steps": len(steps),
        "decode_steps": len(decode),
        "before": values(model),
        "after": values(best),
        "mean_abs_rel_err_before": mean_abs(model, steps),
        "mean_abs_rel_err_after": mean_abs(best, steps),
        "decode_mean_abs_rel_err_after": mean_abs(best, decode),
    }
    return best, report


def write_profile(
    values: dict[str, float], gpu: str, path: str | Path | None = None, report: dict | None = None
) -> Path:
    """Replace (or append) the ``[GPU]`` table of the efficiency file with ``values`` (and, from a
    fit's ``report``, how many steps it measured and the mean |relative error| after: the figure
    the pages then show); returns the path. Writing to a path other than the simulations' own file
    copies that file first, then edits the copy."""
    src = Path(_step.EFFICIENCY_PATH)
    dest = Path(path) if path else src
    bad = sorted(set(values) - set(PARAMS))
    if bad:
        raise ValueError(f"unknown efficiency constant(s) {', '.join(bad)}; valid: {', '.join(PARAMS)}")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", gpu):
        raise ValueError(f"gpu name {gpu!r}: expected letters, digits, '-' or '_'")
    text = (dest if dest.exists() else src).read_text()
    body = "".join(f"{k} = {float(values[k])!r}\n" for k in PARAMS if k in values)
    if report and report.get("mean_abs_rel_err_after") is not None:
        body += f"calibration_steps = {int(report['steps'])}\n"
        body += f"calibration_error = {float(report['mean_abs_rel_err_after'])!r}\n"
    header = f"[{gpu}]"
    block = f"{header}  # calibrated by `contention gpu calibrate`\n{body}"
    pattern = re.compile(rf"^\[{re.escape(gpu)}\][^\n]*\n(?:(?!\[)[^\n]*\n?)*", re.M)
    if pattern.search(text):
        text = pattern.sub(block + "\n", text, count=1).rstrip("\n") + "\n"
    else:
        text = text.rstrip("\n") + "\n\n" + block
    dest.write_text(text)
    _step.forget(dest)
    return dest


def profile_gpu_name(device_name: str) -> str | None:
    """The sims/hw/gpus.toml GPU whose name appears in the device name ("NVIDIA H200" -> "H200")."""
    flat = device_name.replace(" ", "-")
    exact = [g for g in _cost.gpu_names() if g in flat]
    if exact:
        return max(exact, key=len)
    hits = [g for g in _cost.gpu_names() if g.split("-")[0] in flat]
    return hits[0] if hits else None
