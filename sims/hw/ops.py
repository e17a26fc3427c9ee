"""The operators of one forward pass and the time each takes on a GPU: the fitted part of the
step-time model (``fit.toml``; docs/engine.md, "Step-time model").

Two kinds of kernel, each timed as ``floor + sqrt(compute² + memory²)`` (a smooth maximum: a kernel
near its ridge point pays for both) with IEEE basic operations only:

- ``Gemm``: rows x K times K x N. Memory: the weights (of the experts a grouped GEMM touches) plus
  the activations in and out, at ``gemm_bw`` x the GPU's bandwidth. Compute: the rows are padded to
  whole tiles (``tile_rows``, or the next power of two from ``min_tile_rows`` for a small batch),
  the wave quantisation seen in the measurements: time steps up every ``tile_rows`` rows.
- ``Elementwise``: norms, rotary embedding, activation, residual add, embedding lookup: bytes
  moved at a per-class fraction of the bandwidth, with a floor that grows with the row width.

``layer_ops(shape, tp, moe)`` lists one layer's operators on one of ``tp`` GPUs (column-parallel
projections split N, row-parallel split K, norms and adds replicated), in the order vLLM runs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt

from sims.hw.shape import ModelShape


@dataclass(frozen=True, slots=True)
class Gemm:
    name: str
    k: int
    n: int
    weight_bytes: float  # bytes per weight element
    experts: int = 0  # a grouped GEMM over ``experts``, each row routed to ``top_k`` of them
    top_k: int = 0


@dataclass(frozen=True, slots=True)
class Elementwise:
    name: str
    cls: str  # the fitted kernel class: emb rmsnorm layernorm add rope act_gated act
    width: int  # elements of one row
    units: int  # rows of ``width`` 16-bit elements read and written per token
    per_token: int = 1  # rows per token (a mixture's activation runs on top_k rows a token)


@dataclass(frozen=True)
class Kernels:
    """The fitted constants (``fit.toml`` [gemm] and [elementwise.*]) for one GPU's peaks."""

    peak: float  # FLOP/s of the GEMMs' compute dtype
    hbm: float  # bytes/s
    gemm_mfu: float
    gemm_bw: float
    gemm_floor: float
    tile_rows: int
    min_tile_rows: int
    elem: dict  # class -> (floor_s, floor_s_per_element, bytes_factor)


def expected_experts(experts: int, top_k: int, rows: int) -> float:
    """Distinct experts ``rows`` tokens touch, each routing to ``top_k`` of ``experts`` uniformly:
    E(1 - (1 - k/E)^rows), the power by repeated squaring (the same bits everywhere)."""
    miss, acc, n = 1.0 - top_k / experts, 1.0, rows
    while n:
        if n & 1:
            acc *= miss
        miss *= miss
        n >>= 1
    return experts * (1.0 - acc)


def gemm_s(op: Gemm, rows: int, kern: Kernels) -> float:
    """Seconds for ``rows`` tokens through ``op`` on one GPU."""
    k, n = op.k, op.n
    if op.experts:
        routed = rows * op.top_k
        touched = expected_experts(op.experts, op.top_k, rows)
        per = -(-routed // int(touched + 0.999999))  # rows each touched expert multiplies
        weights = touched * k * n
    else:
        routed, touched, per, weights = rows, 1.0, rows, k * n
    memory = (weights * op.weight_bytes + 2.0 * routed * (k + n)) / (kern.hbm * kern.gemm_bw)
    tile = kern.tile_rows
    if per <= tile // 2:
        tile = kern.min_tile_rows
        while tile < per:
            tile += tile
    padded = -(-per // tile) * tile
    compute = touched * 2.0 * padded * k * n / (kern.peak * kern.gemm_mfu)
    return kern.gemm_floor + sqrt(compute * compute + memory * memory)


def elementwise_s(op: Elementwise, rows: int, kern: Kernels) -> float:
    floor, per_elem, factor = kern.elem[op.cls]
    fl = floor + per_elem * op.width
    memory = factor * 2.0 * rows * op.per_token * op.units * op.width / kern.hbm
    return sqrt(fl * fl + memory * memory)


def op_s(op, rows: int, kern: Kernels) -> float:
    return gemm_s(op, rows, kern) if isinstance(op, Gemm) else elementwise_s(op, rows, kern)


def _mlp(shape: ModelShape, ff: int, tp: int, wb: float, prefix: str) -> list:
    up = (2 if shape.gated else 1) * ff // tp
    return [
        Gemm(f"{prefix}up_proj", shape.hidden, up, wb),
        Elementwise(f"{prefix}act", "act_gated" if shape.gated else "act", ff // tp, 3 if shape.gated else 2),
        Gemm(f"{prefix}down_proj", ff // tp, shape.hidden, wb),
    ]


def _attention(shape: ModelShape, tp: int, wb: float, norm: str) -> list:
    h, hq = shape.hidden, shape.heads // tp
    if shape.mla:
        ops = []
        if shape.q_lora_rank:
            ops += [
                Gemm("q_a_proj", h, shape.q_lora_rank, wb),
                Elementwise("q_a_layernorm", norm, shape.q_lora_rank, 2),
                Gemm("q_b_proj", shape.q_lora_rank, hq * shape.head_dim, wb),
            ]
        else:
            ops.append(Gemm("q_proj", h, hq * shape.head_dim, wb))
        nope = shape.head_dim - shape.rope_dim
        return ops + [
            Gemm("kv_a_proj", h, shape.kv_lora_rank + shape.rope_dim, wb),
            Elementwise("kv_a_layernorm", norm, shape.kv_lora_rank, 2),
            Gemm("kv_b_proj", shape.kv_lora_rank, hq * (nope + shape.v_head_dim), wb),
            Elementwise("attn_rope", "rope", (hq + 1) * shape.rope_dim, 2),
            Gemm("attn_post_proj", hq * shape.v_head_dim, h, wb),
        ]
    hkv = -(-shape.kv_heads // tp)
    ops = [Gemm("attn_pre_proj", h, (hq + 2 * hkv) * shape.head_dim, wb)]
    if shape.rope_dim:
        ops.append(Elementwise("attn_rope", "rope", (hq + hkv) * shape.head_dim, 2))
    return ops + [Gemm("attn_post_proj", hq * shape.v_head_dim, h, wb)]


def layer_ops(shape: ModelShape, tp: int, moe: bool = False) -> list:
    """One layer's non-attention operators on one of ``tp`` GPUs."""
    h = shape.hidden
    wb = shape.weight_bytes_per_param
    norm = "rmsnorm" if shape.norm == "rms" else "layernorm"
    ops: list = [Elementwise("input_layernorm", norm, h, 2)]
    ops += _attention(shape, tp, wb, norm)
    if shape.norms_per_layer == 4:  # Gemma 2: a norm after attention and one before the MLP
        ops += [
            Elementwise("post_attention_layernorm", norm, h, 2),
            Elementwise("pre_feedforward_layernorm", norm, h, 2),
        ]
    elif not shape.parallel_block:
        ops.append(Elementwise("post_attention_layernorm", norm, h, 2))
    if not moe:
        ops += _mlp(shape, shape.ff, tp, wb, "mlp_")
    else:
        e, k = shape.experts, shape.top_k
        up = (2 if shape.gated else 1) * shape.moe_ff // tp
        ops += [
            Gemm("router", h, e, 2.0),
            Gemm("experts_up_proj", h, up, wb, e, k),
            Elementwise("experts_act", "act_gated" if shape.gated else "act", shape.moe_ff // tp, 3, k),
            Gemm("experts_down_proj", shape.moe_ff // tp, h, wb, e, k),
        ]
        if shape.shared_ff:
            ops += _mlp(shape, shape.shared_ff, tp, wb, "shared_")
        ops.append(Elementwise("experts_combine", "add", h, k + 1))
    if shape.norms_per_layer == 4:
        ops.append(Elementwise("post_feedforward_layernorm", norm, h, 2))
    ops.append(Elementwise("add", "add", h, 4 if shape.parallel_block else 3))
    return ops


def embedding_ops(shape: ModelShape) -> list:
    """The lookups before the first layer (every GPU looks up every token: vocab-parallel)."""
    ops = [Elementwise("emb", "emb", shape.hidden, 1)]
    if shape.learned_positions:
        ops.append(Elementwise("pos_emb", "emb", shape.hidden, 1))
    return ops


def head_ops(shape: ModelShape, tp: int) -> tuple[list, list]:
    """(per token, per sampled row): the final norm over every token, the LM head over the rows
    that sample (vocab-parallel, 16-bit weights)."""
    norm = "rmsnorm" if shape.norm == "rms" else "layernorm"
    return [Elementwise("final_norm", norm, shape.hidden, 2)], [Gemm("lm_head", shape.hidden, shape.vocab // tp, 2.0)]
