"""What goes into Pyodide: ``sims/``, the presets and ``web.pyodide`` (the worker's bridge), as one
deterministic zip for ``pyodide.unpackArchive``; the determinism test uses the same archive under
Node. Standard library only."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout (or site-packages): sims/ and web/ beside us
_EPOCH = (2020, 1, 1, 0, 0, 0)


def python_files() -> list[Path]:
    """The simulations (code and data), the presets and the bridge; no CLI edges, no server, no
    concept pages' text (the build reads it in CPython; the browser never does)."""
    skip = {"__pycache__", "concepts"}
    files = sorted(
        p
        for p in (ROOT / "sims").rglob("*")
        if p.suffix in (".py", ".toml", ".json") and not skip & set(p.relative_to(ROOT).parts)
    )
    files += sorted((ROOT / "presets").glob("*.toml"))
    files += [ROOT / "web" / "__init__.py", *sorted((ROOT / "web" / "pyodide").glob("*.py"))]
    return files


def pack_python(dest: Path | None = None) -> bytes:
    """A deterministic zip (sorted names, fixed timestamps) of ``python_files()``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in python_files():
            info = zipfile.ZipInfo(path.relative_to(ROOT).as_posix(), _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
    data = buf.getvalue()
    if dest is not None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    return data
