"""``contention serve``: the Starlette app (``app``), its HTTP policy (``http_policy``), static
files (``static``), limits (``config``), build-if-stale (``build``) and the JSON API (``api/``).

Importing this package imports nothing beyond the standard library: the worker processes import
``web.server.api.jobs`` and must not pay for starlette or uvicorn.
"""

from __future__ import annotations

from pathlib import Path


def main(
    host: str = "127.0.0.1",
    port: int = 8000,
    gpu: bool = False,
    dist: Path = Path("dist"),
    real: bool = False,
    sweep: Path | None = None,
) -> int:
    """Build dist/ if needed, then serve until SIGINT/SIGTERM (``web.server.app.main``)."""
    from web.server.app import main as serve

    return serve(host=host, port=port, gpu=gpu, dist=dist, real=real, sweep=sweep)
