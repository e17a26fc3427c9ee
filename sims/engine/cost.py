"""The roofline step-time model: a mixed batch costs max(compute, memory) + a fixed overhead.

Compute: 2 * params FLOPs per token in the batch plus attention (4 * layers * heads * head_dim
FLOPs per query-key pair), at an efficiency that saturates with the step's token count
(``prefill_mfu * T / (T + mfu_half_tokens)``: small GEMMs leave tensor cores idle). Memory: the weights once per step plus every KV byte attention reads.
Prefill-heavy steps land on the compute side, decode-heavy steps on the memory side. All numbers
come from ``profiles.toml`` (one data file, rewritten by GPU calibration).
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
    mfu_half_tokens: float  # compute efficiency = prefill_mfu * tokens / (tokens + mfu_half_tokens)
    decode_bw_eff: float
    step_overhead_s: float

    def step_time(
        self, prefill_tokens: int, prefill_pairs: int, prefill_kv_read: int, n_decode: int, decode_ctx: int
    ) -> float:
        """Seconds for one step: ``prefill_tokens`` chunk tokens attending ``prefill_pairs``
        query-key pairs and reading ``prefill_kv_read`` cached KV tokens, plus ``n_decode``
        decode tokens over ``decode_ctx`` context tokens in all."""
        tokens = prefill_tokens + n_decode
        if tokens == 0:
            return 0.0
        flops = 2.0 * self.params * tokens + self.attn_flops_per_pair * (prefill_pairs + decode_ctx)
        mem = self.weight_bytes + self.kv_bytes_per_token * (decode_ctx + prefill_kv_read + prefill_tokens)
        compute_s = flops * (tokens + self.mfu_half_tokens) / (self.peak_flops * self.prefill_mfu * tokens)
        memory_s = mem / (self.hbm_bytes_s * self.decode_bw_eff)
        return (compute_s if compute_s > memory_s else memory_s) + self.step_overhead_s

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
    )
