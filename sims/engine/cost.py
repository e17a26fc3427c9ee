"""The engine's cost model: one replica's step time, memory and transfers, over ``sims.hw``.

``CostModel.step_time`` *is* ``sims.hw.step.StepModel.step_time`` (the bound method, not a copy):
the engine prices a step with the function ``contention step`` prints in parts (linear,
attention, communication, overhead; docs/engine.md). A model is a shipped name
(``sims/hw/models/models.toml``), a path to a Hugging Face ``config.json``, or a table of its
fields; a GPU is a name from ``sims/hw/gpus.toml``.
"""

from __future__ import annotations

from sims.core.panel import Shared
from sims.hw.config import default_tp, index, model_names, model_shape
from sims.hw.gpus import gpu as _gpu
from sims.hw.gpus import gpu_names
from sims.hw.step import StepModel, constants

__all__ = ["CostModel", "cost_model", "gpu_names", "model_names"]


class CostModel(Shared):
    """Step time for one replica (``tp`` GPUs of one kind running one model), its memory and
    its transfers. Byte rates and sizes are the replica's: per GPU x ``tp``. Checkpoints share it:
    it never changes after construction but for ``StepModel``'s cache of pure results."""

    def __init__(self, gpu: str, model, tp: int = 0, consts: dict | None = None) -> None:
        g = _gpu(gpu)
        shape = model_shape(model)
        name = model if isinstance(model, str) and model in index() else shape.name
        tp = tp or default_tp(name)
        self.consts = consts or constants(gpu)
        self.step = step = StepModel(g, shape, tp, self.consts)
        self.gpu, self.model, self.shape, self.tp, self._spec = gpu, name, shape, tp, model
        self.max_model_len = int(index().get(name, {}).get("max_model_len", 0)) or min(shape.max_position, 32768)
        self.memory_bytes = g.memory_bytes * tp
        self.pcie_bytes_s = g.pcie_bytes_s * tp
        self.link_bytes_s = g.link_bytes_s * tp
        self.kv_bytes_per_token = shape.kv_bytes_per_token(tp)
        self.weight_bytes = step.weight_bytes_per_gpu() * tp
        # the engine's hot calls, bound once
        self.step_time = step.step_time
        self.base_s = step.base_s
        self.decode_attention_s = step.decode_attention_s
        self.allreduce_s = step.communication_s

    def with_constants(self, **over: float) -> CostModel:
        """The same replica with some of ``sims.hw.step.CALIBRATED``'s constants replaced."""
        return CostModel(self.gpu, self._spec, self.tp, self.consts | over)

    def kv_tokens(self, gpu_memory_utilization: float) -> int:
        """KV token slots: each GPU's share of memory vLLM may use, less its weights, over the KV
        bytes a token adds on one GPU (MLA's latent, and KV heads fewer than the GPUs, replicate)."""
        g = self.memory_bytes / self.tp
        free = g * gpu_memory_utilization - self.weight_bytes / self.tp
        per_gpu = self.kv_bytes_per_token / self.tp
        return max(0, int(free // per_gpu))

    def transfer_time(self, tokens: int, bytes_s: float) -> float:
        return tokens * self.kv_bytes_per_token / bytes_s


def cost_model(gpu: str, model, tp: int = 0, consts: dict | None = None) -> CostModel:
    """The cost model for ``model`` on ``gpu`` (tp = 0: the model's default tensor parallelism)."""
    return CostModel(gpu, model, tp, consts)
