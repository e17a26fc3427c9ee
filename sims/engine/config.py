"""``EngineConfig``: everything that defines one replica, validated once, frozen."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from sims.core.params import State
from sims.engine.freequeue import EVICTORS
from sims.engine.kv import ALLOCATORS
from sims.engine.sched import SCHEDULERS


def _knob(default, help: str, typ: type | None = None, **bounds):
    """A config field that is also a panel param: its default, its help text, (when not the
    default's) its type, and its declared range and cost (``sims.core.params.Param``'s min, max,
    choices, state, work), in one place."""
    return field(default=default, metadata={"help": help, "type": typ or type(default), "bounds": bounds})


BATCHING = ("static", "continuous")
# the block pool's tables: about 60 bytes a block (refcount, hash, free queue), on every engine of a
# cluster or a deployment (prefill x decode engines: a slight undercount for 1 + k); kv_tokens = 0
# (derived from GPU memory) counts as 8.2M tokens, the largest profile (Llama-3-8B, H200) at TP 8
_KV_STATE = State(bytes=60, per="block_size", times=("replicas", "prefill_replicas", "decode_replicas"), zero=8_200_000)
PREEMPTION = ("recompute", "swap")
DEPLOYMENTS = ("colocated", "disaggregated")  # several engines (sims/engine/disagg.py)
ROLES = ("both", "prefill", "decode")

# Every axis of the engine a panel policy may fix, and its choices: the one listing, which the
# panel policies, the config's checks and help texts are derived from.
AXES: dict[str, tuple[str, ...]] = {
    "allocator": ALLOCATORS,
    "scheduler": tuple(SCHEDULERS),
    "batching": BATCHING,
    "preemption": PREEMPTION,
    "eviction": tuple(EVICTORS),
    "deployment": DEPLOYMENTS,
}


def _choices(axis: str) -> str:
    return " | ".join(AXES[axis])


@dataclass(frozen=True)
class EngineConfig:
    gpu: str = _knob("A100-40GB", "a GPU of sims/hw/gpus.toml")
    model: str | dict = _knob(
        "OPT-13B", "a model of sims/hw/models/, a path to a config.json, or a table of its fields", object
    )
    tp: int = _knob(0, "tensor parallel GPUs; 0 = the model's default", min=0, max=8)
    allocator: str = _knob("paged", _choices("allocator"))
    pow2_of: str = _knob("output", 'contiguous_pow2: "output" (Orca-Pow2) or "context" (double on overflow)')
    block_size: int = _knob(16, "tokens per KV block (paged)", min=1, max=4096, work=-1)
    max_num_seqs: int = _knob(256, "sequences in one step", min=1, max=100_000)
    max_num_batched_tokens: int = _knob(8192, "token budget per step (prefill chunks + decodes)", min=1, max=1 << 22)
    chunked_prefill: bool = _knob(True, "False: a prompt is prefilled in one step or waits")
    scheduler: str = _knob("fcfs", _choices("scheduler"))
    predictor_error: float = _knob(0.0, "sjf_predicted: sigma of the multiplicative lognormal error", min=0.0, max=4.0)
    aging: float = _knob(0.0, "key units a waiting request gains per second (sjf: tokens/s)", min=0.0, max=1e9)
    mlfq_levels: int = _knob(5, "mlfq: levels", min=1, max=32)
    mlfq_quantum: int = _knob(32, "output tokens at level 0; doubles per level", min=1, max=1 << 20)
    mlfq_prompt_quantum: int = _knob(512, "prompt tokens a level-0 join allows; doubles per level", min=1, max=1 << 24)
    batching: str = _knob("continuous", "continuous (iteration-level) | static (cohorts)")
    preemption: str = _knob("recompute", _choices("preemption"))
    swap_tokens: int = _knob(1 << 30, "host swap space, token slots (beyond it: recompute)", min=0, max=1 << 40)
    prefix_caching: bool = _knob(True, "paged only: share hashed full blocks")
    eviction: str = _knob("lru", f"prefix-cache eviction: {_choices('eviction')}")
    max_model_len: int = _knob(0, "0 = the model's default", min=0, max=1 << 21)
    kv_tokens: int = _knob(
        0, "KV token slots; 0 = from GPU memory, weights and utilization", min=0, max=1 << 26, state=_KV_STATE
    )
    gpu_memory_utilization: float = _knob(0.9, "share of GPU memory for weights + KV", above=0.0, max=1.0)
    watermark: float = _knob(0.01, "share of blocks kept free when admitting (avoids thrash)", min=0.0, max=0.5)
    role: str = _knob("both", "both | prefill (hand off after the first token) | decode (KV arrives)")

    def __post_init__(self) -> None:
        def one_of(name: str, valid) -> None:
            value = getattr(self, name)
            if value not in valid:
                raise ValueError(f"{name}: unknown value {value!r}; valid: {', '.join(sorted(valid))}")

        for axis, valid in AXES.items():
            if axis != "deployment":  # not a config field: the panel's (Deployment)
                one_of(axis, valid)
        one_of("role", ROLES)
        one_of("pow2_of", ("output", "context"))
        if not isinstance(self.model, (str, dict)):
            raise ValueError(f"model: expected a model name, a config.json path or a table, got {self.model!r}")
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
        out[name] = Param(f.metadata["type"], value, help, **f.metadata["bounds"])
    return out
