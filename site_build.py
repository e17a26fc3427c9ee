"""Build the static site into dist/ (``contention build``).

``pack_python`` (standard library only) zips ``sims/``, ``presets/`` and the worker's bridge for
``pyodide.unpackArchive``; the determinism test uses the same archive under Node.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
_EPOCH = (2020, 1, 1, 0, 0, 0)


def python_files() -> list[Path]:
    """What goes into Pyodide: the simulations, the presets and the bridge (no CLI edges)."""
    files = sorted(
        p for p in (ROOT / "sims").rglob("*") if p.suffix in (".py", ".toml", ".json") and "__pycache__" not in p.parts
    )
    files += sorted((ROOT / "presets").glob("*.toml"))
    bridge = ROOT / "web" / "bridge.py"
    if bridge.exists():
        files += [ROOT / "web" / "__init__.py", bridge] if (ROOT / "web" / "__init__.py").exists() else [bridge]
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


def build(out: Path) -> Path:
    """Placeholder until the site lands: a page that lists the presets."""
    import html

    from sims.core import presets

    out.mkdir(parents=True, exist_ok=True)
    items = "".join(
        f"<li><b>{html.escape(p.name)}</b> ({p.topic}): {html.escape(p.title)}</li>" for p in presets.all_presets()
    )
    (out / "index.html").write_text(f"<!doctype html><title>Contention</title><h1>Contention</h1><ul>{items}</ul>")
    pack_python(out / "sims.zip")
    return out
