"""Replay a preset's engine on the device: the simulation makes every scheduling and block decision
(the same sims code and seed as ``contention run``); each step's attention runs for the real batch
and block tables, timed (CUDA events on a GPU, wall clock on CPU), beside the simulated step time.

Paged engines share one block pool (grown as the engine's block ids climb); the contiguous
baselines (contiguous_max / _pow2 / _oracle) get one real tensor per request, sized to its
reservation, so their fragmentation shows in torch's memory statistics instead of being computed.
Steps are recorded in engine order; ``series`` is a downsampled copy for the browser.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import torch

from gpu_backend import calibrate
from gpu_backend.model import PagedAttentionModel, SeqStep, StepInputs
from gpu_backend.spec import ModelShape, engine_panel, shape_named
from sims.core.scenario import Scenario

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
CONTIG_BLOCK = 16  # contiguous tensors are viewed as blocks of this many tokens (identity table)


def seq_steps(record) -> list[SeqStep]:
    """The per-sequence part of one engine ``StepRecord`` (``seqs``: StepSeq(rid, new_tokens,
    context, block_table); prefill chunks first, then decodes)."""
    return [
        SeqStep(int(s.rid), int(s.new_tokens), int(s.context), tuple(int(b) for b in s.block_table))
        for s in record.seqs
    ]


def find_engine(panel):
    """The single engine inside an engine panel (``panel.single``; a multi-engine deployment has none)."""
    eng = getattr(panel, "single", None) or getattr(panel, "engine", None)
    if eng is None or not hasattr(eng, "step_listener"):
        raise ValueError(f"panel {panel.name!r} is not a single engine (disaggregated deployments are not replayed)")
    return eng


@dataclass
class Replayer:
    """Receives engine step records (``engine.step_listener``) and runs each one on the device."""

    shape: ModelShape
    device: torch.device
    dtype: torch.dtype
    paged: bool
    full_model: bool = False
    max_steps: int = 0
    steps: list[dict] = field(default_factory=list)
    features: list[calibrate.StepFeatures] = field(default_factory=list)
    skipped: int = 0

    def __post_init__(self) -> None:
        self.model: PagedAttentionModel | None = None
        self.stores: dict[int, torch.Tensor] = {}  # contiguous: rid -> its own KV tensor
        self.base_bytes = 0

    # -- memory ----------------------------------------------------------------------------------
    def _allocated(self) -> int:
        """Bytes allocated now: torch's count on CUDA (less attention-only replay's activation
        buffer), else the KV tensors' sizes. ``base_bytes`` (weights, taken at setup) is subtracted
        by the caller."""
        pool = self.model.kv_bytes() if self.model is not None and self.paged else 0
        if self.device.type != "cuda":
            return pool + sum(t.numel() * t.element_size() for t in self.stores.values())
        scratch = self.model._qkv if self.model is not None else None
        return torch.cuda.memory_allocated(self.device) - (
            scratch.numel() * scratch.element_size() if scratch is not None else 0
        )

    def _setup(self, block_size: int) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        self.model = PagedAttentionModel(
            self.shape, 64 if self.paged else 0, block_size, self.device, self.dtype, full=self.full_model
        )
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            self.base_bytes = self._allocated() - (self.model.kv_bytes() if self.paged else 0)

    def _contiguous_groups(self, seqs: list[SeqStep]) -> list[tuple[torch.Tensor, StepInputs]]:
        """Per-request tensors sized to each reservation (table = [region, reserved]); a request that
        left the batch is freed, one whose reservation changed is reallocated (and copied)."""
        live = {s.rid for s in seqs}
        for rid in [r for r in self.stores if r not in live]:
            del self.stores[rid]
        groups = []
        for s in seqs:
            reserved = s.table[1] if len(s.table) >= 2 else s.context
            blocks = -(-max(reserved, s.context) // CONTIG_BLOCK)
            store = self.stores.get(s.rid)
            if store is None or store.shape[2] != blocks:
                fresh = self.model.new_store(blocks)
                if store is not None:
                    keep = min(blocks, store.shape[2])
                    fresh[:, :, :keep] = store[:, :, :keep]
                store = self.stores[s.rid] = fresh
            view = SeqStep(s.rid, s.new, s.context, tuple(range(blocks)))
            groups.append((store, StepInputs([view], CONTIG_BLOCK, self.device)))
        return groups

    # -- the listener ----------------------------------------------------------------------------
    def __call__(self, record) -> None:
        if self.max_steps and len(self.steps) >= self.max_steps:
            self.skipped += 1
            return
        block_size, num_blocks = int(record.block_size), int(record.num_blocks)
        seqs = seq_steps(record)
        if self.model is None:
            self._setup(block_size if self.paged else CONTIG_BLOCK)
        try:
            if self.paged:
                top = max((b for s in seqs for b in s.table), default=-1) + 1
                self.model.ensure_blocks(top, max(top, num_blocks))
                groups = [(self.model.pool, StepInputs(seqs, block_size, self.device))]
            else:
                groups = self._contiguous_groups(seqs)
        except torch.OutOfMemoryError as exc:
            raise RuntimeError(
                f"the engine's KV needs more device memory than is free ({exc})".splitlines()[0]
            ) from None
        measured = self._timed(groups)
        sim = float(record.duration)
        tokens = sum(s.new for s in seqs)
        alloc = self._allocated() - self.base_bytes
        per_token = self.shape.kv_bytes_per_token(torch.finfo(self.dtype).bits // 8)
        used = sum(s.context for s in seqs) * per_token
        held = len({b for s in seqs for b in s.table}) * block_size * per_token if self.paged else alloc
        feats = calibrate.features([(s.new, s.context) for s in seqs], measured)
        self.features.append(feats)
        self.steps.append(
            {
                "t": float(record.t_start),
                "sim_s": sim,
                "measured_s": measured,
                "batch": len(seqs),
                "decode": feats.n_decode,
                "tokens": tokens,
                "kv_allocated_bytes": alloc,
                "kv_held_bytes": held,  # paged: distinct blocks in the step's tables
                "kv_token_bytes": used,
            }
        )

    def _timed(self, groups: list[tuple[torch.Tensor, StepInputs]]) -> float:
        if self.device.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            self.model.step_groups(groups)
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        t0 = time.perf_counter()
        self.model.step_groups(groups)
        return time.perf_counter() - t0


def _rel(a: float, b: float) -> float:
    return abs(a - b) / b if b > 0 else 0.0


def summarize(steps: list[dict]) -> dict:
    """Totals and agreement of measured vs simulated step times (all steps, and decode-only)."""
    if not steps:
        return {"steps": 0}
    tokens = sum(s["tokens"] for s in steps)
    meas = sum(s["measured_s"] for s in steps)
    sim = sum(s["sim_s"] for s in steps)
    decode = [s for s in steps if s["decode"] == s["batch"]]
    ratios = [s["measured_s"] / s["sim_s"] for s in steps if s["sim_s"] > 0]
    peak = max(s["kv_allocated_bytes"] for s in steps)
    shares = [min(1.0, s["kv_token_bytes"] / s["kv_held_bytes"]) for s in steps if s["kv_held_bytes"] > 0]
    return {
        "steps": len(steps),
        "tokens": tokens,
        "measured_s": meas,
        "sim_s": sim,
        "measured_tok_s": tokens / meas if meas > 0 else 0.0,
        "sim_tok_s": tokens / sim if sim > 0 else 0.0,
        "median_measured_over_sim": statistics.median(ratios) if ratios else None,
        "mean_abs_rel_err": statistics.fmean(_rel(s["sim_s"], s["measured_s"]) for s in steps),
        "decode_steps": len(decode),
        "decode_mean_abs_rel_err": statistics.fmean(_rel(s["sim_s"], s["measured_s"]) for s in decode)
        if decode
        else None,
        "kv_peak_allocated_bytes": peak,  # torch's count: the paged pool, or the per-request tensors
        "kv_peak_held_bytes": max(s["kv_held_bytes"] for s in steps),
        "kv_mean_token_share": statistics.fmean(shares) if shares else None,
    }


def _series(steps: list[dict], points: int) -> list[dict]:
    if len(steps) <= points:
        return list(steps)
    stride = len(steps) / points
    return [steps[int(i * stride)] for i in range(points)]


def run(
    preset: str,
    seed: int | None = None,
    duration: float | None = None,
    *,
    panel: str | None = None,
    device: str = "cuda",
    shape: str = "Llama-3-8B",
    dtype: str = "bf16",
    full_model: bool = False,
    max_steps: int = 0,
    keep_steps: bool = False,
    series_points: int = 400,
) -> dict:
    """Replay one engine panel of ``preset``; returns {"preset", "seed", "duration", "panel", "device",
    "shape", "sim": panel metrics + simulated totals, "gpu": measured totals, "series": [...]}."""
    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; valid: {', '.join(DTYPES)}")
    model_shape = shape_named(shape)
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("no CUDA GPU is available for the replay")
    p, name = engine_panel(preset, panel)
    sc = Scenario(p, seed, duration, [name])
    eng = find_engine(sc.panels[name])
    allocator = getattr(getattr(eng, "config", None), "allocator", "paged")
    rep = Replayer(
        model_shape,
        dev,
        DTYPES[dtype],
        paged=allocator == "paged",
        full_model=full_model,
        max_steps=max_steps,
    )
    eng.step_listener = rep
    chunks = 200
    for k in range(1, chunks + 1):
        sc.advance(sc.duration * k / chunks)
        if max_steps and len(rep.steps) >= max_steps:
            break
    metrics = sc.metrics()[name]
    gpu_summary = summarize(rep.steps)
    result = {
        "preset": p.name,
        "seed": sc.seed,
        "duration": sc.duration,
        "t_end": sc.t,
        "panel": name,
        "allocator": allocator,
        "device": _device_name(dev),
        "shape": model_shape.name,
        "dtype": dtype,
        "full_model": full_model,
        "sim": {
            "metrics": metrics,
            "step_s_total": gpu_summary.get("sim_s", 0.0),
            "tok_s": gpu_summary.get("sim_tok_s", 0.0),
        },
        "gpu": gpu_summary,
        "series": _series(rep.steps, series_points),
        "truncated": rep.skipped > 0 or (bool(max_steps) and len(rep.steps) >= max_steps and sc.t < sc.duration),
    }
    if keep_steps:
        result["steps"] = rep.steps
        result["features"] = [list(f.args()) + [f.measured_s] for f in rep.features]
        result["cost_model"] = {"gpu": getattr(eng.config, "gpu", None), "model": getattr(eng.config, "model", None)}
    return result


def _device_name(dev: torch.device) -> str:
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return "cpu (Triton interpreter)"


def replay_preset(preset: str, seed: int | None = None, duration: float | None = None) -> dict:
    """The server's entry (``POST /api/gpu/replay``): {"sim": {...}, "gpu": {...}, ...}; needs CUDA."""
    import gpu_backend

    st = gpu_backend.status()
    if not st["available"]:
        raise RuntimeError(f"no CUDA GPU: {st['reason']}")
    return run(preset, seed, duration, device="cuda", max_steps=2000)


def calibrate_runs(runs: list[dict], gpu: str | None = None, model: str | None = None):
    """Fit the efficiency constants to the steps of replay results (``run(..., keep_steps=True)``)."""
    from sims.engine import cost

    steps = []
    model_name = None
    device = None
    for r in runs:
        if "features" not in r:
            raise ValueError(f"replay of {r.get('preset', '?')}: no per-step features (replay with --out F)")
        steps += [calibrate.StepFeatures(*map(int, f[:5]), float(f[5])) for f in r["features"]]
        model_name = model or model_name or r.get("shape")
        device = device or r.get("device")
    gpu = gpu or calibrate.profile_gpu_name(device or "")
    if gpu is None:
        raise ValueError(
            f"cannot tell which sims/hw/gpus.toml GPU {device!r} is; pass --gpu-name (one of {', '.join(cost.gpu_names())})"
        )
    if model_name not in cost.model_names():
        raise ValueError(
            f"replayed shape {model_name!r} has no profile (pass --model-name); valid: {', '.join(cost.model_names())}"
        )
    return calibrate.fit(cost.cost_model(gpu, model_name), steps)


def summary_text(result: dict) -> str:
    g = result["gpu"]
    lines = [
        f"{result['preset']} panel={result['panel']} ({result['allocator']}) seed={result['seed']} "
        f"t={result['t_end']:g}s on {result['device']}  shape={result['shape']} {result['dtype']}"
        + ("  full model" if result["full_model"] else "  attention only")
    ]
    if not g.get("steps"):
        lines.append("no engine steps ran")
        return "\n".join(lines)
    ratio = g["median_measured_over_sim"]
    lines += [
        f"steps {g['steps']}  tokens {g['tokens']}  measured {g['measured_s']:.3f}s  simulated {g['sim_s']:.3f}s",
        f"tokens/s measured {g['measured_tok_s']:.0f}  simulated {g['sim_tok_s']:.0f}  median measured/sim {ratio:.3f}"
        if ratio is not None
        else "",
        f"mean |sim - measured| / measured: all steps {g['mean_abs_rel_err']:.1%}"
        + (f", decode-only {g['decode_mean_abs_rel_err']:.1%}" if g["decode_mean_abs_rel_err"] is not None else ""),
        f"KV peak allocated {g['kv_peak_allocated_bytes'] / 2**20:.1f} MiB, held {g['kv_peak_held_bytes'] / 2**20:.1f} "
        f"MiB, mean share of held KV holding tokens "
        f"{g['kv_mean_token_share']:.1%}"
        if g["kv_mean_token_share"] is not None
        else "",
    ]
    return "\n".join(line for line in lines if line)
