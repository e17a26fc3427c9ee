"""Fit the engine cost model's efficiency constants (prefill_mfu, mfu_half_tokens, decode_bw_eff,
step_overhead_s) to measured replay steps, and write them into the profiles file the simulations read.

The fit minimises the mean squared relative error of ``CostModel.step_time`` over the steps: a
weighted linear least-squares solve once each step's bound (compute or memory) is decided, then a
coordinate polish on the exact loss (four parameters, a few thousand steps; no SciPy).
The file is edited as text: only the ``[efficiency.GPU]`` table is replaced or appended, so the
comments and every other table stay as they were.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from sims.engine import cost as _cost

PARAMS = ("prefill_mfu", "mfu_half_tokens", "decode_bw_eff", "step_overhead_s")
_BOUNDS = {
    "prefill_mfu": (0.01, 1.0),
    "mfu_half_tokens": (0.0, 16384.0),
    "decode_bw_eff": (0.01, 1.0),
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


def _parts(model: _cost.CostModel, s: StepFeatures) -> tuple[float, float]:
    """(compute seconds at prefill_mfu = 1, memory seconds at decode_bw_eff = 1), read off the
    engine's own ``step_time`` by making the other side free (so its formula is not copied here)."""
    huge = 1e30
    compute = dataclasses.replace(model, prefill_mfu=1.0, decode_bw_eff=huge, step_overhead_s=0.0)
    memory = dataclasses.replace(model, prefill_mfu=huge, decode_bw_eff=1.0, step_overhead_s=0.0)
    return compute.step_time(*s.args()), memory.step_time(*s.args())


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None when singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[piv][c]) < 1e-300:
            return None
        m[c], m[piv] = m[piv], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def _clamp(name: str, value: float) -> float:
    lo, hi = _BOUNDS[name]
    return min(hi, max(lo, value))


def _linear_fit(model: _cost.CostModel, steps: list[StepFeatures], iters: int = 20) -> _cost.CostModel:
    """For the model's ``mfu_half_tokens``: once each step's bound (compute or memory) is decided,
    time is linear in (1/mfu, 1/eff, overhead); weighted least squares on relative error, re-deciding
    the bounds until they settle."""
    parts = [_parts(model, s) for s in steps]
    ys = [s.measured_s for s in steps]
    mfu, eff, over = model.prefill_mfu, model.decode_bw_eff, model.step_overhead_s
    sides = None
    for _ in range(iters):
        new_sides = [c / mfu >= m / eff for c, m in parts]
        if new_sides == sides:
            break
        sides = new_sides
        rows = [[c if comp else 0.0, 0.0 if comp else m, 1.0] for (c, m), comp in zip(parts, sides)]
        active = [j for j in range(3) if any(r[j] for r in rows)]
        ata = [[sum(r[i] * r[j] / y / y for r, y in zip(rows, ys)) for j in active] for i in active]
        aty = [sum(r[i] / y for r, y in zip(rows, ys)) for i in active]
        sol = _solve(ata, aty)
        if sol is None:
            break
        vals = dict(zip(active, sol))
        if vals.get(0, 0.0) > 0:
            mfu = _clamp("prefill_mfu", 1.0 / vals[0])
        if vals.get(1, 0.0) > 0:
            eff = _clamp("decode_bw_eff", 1.0 / vals[1])
        if 2 in vals:
            over = _clamp("step_overhead_s", vals[2])
    return dataclasses.replace(model, prefill_mfu=mfu, decode_bw_eff=eff, step_overhead_s=over)


def _best_linear(model: _cost.CostModel, steps: list[StepFeatures]) -> _cost.CostModel:
    """The linear fit at the best ``mfu_half_tokens`` of a log grid, refined around the winner."""

    def at(h: float) -> tuple[float, _cost.CostModel]:
        m = _linear_fit(dataclasses.replace(model, mfu_half_tokens=_clamp("mfu_half_tokens", h)), steps)
        return _loss(m, steps), m

    tried = [at(h) for h in [0.0] + [2.0**k for k in range(15)]]
    best_loss, best = min(tried, key=lambda lm: lm[0])
    step = 2.0
    for _ in range(6):
        h = best.mfu_half_tokens
        if h > 0:
            for cand in (at(h * step), at(h / step)):
                if cand[0] < best_loss:
                    best_loss, best = cand
        step = step**0.5
    return best


def fit(model: _cost.CostModel, steps: list[StepFeatures], rounds: int = 6) -> tuple[_cost.CostModel, dict]:
    """The calibrated model and a report: constants before/after, mean |relative error| before/after,
    and the same restricted to decode-only steps."""
    steps = [s for s in steps if s.measured_s > 0 and (s.prefill_tokens or s.n_decode)]
    if len(steps) < 3:
        raise ValueError(f"calibration needs at least 3 measured steps, got {len(steps)}")
    best = model
    best_loss = _loss(best, steps)
    lin = _best_linear(model, steps)
    if _loss(lin, steps) < best_loss:
        best, best_loss = lin, _loss(lin, steps)
    factor = 1.5
    for r in range(rounds):  # polish on the exact loss (the max() and the GEMM saturation are non-linear)
        for name in PARAMS:
            cur = getattr(best, name)
            values = [cur * factor ** (k / 8) for k in range(-8, 9)]
            if name == "mfu_half_tokens" and r == 0:
                values += [0.0, 16.0, 64.0, 256.0, 1024.0, 4096.0]
            for value in values:
                cand = dataclasses.replace(best, **{name: _clamp(name, value)})
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
        "before": {k: getattr(model, k) for k in PARAMS},
        "after": {k: getattr(best, k) for k in PARAMS},
        "mean_abs_rel_err_before": mean_abs(model, steps),
        "mean_abs_rel_err_after": mean_abs(best, steps),
        "decode_mean_abs_rel_err_after": mean_abs(best, decode),
    }
    return best, report


def write_profile(values: dict[str, float], gpu: str, path: str | Path | None = None) -> Path:
    """Replace (or append) ``[efficiency.GPU]`` in the profiles file with ``values``; returns the path.
    Writing to a path other than the engine's own file copies that file first, then edits the copy."""
    src = Path(_cost.PROFILES_PATH)
    dest = Path(path) if path else src
    bad = sorted(set(values) - set(PARAMS))
    if bad:
        raise ValueError(f"unknown efficiency constant(s) {', '.join(bad)}; valid: {', '.join(PARAMS)}")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", gpu):
        raise ValueError(f"gpu name {gpu!r}: expected letters, digits, '-' or '_'")
    text = (dest if dest.exists() else src).read_text()
    body = "".join(f"{k} = {float(values[k])!r}\n" for k in PARAMS if k in values)
    header = f"[efficiency.{gpu}]"
    block = f"{header}  # calibrated by `contention gpu calibrate`\n{body}"
    pattern = re.compile(rf"^\[efficiency\.{re.escape(gpu)}\][^\n]*\n(?:(?!\[)[^\n]*\n?)*", re.M)
    if pattern.search(text):
        text = pattern.sub(block + "\n", text, count=1).rstrip("\n") + "\n"
    else:
        text = text.rstrip("\n") + "\n\n" + block
    dest.write_text(text)
    _cost._CACHE.pop(str(dest), None)
    return dest


def profile_gpu_name(device_name: str) -> str | None:
    """The profiles.toml GPU whose name appears in the device name ("NVIDIA H200" -> "H200")."""
    flat = device_name.replace(" ", "-")
    exact = [g for g in _cost.gpu_names() if g in flat]
    if exact:
        return max(exact, key=len)
    hits = [g for g in _cost.gpu_names() if g.split("-")[0] in flat]
    return hits[0] if hits else None
