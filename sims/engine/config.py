"""``EngineConfig``: everything that defines one replica, validated once, frozen."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from sims.engine.freequeue import EVICTORS
from sims.engine.kv import ALLOCATORS
from sims.engine.sched import SCHEDULERS


def _knob(default, help: str):
    """A config field that is also a panel param: its default and its help text, in one place."""
    return field(default=default, metadata={"help": help})


BATCHING = ("continuous", "static")
PREEMPTION = ("recompute", "swap")
ROLES = ("both", "prefill", "decode")


@dataclass(frozen=True)
class EngineConfig:
    gpu: str = _knob("A100-40GB", "a [gpus.*] name in profiles.toml")
    model: str = _knob("OPT-13B", "a [models.*] name in profiles.toml")
    tp: int = _knob(0, "tensor parallel GPUs; 0 = the model profile's")
    allocator: str = _knob("paged", "contiguous_max | contiguous_pow2 | contiguous_oracle | paged")
    pow2_of: str = _knob("output", 'contiguous_pow2: "output" (Orca-Pow2) or "context" (double on overflow)')
    block_size: int = _knob(16, "tokens per KV block (paged)")
    max_num_seqs: int = _knob(256, "sequences in one step")
    max_num_batched_tokens: int = _knob(8192, "token budget per step (prefill chunks + decodes)")
    chunked_prefill: bool = _knob(True, "False: a prompt is prefilled in one step or waits")
    scheduler: str = _knob("fcfs", "fcfs | sjf_oracle | sjf_predicted | mlfq | priority")
    predictor_error: float = _knob(0.0, "sjf_predicted: sigma of the multiplicative lognormal error")
    aging: float = _knob(0.0, "key units a waiting request gains per second (sjf: tokens/s)")
    mlfq_levels: int = _knob(5, "mlfq: levels")
    mlfq_quantum: int = _knob(32, "output tokens at level 0; doubles per level")
    mlfq_prompt_quantum: int = _knob(512, "prompt tokens a level-0 join allows; doubles per level")
    batching: str = _knob("continuous", "continuous (iteration-level) | static (cohorts)")
    preemption: str = _knob("recompute", "recompute | swap")
    swap_tokens: int = _knob(1 << 30, "host swap space, token slots (beyond it: recompute)")
    prefix_caching: bool = _knob(True, "paged only: share hashed full blocks")
    eviction: str = _knob("lru", "prefix-cache eviction: lru | cost_aware")
    max_model_len: int = _knob(0, "0 = the model profile's")
    kv_tokens: int = _knob(0, "KV token slots; 0 = from GPU memory, weights and utilization")
    gpu_memory_utilization: float = _knob(0.9, "share of GPU memory for weights + KV")
    watermark: float = _knob(0.01, "share of blocks kept free when admitting (avoids thrash)")
    role: str = _knob("both", "both | prefill (hand off after the first token) | decode (KV arrives)")

    def __post_init__(self) -> None:
        def one_of(name: str, valid) -> None:
            value = getattr(self, name)
            if value not in valid:
                raise ValueError(f"{name}: unknown value {value!r}; valid: {', '.join(sorted(valid))}")

        one_of("allocator", ALLOCATORS)
        one_of("scheduler", SCHEDULERS)
        one_of("batching", BATCHING)
        one_of("preemption", PREEMPTION)
        one_of("eviction", EVICTORS)
        one_of("role", ROLES)
        one_of("pow2_of", ("output", "context"))
        for name in (
            "block_size",
            "max_num_seqs",
            "max_num_batched_tokens",
            "mlfq_levels",
            "mlfq_quantum",
            "mlfq_prompt_quantum",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: must be >= 1, got {getattr(self, name)!r}")
        for name in ("tp", "max_model_len", "kv_tokens", "swap_tokens"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: must be >= 0, got {getattr(self, name)!r}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization: must be in (0, 1], got {self.gpu_memory_utilization!r}")
        if not 0 <= self.watermark < 0.5:
            raise ValueError(f"watermark: must be in [0, 0.5), got {self.watermark!r}")
        if self.predictor_error < 0 or self.aging < 0:
            raise ValueError("predictor_error and aging must be >= 0")
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ValueError(
                f"max_num_batched_tokens ({self.max_num_batched_tokens}) must be >= max_num_seqs "
                f"({self.max_num_seqs}): every running sequence decodes every step"
            )

    @classmethod
    def from_params(cls, params: dict) -> EngineConfig:
        """A config from panel params, ignoring keys that are not config fields."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in params.items() if k in names})


CONFIG_FIELDS = tuple(f.name for f in fields(EngineConfig))


def knobs(names=None, **defaults) -> dict:
    """The engine's knobs as panel params (``sims.core.registry.Param``), from ``EngineConfig``'s
    fields: every field, or ``names`` in that order, with ``defaults`` overriding the config's (a
    topic's own defaults, or "" for an axis its panel policy may set)."""
    from sims.core.registry import Param

    table = {f.name: f for f in fields(EngineConfig)}
    out = {}
    for name in names or CONFIG_FIELDS:
        f = table[name]
        help = f.metadata["help"]
        if name in defaults:
            value = defaults[name]
            if value == "" and f.default != "":
                help = f"{help}; empty = the panel policy's, else {f.default}"
        else:
            value = f.default
        out[name] = Param(type(f.default), value, help)
    return out
