"""Fit the step-time model's constants (``sims/hw/fit.toml``) to Vidur's A100 measurements.

    python scripts/fit_hardware.py            # fit, write sims/hw/fit.toml, print the error tables
    python scripts/fit_hardware.py --table    # only the error tables of the committed fit (markdown)

Reads ``tests/data/vidur_a100/`` (committed; its README says where it comes from) and nothing
else: it fetches nothing. Every operator is priced by the model's own functions
(``sims.hw.ops``, ``sims.hw.comm``) for the shipped configs of the eight models, so what is fitted
is what ``contention step`` and the engine run. Each kernel class is fitted on its own operators
(the four GEMMs share one set of constants) by Nelder-Mead over the logarithms of its constants,
minimising the mean squared log error; the all-reduce curve minimises the mean absolute log error
(its small messages scatter, a robust fit follows the bulk). Only the A100 files are read: the
H100 and A40 profiles are held out.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sims.hw import ops as hwops  # noqa: E402
from sims.hw.comm import AllReduce  # noqa: E402
from sims.hw.config import model_shape  # noqa: E402
from sims.hw.gpus import gpu  # noqa: E402
from sims.hw.step import FIT_PATH, StepModel, constants  # noqa: E402

DATA = ROOT / "tests" / "data" / "vidur_a100"
GPU = "A100-80GB"  # Vidur's a100 profiles: DGX A100 (SXM4, 80 GB)
OPS = (
    "emb input_layernorm attn_pre_proj attn_rope attn_post_proj post_attention_layernorm mlp_up_proj mlp_act "
    "mlp_down_proj add"
).split()
RANGES = ((1, 16), (17, 128), (129, 512), (513, 2048), (2049, 16384))
ELEMENT_CLASSES = ("emb", "rmsnorm", "layernorm", "rope", "act_gated", "act", "add")


def _rows(name: str) -> list[dict]:
    with gzip.open(DATA / name, "rt") as f:
        return list(csv.DictReader(io.StringIO(f.read())))


def load_compute() -> dict[tuple[str, int, int], dict[str, float]]:
    """(model, tp, tokens) -> {op: seconds}, duplicates averaged (in file order, a plain loop)."""
    groups: dict[tuple[str, int, int], list[dict]] = {}
    for r in _rows("mlp.csv.gz"):
        groups.setdefault((r["model"], int(r["tp"]), int(r["tokens"])), []).append(r)
    out = {}
    for key, rs in groups.items():
        ops = {}
        for op in OPS:
            vals = [float(r[op]) for r in rs if r[op] != ""]
            if vals:
                total = 0.0
                for v in vals:
                    total += v
                ops[op] = total / len(vals) * 1e-6
        out[key] = ops
    return out


def load_allreduce() -> list[tuple[int, int, float]]:
    return [(int(r["gpus"]), int(r["bytes"]), float(r["median_us"]) * 1e-6) for r in _rows("all_reduce.csv.gz")]


def models(consts: dict | None = None) -> dict[tuple[str, int], StepModel]:
    data = load_compute()
    a100 = gpu(GPU)
    return {(m, tp): StepModel(a100, model_shape(m), tp, consts) for m, tp, _ in data}


def measured_linear(shape_layers: int, ops: dict[str, float]) -> float:
    """The measured counterpart of ``parts.linear``: the embedding once, every other operator
    once per layer (as Vidur composes a layer: one timed residual add)."""
    per_layer = 0.0
    for op in OPS[1:]:
        if op in ops:
            per_layer += ops[op]
    return ops["emb"] + shape_layers * per_layer


def linear_rows(consts: dict | None = None) -> list[tuple[str, int, int, float, float]]:
    """(model, tp, tokens, measured, predicted) of every measured shape, predicted by
    ``StepModel.linear_s``: the function the engine and ``contention step`` call."""
    data = load_compute()
    ms = models(consts)
    out = []
    for (m, tp, t), ops in data.items():
        sm = ms[(m, tp)]
        out.append((m, tp, t, measured_linear(sm.shape.layers, ops), sm.linear_s(t)))
    return out


def allreduce_rows(consts: dict | None = None) -> list[tuple[int, int, float, float]]:
    c = consts or constants(GPU)
    ar = AllReduce(
        c["allreduce_latency_s"], c["allreduce_latency_per_gpu_s"], c["allreduce_bus_eff"], gpu(GPU).link_bytes_s
    )
    return [(n, b, y, ar.seconds(b, n)) for n, b, y in load_allreduce()]


def abs_errors(pairs) -> list[float]:
    return sorted(abs(p / m - 1.0) for m, p in pairs)


def quantile(sorted_values: list[float], q: float) -> float:
    """The q-quantile by linear interpolation between order statistics."""
    if not sorted_values:
        return math.nan
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def op_points(ms: dict, data: dict) -> dict[str, list[tuple]]:
    """Kernel class -> [(op, rows, measured seconds)] over every measured operator."""
    points: dict[str, list[tuple]] = {}
    for (m, tp, t), measured in data.items():
        sm = ms[(m, tp)]
        for op in sm.emb + sm.groups[0][1]:
            if op.name in measured:
                cls = "gemm" if isinstance(op, hwops.Gemm) else op.cls
                points.setdefault(cls, []).append((op, t, measured[op.name]))
    return points


def nelder_mead(f, x0: list[float], iters: int = 400, scale: float = 0.3) -> list[float]:
    """Minimise f over exp(y): Nelder-Mead on the logarithms (constants stay positive)."""
    n = len(x0)
    simplex = [[math.log(v) for v in x0]]
    for i in range(n):
        y = list(simplex[0])
        y[i] += scale
        simplex.append(y)
    vals = [f([math.exp(v) for v in y]) for y in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        simplex, vals = [simplex[i] for i in order], [vals[i] for i in order]
        c = [sum(y[j] for y in simplex[:-1]) / n for j in range(n)]

        worst = simplex[-1]

        def at(t, c=c, worst=worst):
            return [c[j] + t * (worst[j] - c[j]) for j in range(n)]

        yr = at(-1.0)
        fr = f([math.exp(v) for v in yr])
        if fr < vals[0]:
            ye = at(-2.0)
            fe = f([math.exp(v) for v in ye])
            simplex[-1], vals[-1] = (ye, fe) if fe < fr else (yr, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = yr, fr
        else:
            yc = at(0.5)
            fc = f([math.exp(v) for v in yc])
            if fc < vals[-1]:
                simplex[-1], vals[-1] = yc, fc
            else:
                best = simplex[0]
                simplex = [best] + [[b + 0.5 * (v - b) for b, v in zip(best, y, strict=True)] for y in simplex[1:]]
                vals = [vals[0]] + [f([math.exp(v) for v in y]) for y in simplex[1:]]
    i = min(range(n + 1), key=lambda i: vals[i])
    return [math.exp(v) for v in simplex[i]]


def _kernels(base: hwops.Kernels, **over) -> hwops.Kernels:
    fields = dict(base.__dict__)
    fields.update(over)
    return hwops.Kernels(**fields)


def fit() -> dict:
    """The fitted tables of fit.toml."""
    data = load_compute()
    ms = models()
    kern = next(iter(ms.values())).kern16
    points = op_points(ms, data)

    def msle(pred, pts):
        total = 0.0
        for op, t, y in pts:
            e = math.log(pred(op, t) / y)
            total += e * e
        return total / len(pts)

    g = points["gemm"]
    mfu, bw, floor = nelder_mead(
        lambda x: msle(
            lambda op, t: hwops.gemm_s(op, t, _kernels(kern, gemm_mfu=x[0], gemm_bw=x[1], gemm_floor=x[2] * 1e-6)), g
        ),
        [kern.gemm_mfu, kern.gemm_bw, kern.gemm_floor * 1e6],
    )
    out = {
        "gemm": {
            "mfu": mfu,
            "bw": bw,
            "floor_s": floor * 1e-6,
            "tile_rows": kern.tile_rows,
            "min_tile_rows": kern.min_tile_rows,
        }
    }
    out["elementwise"] = {}
    for cls in ELEMENT_CLASSES:
        pts = points[cls]
        f0, f1, k = kern.elem[cls]

        def pred(x, cls=cls):
            k2 = _kernels(kern, elem={cls: (x[0] * 1e-6, x[1] * 1e-10, x[2])})
            return lambda op, t: hwops.elementwise_s(op, t, k2)

        x = nelder_mead(lambda x, pts=pts, pred=pred: msle(pred(x), pts), [f0 * 1e6, max(f1, 1e-13) * 1e10, k])
        out["elementwise"][cls] = {"floor_s": x[0] * 1e-6, "floor_s_per_element": x[1] * 1e-10, "bytes_factor": x[2]}
    link = gpu(GPU).link_bytes_s
    ar = load_allreduce()

    def mal(x):
        model = AllReduce(x[0] * 1e-6, x[1] * 1e-6, x[2], link)
        return sum(abs(math.log(model.seconds(b, n) / y)) for n, b, y in ar) / len(ar)

    c = constants(GPU)
    lat, per, eff = nelder_mead(
        mal, [c["allreduce_latency_s"] * 1e6, c["allreduce_latency_per_gpu_s"] * 1e6, c["allreduce_bus_eff"]]
    )
    out["allreduce"] = {"latency_s": lat * 1e-6, "latency_per_gpu_s": per * 1e-6, "bus_eff": eff}
    return out


def _num(v) -> str:
    if isinstance(v, int):
        return str(v)
    return repr(float(f"{v:.4g}")) if v >= 1e-15 else "0.0"  # a floor the fit drove to nothing


def errors(consts: dict | None = None) -> dict:
    """The headline errors the pages and ``contention step`` quote (fit.toml [errors])."""
    lin = abs_errors((m, p) for _, _, _, m, p in linear_rows(consts))
    ar = abs_errors((y, p) for _, _, y, p in allreduce_rows(consts))
    return {
        "gpu": GPU,
        "shapes": len(lin),
        "linear_median": quantile(lin, 0.5),
        "linear_p90": quantile(lin, 0.9),
        "allreduce_points": len(ar),
        "allreduce_median": quantile(ar, 0.5),
        "allreduce_p90": quantile(ar, 0.9),
    }


def write(tables: dict, path: Path = FIT_PATH) -> None:
    """fit.toml: the fitted tables, then the errors they give on the data."""
    fitted = {k: tables[k] for k in ("gemm", "allreduce", "elementwise")}
    consts = constants(GPU, fit=fitted)
    lines = [
        "# Fitted by scripts/fit_hardware.py to Vidur's A100-80GB measurements (tests/data/vidur_a100:",
        "# operator medians of eight models at TP 1-8 and 1-16,384 tokens; NCCL all-reduce on one DGX A100).",
        "# Fractions of the GPU's datasheet peaks (sims/hw/gpus.toml), so they carry to another GPU;",
        "# seconds for floors. Do not edit by hand: rerun the script. docs/engine.md has the errors.",
    ]
    for section, rows in (("gemm", fitted["gemm"]), ("allreduce", fitted["allreduce"])):
        lines += ["", f"[{section}]"] + [f"{k} = {_num(v)}" for k, v in rows.items()]
    for cls, rows in fitted["elementwise"].items():
        lines += ["", f"[elementwise.{cls}]"] + [f"{k} = {_num(v)}" for k, v in rows.items()]
    lines += [
        "",
        "# |predicted / measured - 1| of parts.linear and of the all-reduce curve on the data above",
        "[errors]",
    ]
    for k, v in errors(consts).items():
        lines.append(f'{k} = "{v}"' if isinstance(v, str) else f"{k} = {v if isinstance(v, int) else round(v, 4)!r}")
    path.write_text("\n".join(lines) + "\n")


def error_tables() -> str:
    """Markdown: the linear part's error by token range, the operator classes', the all-reduce's."""
    data = load_compute()
    ms = models()
    lin = linear_rows()
    out = [
        "| tokens | shapes | linear median | linear p90 | GEMMs median | norms median | elementwise median |",
        "|---|---|---|---|---|---|---|",
    ]
    points = op_points(ms, data)

    def cls_err(classes, lo, hi):
        pairs = []
        for cls in classes:
            for op, t, y in points.get(cls, []):
                if lo <= t <= hi:
                    pairs.append((y, hwops.op_s(op, t, next(iter(ms.values())).kern16)))
        return quantile(abs_errors(pairs), 0.5)

    for lo, hi in (*RANGES, (1, 16384)):
        e = abs_errors((m, p) for _, _, t, m, p in lin if lo <= t <= hi)
        out.append(
            f"| {lo}–{hi} | {len(e)} | {quantile(e, 0.5):.1%} | {quantile(e, 0.9):.1%} | "
            f"{cls_err(['gemm'], lo, hi):.1%} | {cls_err(['rmsnorm', 'layernorm'], lo, hi):.1%} | "
            f"{cls_err(['rope', 'act_gated', 'act', 'add', 'emb'], lo, hi):.1%} |"
        )
    out += ["", "| model | TP 1 | TP 2 | TP 4 | TP 8 |", "|---|---|---|---|---|"]
    for m in sorted({m for m, _, _ in data}):
        cells = []
        for tp in (1, 2, 4, 8):
            e = abs_errors((y, p) for mm, t2, _, y, p in lin if mm == m and t2 == tp)
            cells.append(f"{quantile(e, 0.5):.1%} / {quantile(e, 0.9):.1%}" if e else "–")
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    ar = allreduce_rows()
    out += ["", "| all-reduce bytes | points | median | p90 |", "|---|---|---|---|"]
    for lo, hi, label in (
        (0, 1 << 20, "< 1 MiB"),
        (1 << 20, 8 << 20, "1–8 MiB"),
        (8 << 20, 1 << 40, "≥ 8 MiB"),
        (0, 1 << 40, "all"),
    ):
        e = abs_errors((y, p) for _, b, y, p in ar if lo <= b < hi)
        out.append(f"| {label} | {len(e)} | {quantile(e, 0.5):.1%} | {quantile(e, 0.9):.1%} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--table", action="store_true", help="print the committed fit's error tables only")
    p.add_argument("--refresh", action="store_true", help="keep the fitted constants, recompute [errors]")
    args = p.parse_args(argv)
    if not args.table:
        from sims.hw import step

        tables = step.load(FIT_PATH) if args.refresh else fit()
        write(tables)
        step.forget(FIT_PATH)
        print(f"wrote {FIT_PATH.relative_to(ROOT)}")
    print(error_tables())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
