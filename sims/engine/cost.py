"""The roofline step-time model: a batch costs max(compute, memory) + TP communication + a fixed
per-step overhead.

Compute: 2 * params FLOPs per token in the batch plus attention (4 * layers * heads * head_dim
FLOPs per query-key pair) at ``prefill_mfu`` of peak. Prefill work alone runs below that while its
chunk is small (``prefill_mfu * P / (P + mfu_half_tokens)`` for a P-token chunk: small GEMMs leave
tensor cores idle); decode tokens never pay that penalty: decode is memory-bound. Memory: the
weights once per step (every chunk of a chunked prefill reads them again) plus every KV byte
attention reads (a chunk reads the KV of the chunks before it). Tensor parallelism (tp >= 2): two
ring all-reduces of the step's activations per layer over the GPU link. All numbers come from
``profiles.toml`` (one data file, rewritten by GPU calibration).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

PROFILES_PATH = Path(__file__).with_name("profiles.toml")
_CACHE: dict[str, dict] = {}


def load_profiles(path: str | Path | None = None) -> dict:
    """The parsed profiles file (cached per path)."""
    key = str(path or PROFILES_PATH)
    if key not in _CACHE:
        with open(key, "rb") as f:
            _CACHE[key] = tomllib.load(f)
    return _CACHE[key]


def gpu_names() -> list[str]:
    return sorted(load_profiles()["gpus"])


def model_names() -> list[str]:
    return sorted(load_profiles()["models"])


@dataclass(frozen=True)
class CostModel:
    """Step time for one replica (``tp`` GPUs of one kind running one model)."""

    gpu: str
    model: str
    peak_flops: float  # all tp GPUs together
    hbm_bytes_s: float
    memory_bytes: float
    pcie_bytes_s: float
    link_bytes_s: float
    params: float
    weight_bytes: float
    kv_bytes_per_token: float
    attn_flops_per_pair: float  # 4 * layers * heads * head_dim
    max_model_len: int
    tp: int
    prefill_mfu: float
    mfu_half_tokens: float  # prefill efficiency = prefill_mfu * P / (P + mfu_half_tokens), P chunk tokens
    decode_bw_eff: float
    step_overhead_s: float  # scheduling, input preparation, launches and sampling, per step
    hidden: int = 0  # model width: bytes per token of each all-reduce = hidden * dtype_bytes
    dtype_bytes: int = 2
    layers: int = 0
    allreduce_bytes_s: float = 0.0  # per-GPU link bandwidth an all-reduce achieves (bus bandwidth)
    allreduce_latency_s: float = 0.0  # fixed cost of one all-reduce (small messages)

    def step_time(
        self, prefill_tokens: int, prefill_pairs: int, prefill_kv_read: int, n_decode: int, decode_ctx: int
    ) -> float:
        """Seconds for one step: ``prefill_tokens`` chunk tokens attending ``prefill_pairs``
        query-key pairs and reading ``prefill_kv_read`` cached KV tokens, plus ``n_decode``
        decode tokens over ``decode_ctx`` context tokens in all."""
        tokens = prefill_tokens + n_decode
        if tokens == 0:
            return 0.0
        pf = self.attn_flops_per_pair
        decode_flops = 2.0 * self.params * n_decode + pf * decode_ctx
        compute_s = decode_flops / (self.peak_flops * self.prefill_mfu)
        if prefill_tokens:
            prefill_flops = 2.0 * self.params * prefill_tokens + pf * prefill_pairs
            slow = (prefill_tokens + self.mfu_half_tokens) / prefill_tokens
            compute_s += prefill_flops * slow / (self.peak_flops * self.prefill_mfu)
        mem = self.weight_bytes + self.kv_bytes_per_token * (decode_ctx + prefill_kv_read + prefill_tokens)
        memory_s = mem / (self.hbm_bytes_s * self.decode_bw_eff)
        return (compute_s if compute_s > memory_s else memory_s) + self.allreduce_s(tokens) + self.step_overhead_s

    def allreduce_s(self, tokens: int) -> float:
        """Two ring all-reduces per layer (after attention and after the MLP) of ``tokens`` rows of
        activations; 0 without tensor parallelism."""
        tp = self.tp
        if tp < 2:
            return 0.0
        nbytes = tokens * self.hidden * self.dtype_bytes
        one = self.allreduce_latency_s + 2.0 * (tp - 1) / tp * nbytes / self.allreduce_bytes_s
        return 2.0 * self.layers * one

    def kv_tokens(self, gpu_memory_utilization: float) -> int:
        """KV token slots: the memory share vLLM may use, less the weights, over KV bytes/token."""
        free = self.memory_bytes * gpu_memory_utilization - self.weight_bytes
        return max(0, int(free // self.kv_bytes_per_token))

    def transfer_time(self, tokens: int, bytes_s: float) -> float:
        return tokens * self.kv_bytes_per_token / bytes_s


def _unknown(what: str, name: str, valid) -> ValueError:
    return ValueError(f"unknown {what} {name!r}; valid: {', '.join(sorted(valid))}")


def cost_model(gpu: str, model: str, tp: int = 0, profiles: dict | None = None) -> CostModel:
    """The cost model for ``model`` on ``gpu`` (tp = 0: the model's own tensor parallelism)."""
    prof = profiles or load_profiles()
    if gpu not in prof["gpus"]:
        raise _unknown("gpu", gpu, prof["gpus"])
    if model not in prof["models"]:
        raise _unknown("model", model, prof["models"])
    g = prof["gpus"][gpu]
    m = prof["models"][model]
    tp = tp or int(m.get("tp", 1))
    eff = {k: v for k, v in prof.get("efficiency", {}).items() if not isinstance(v, dict)}
    eff.update(prof.get("efficiency", {}).get(gpu, {}))
    return CostModel(
        gpu=gpu,
        model=model,
        peak_flops=float(g["peak_flops"]) * tp,
        hbm_bytes_s=float(g["hbm_bytes_s"]) * tp,
        memory_bytes=float(g["memory_bytes"]) * tp,
        pcie_bytes_s=float(g["pcie_bytes_s"]) * tp,
        link_bytes_s=float(g["link_bytes_s"]) * tp,
        params=float(m["params"]),
        weight_bytes=float(m["params"]) * float(m["dtype_bytes"]),
        kv_bytes_per_token=float(m["kv_bytes_per_token"]),
        attn_flops_per_pair=4.0 * m["layers"] * m["heads"] * m["head_dim"],
        max_model_len=int(m["max_model_len"]),
        tp=tp,
        prefill_mfu=float(eff["prefill_mfu"]),
        mfu_half_tokens=float(eff.get("mfu_half_tokens", 0.0)),
        decode_bw_eff=float(eff["decode_bw_eff"]),
        step_overhead_s=float(eff["step_overhead_s"]),
        hidden=int(m["hidden"]),
        dtype_bytes=int(m["dtype_bytes"]),
        layers=int(m["layers"]),
        allreduce_bytes_s=float(g["link_bytes_s"]) * float(eff["allreduce_bw_eff"]),
        allreduce_latency_s=float(eff["allreduce_latency_s"]),
    )
