"""GPU jobs, run in the server's one GPU worker process: torch and CUDA live there, never in
the server process. ``gpu_backend`` is imported lazily, so a missing package is a reason, not
a crash."""

from __future__ import annotations

from sims.core import api


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

    out = replay_preset(preset, seed, duration)
    if isinstance(out, dict) and "sim" in out and "gpu" in out:
        return out
    return {"sim": api.run(preset, seed, duration), "gpu": out}
