"""GPU jobs, run in the server's one GPU worker process: torch and CUDA live there, never in
the server process. ``gpu_backend`` is imported lazily, so a missing package is a reason, not
a crash."""

from __future__ import annotations

import math

from sims.core import api
from sims.core.limits import InputError


def status() -> dict:
    """``{"available", "device", "reason"}`` from ``gpu_backend.status()``."""
    try:
        import gpu_backend
    except ModuleNotFoundError as exc:
        return {"available": False, "device": None, "reason": f"gpu_backend is not importable ({exc.name} is missing)"}
    try:
        s = gpu_backend.status()
    except Exception as exc:  # a broken driver is a reason to report, not a crash
        return {
            "available": False,
            "device": None,
            "reason": f"gpu_backend.status() failed: {type(exc).__name__}: {exc}",
        }
    return {"available": bool(s.get("available")), "device": s.get("device"), "reason": str(s.get("reason", ""))}


def replay(preset: str, seed: int | None, duration: float | None) -> dict:
    """``{"sim": run --json object, "gpu": replay measurements}`` for one preset run."""
    from gpu_backend.replay import replay_preset

    try:
        out = replay_preset(preset, seed, duration)
    except ValueError as exc:  # gpu_backend refuses what it cannot replay (not a single engine): a 422
        if isinstance(exc, InputError):
            raise
        raise InputError(str(exc)) from exc
    if not (isinstance(out, dict) and "sim" in out and "gpu" in out):
        out = {"sim": api.run(preset, seed, duration), "gpu": out}
    return plain(out)


def plain(value: object) -> object:
    """JSON-ready: numpy/torch scalars become Python numbers, NaN and infinities become None,
    tuples become lists (the API never sends NaN, which JSON cannot carry)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if hasattr(value, "item"):  # a numpy or torch scalar
        value = value.item()
        if isinstance(value, (bool, int)):
            return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number if math.isfinite(number) else None
