"""Ground truth on a GPU: Triton paged attention, trace replay and calibration of the engine's cost model.

Importing this package needs nothing beyond the standard library; torch and triton are imported by
the submodules (``ops``, ``kernels``, ``replay``, ``bench``, ``calibrate``) and by ``status()``.
"""

from __future__ import annotations

__all__ = ["status"]


def status() -> dict:
    """``{"available": bool, "device": str | None, "reason": str}``: is a CUDA GPU usable for replay?"""
    try:
        import torch
    except ModuleNotFoundError as exc:
        return {
            "available": False,
            "device": None,
            "reason": f"{exc.name} is not installed: pip install 'contention[gpu]'",
        }
    try:
        import triton  # noqa: F401
    except ModuleNotFoundError as exc:
        return {
            "available": False,
            "device": None,
            "reason": f"{exc.name} is not installed: pip install 'contention[gpu]'",
        }
    if not torch.cuda.is_available():
        build = "a CPU-only torch build" if torch.version.cuda is None else f"torch built for CUDA {torch.version.cuda}"
        return {"available": False, "device": None, "reason": f"no CUDA device visible ({build})"}
    idx = torch.cuda.current_device()
    name = torch.cuda.get_device_name(idx)
    return {"available": True, "device": f"cuda:{idx} {name}", "reason": "ok"}
