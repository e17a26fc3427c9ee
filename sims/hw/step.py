"""``StepModel``: the seconds one engine step takes, in four parts. ``contention step`` prints them
and the engine's ``CostModel.step_time`` adds them, through the same methods (one code path).

- ``linear``: every non-attention operator of the forward pass over the step's tokens (the
  embedding lookup, then per layer the norms, projections, rotary, MLP or experts, residual add;
  ``sims/hw/ops.py``), fitted to Vidur's A100 measurements;
- ``attention``: the attention kernels over the cached context (prefill: FLOPs of the query-key
  pairs; decode: the KV bytes read), modelled from the GPU's peaks, not measured;
- ``communication``: two tensor-parallel all-reduces per layer and one after the embedding, of
  the step's activations (``sims/hw/comm.py``), fitted to NCCL's A100 curve;
- ``overhead``: the final norm, the logits of the rows that sample (the LM head GEMM), and the
  host's per-step work (scheduling, input preparation, launches; assumed, per GPU).

Constants come from ``fit.toml`` (fitted, scripts/fit_hardware.py) and ``efficiency.toml``
(assumed, and overridden per GPU by ``contention gpu calibrate``). Every sum runs in a fixed order
with IEEE basic operations and sqrt, so a step costs the same bits in CPython and Pyodide.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from math import sqrt
from pathlib import Path

from sims.core.limits import InputError
from sims.hw.comm import AllReduce
from sims.hw.gpus import Gpu
from sims.hw.ops import Gemm, Kernels, embedding_ops, head_ops, layer_ops, op_s
from sims.hw.shape import ModelShape

FIT_PATH = Path(__file__).with_name("fit.toml")
EFFICIENCY_PATH = Path(__file__).with_name("efficiency.toml")
_FILES: dict[str, dict] = {}
_PREFILL_KEYS = 4096  # prefill attention results cached per StepModel at most
CALIBRATED = ("gemm_mfu", "gemm_bw", "attn_mfu", "attn_bw", "step_overhead_s")  # per-GPU overrides


def load(path: Path) -> dict:
    key = str(path)
    if key not in _FILES:
        with open(path, "rb") as f:
            _FILES[key] = tomllib.load(f)
    return _FILES[key]


def forget(path: Path) -> None:
    """Drop a cached file (after calibration rewrote it)."""
    _FILES.pop(str(path), None)


def constants(gpu: str, fit: dict | None = None, efficiency: dict | None = None) -> dict:
    """The flat constants for ``gpu``: the fit, the assumed defaults, then the GPU's own table."""
    fit = fit or load(FIT_PATH)
    eff = efficiency or load(EFFICIENCY_PATH)
    c = {f"gemm_{k}": v for k, v in fit["gemm"].items()}
    c["elementwise"] = fit["elementwise"]
    c.update({f"allreduce_{k}": v for k, v in fit["allreduce"].items()})
    c.update({k: v for k, v in eff.items() if not isinstance(v, dict)})
    c.update(eff.get(gpu, {}))
    return c


def accuracy(gpu: str) -> dict:
    """How far the model is from measurements, for pages and the CLI: the fit's errors
    (``fit.toml`` [errors]) and, when ``contention gpu calibrate`` measured this GPU, its figure."""
    errors = dict(load(FIT_PATH)["errors"])
    table = load(EFFICIENCY_PATH).get(gpu, {})
    if "calibration_steps" in table:
        errors["measured"] = {
            "gpu": gpu,
            "steps": table["calibration_steps"],
            "mean_abs_err": table["calibration_error"],
        }
    return errors


@dataclass(frozen=True)
class Parts:
    linear: float
    attention: float
    communication: float
    overhead: float

    @property
    def seconds(self) -> float:
        """In the order ``step_time`` adds them: ((linear + communication) + overhead) + attention."""
        return self.linear + self.communication + self.overhead + self.attention


class StepModel:
    """One replica: ``tp`` GPUs of one kind running one model."""

    def __init__(self, gpu: Gpu, shape: ModelShape, tp: int, consts: dict | None = None) -> None:
        if tp < 1 or shape.heads % tp or (not shape.mla and shape.kv_heads % tp and tp % shape.kv_heads):
            raise InputError(
                f"tp {tp} does not split {shape.name}'s {shape.heads} attention heads "
                f"({shape.kv_heads} KV heads) evenly over the GPUs"
            )
        c = consts or constants(gpu.name)
        self.gpu, self.shape, self.tp, self.consts = gpu, shape, tp, c
        elem = {
            k: (float(v["floor_s"]), float(v["floor_s_per_element"]), float(v["bytes_factor"]))
            for k, v in c["elementwise"].items()
        }
        kern = dict(
            hbm=gpu.hbm_bytes_s,
            gemm_mfu=float(c["gemm_mfu"]),
            gemm_bw=float(c["gemm_bw"]),
            gemm_floor=float(c["gemm_floor_s"]),
            tile_rows=int(c["gemm_tile_rows"]),
            min_tile_rows=int(c["gemm_min_tile_rows"]),
            elem=elem,
        )
        fp8 = shape.weight_dtype == "fp8"
        self.kern = Kernels(peak=gpu.peak("fp8" if fp8 else "bf16"), **kern)  # the layers' GEMMs
        self.kern16 = Kernels(peak=gpu.peak_bf16, **kern)  # 16-bit weights: the LM head, routers
        moe = shape.moe_layers
        self.groups = [(shape.layers - moe, layer_ops(shape, tp, False))]
        if moe:
            self.groups.append((moe, layer_ops(shape, tp, True)))
        self.emb = embedding_ops(shape)
        self.final, self.head = head_ops(shape, tp)
        self.allreduce = AllReduce(
            float(c["allreduce_latency_s"]),
            float(c["allreduce_latency_per_gpu_s"]),
            float(c["allreduce_bus_eff"]),
            gpu.link_bytes_s,
        )
        self.host_s = float(c["step_overhead_s"])
        # attention, per layer on one GPU
        hq = shape.heads // tp
        self.attn_layers = [(shape.layers - shape.sliding_layers, 0)]
        if shape.sliding_layers:
            self.attn_layers.append((shape.sliding_layers, shape.window))
        self.pair_flops = 2.0 * hq * (shape.head_dim + shape.v_head_dim)  # QK^T and PV, per query-key pair
        self.kv_layer_bytes = shape.kv_layer_bytes(tp)
        self.q_bytes = 2.0 * hq * (shape.head_dim + shape.v_head_dim)  # a new token's query in, output out
        self.attn_flops_s = gpu.peak_bf16 * float(c["attn_mfu"])
        self.attn_bytes_s = gpu.hbm_bytes_s * float(c["attn_bw"])
        self.attn_floor = float(c["attn_floor_s"])
        if not shape.sliding_layers:
            self.decode_attention_s = self._full_decode_attention()
        self._base: dict[int, float] = {}
        self._prefill: dict[tuple, float] = {}  # (tokens, pairs, kv_read) -> prefill attention seconds

    def _ops_s(self, ops: list, rows: int) -> float:
        total = 0.0
        for op in ops:
            total += op_s(op, rows, self.kern16 if isinstance(op, Gemm) and op.weight_bytes >= 2.0 else self.kern)
        return total

    # --- the four parts ---------------------------------------------------------------------
    def linear_s(self, tokens: int) -> float:
        """Every non-attention operator of one forward pass over ``tokens`` tokens, all layers."""
        total = self._ops_s(self.emb, tokens)
        for count, ops in self.groups:
            total += count * self._ops_s(ops, tokens)
        return total

    def communication_s(self, tokens: int) -> float:
        """2 all-reduces per layer and 1 after the embedding, of ``tokens`` x hidden 16-bit values."""
        if self.tp < 2:
            return 0.0
        return (2 * self.shape.layers + 1) * self.allreduce.seconds(2.0 * tokens * self.shape.hidden, self.tp)

    def overhead_s(self, tokens: int, rows: int) -> float:
        """The final norm over ``tokens``, the LM head over the ``rows`` that sample, the host."""
        return self._ops_s(self.final, tokens) + self._ops_s(self.head, rows) + self.host_s

    def _attn_kernel(self, flops: float, nbytes: float) -> float:
        compute = flops / self.attn_flops_s
        memory = nbytes / self.attn_bytes_s
        return self.attn_floor + sqrt(compute * compute + memory * memory)

    def prefill_attention_s(self, tokens: int, pairs: int, kv_read: int) -> float:
        """Prefill chunks of ``tokens`` new tokens in all, attending ``pairs`` query-key pairs and
        reading ``kv_read`` cached tokens' KV; a windowed layer sees at most ``window`` keys a query
        (and, as if the chunks were one sequence, at most ``window`` cached tokens). Cached: it
        depends on nothing else, and a workload of fixed prompts repeats a handful of keys (the
        engine asks once per general step). Cleared when full, so a workload of ever new chunk
        shapes holds at most ``_PREFILL_KEYS`` of them."""
        key = (tokens, pairs, kv_read)
        v = self._prefill.get(key)
        if v is None:
            if len(self._prefill) >= _PREFILL_KEYS:
                self._prefill.clear()
            v = self._prefill[key] = self._prefill_attention_s(tokens, pairs, kv_read)
        return v

    def _prefill_attention_s(self, tokens: int, pairs: int, kv_read: int) -> float:
        total = 0.0
        kvb, qb = self.kv_layer_bytes, self.q_bytes
        for count, window in self.attn_layers:
            p, kv = pairs, kv_read
            if window:
                p = p if p < tokens * window else tokens * window
                kv = kv if kv < window else window
            nbytes = (kv + 2 * tokens) * kvb + tokens * qb  # cached KV read, the chunk's KV written and read
            total += count * self._attn_kernel(self.pair_flops * p, nbytes)
        return total

    def decode_attention_s(self, seqs: int, context: int) -> float:
        """``seqs`` sequences decoding one token each over ``context`` cached tokens in all (a model
        without sliding windows gets ``_full_decode_attention`` instead, the same bits)."""
        total = 0.0
        kvb, qb = self.kv_layer_bytes, self.q_bytes
        for count, window in self.attn_layers:
            ctx = context
            if window and ctx > seqs * window:
                ctx = seqs * window
            nbytes = ctx * kvb + seqs * (kvb + qb)  # the context's KV read, each new token's in and out
            total += count * self._attn_kernel(self.pair_flops * (ctx + seqs), nbytes)
        return total

    def _full_decode_attention(self):
        """``decode_attention_s`` when no layer has a window: its loop's one group with
        ``_attn_kernel`` written out, in the same order of operations, and the constants bound once.
        The engine's decode runs call it every step (tests/test_hw.py holds it to the same bits)."""
        layers, kvb, new_b, pf = (
            self.shape.layers,
            self.kv_layer_bytes,
            self.kv_layer_bytes + self.q_bytes,
            self.pair_flops,
        )
        flops_s, bytes_s, floor = self.attn_flops_s, self.attn_bytes_s, self.attn_floor

        def decode_attention_s(seqs: int, context: int) -> float:
            compute = pf * (context + seqs) / flops_s
            memory = (context * kvb + seqs * new_b) / bytes_s
            return layers * (floor + sqrt(compute * compute + memory * memory))

        return decode_attention_s

    def attention_s(self, prefill_tokens: int, pairs: int, kv_read: int, n_decode: int, decode_ctx: int) -> float:
        p = self.prefill_attention_s(prefill_tokens, pairs, kv_read) if prefill_tokens else 0.0
        return p + (self.decode_attention_s(n_decode, decode_ctx) if n_decode else 0.0)

    # --- a whole step -----------------------------------------------------------------------
    def base_s(self, tokens: int, rows: int) -> float:
        """(linear + communication) + overhead of a step of ``tokens`` tokens, ``rows`` sampling;
        cached: it depends on nothing else."""
        key = tokens << 21 | rows
        v = self._base.get(key)
        if v is None:
            v = self._base[key] = self.linear_s(tokens) + self.communication_s(tokens) + self.overhead_s(tokens, rows)
        return v

    def step_time(self, prefill_tokens: int, pairs: int, kv_read: int, n_decode: int, decode_ctx: int) -> float:
        """Seconds of one engine step: prefill chunks (``prefill_tokens`` new tokens, ``pairs``
        query-key pairs, ``kv_read`` cached tokens read) and ``n_decode`` decodes over
        ``decode_ctx`` context tokens in all. Every decode and one prefill row sample."""
        tokens = prefill_tokens + n_decode
        if tokens == 0:
            return 0.0
        base = self.base_s(tokens, n_decode + (1 if prefill_tokens else 0))
        return base + self.attention_s(prefill_tokens, pairs, kv_read, n_decode, decode_ctx)

    def parts(self, prefill_tokens: int, pairs: int, kv_read: int, n_decode: int, decode_ctx: int) -> Parts:
        """The same step in its four parts; ``Parts.seconds == step_time(...)`` bit for bit."""
        tokens = prefill_tokens + n_decode
        rows = n_decode + (1 if prefill_tokens else 0)
        return Parts(
            linear=self.linear_s(tokens),
            attention=self.attention_s(prefill_tokens, pairs, kv_read, n_decode, decode_ctx),
            communication=self.communication_s(tokens),
            overhead=self.overhead_s(tokens, rows),
        )

    # --- memory -----------------------------------------------------------------------------
    def weight_bytes_per_gpu(self) -> float:
        """Each GPU's share of the weights: its slice of every sharded matrix, every replicated
        one (norms, routers, MLA's down-projections), its slice of the vocabulary."""
        total = 0.0
        for count, ops in self.groups:
            layer = 0.0
            for op in ops:
                if isinstance(op, Gemm):
                    layer += (op.experts or 1) * op.k * op.n * op.weight_bytes
                elif op.cls in ("rmsnorm", "layernorm") and op.units == 2:
                    layer += 2.0 * op.width
            total += count * layer
        s = self.shape
        vocab = -(-s.vocab // self.tp) * s.hidden * 2.0
        total += vocab * (1 if s.tied_embeddings else 2) + 2.0 * s.hidden
        return total + (2.0 * s.max_position * s.hidden if s.learned_positions else 0.0)
