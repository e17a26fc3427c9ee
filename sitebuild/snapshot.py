"""Pyodide's memory snapshot for the worker: Python started and our code imported, made at build
time in Node (``snapshot.mjs``) so a page restores it instead of starting CPython and importing.

``static/py/snapshot.json`` says what it was made from (``"file": null`` when there is none, with
the reason, so a page never asks for a missing file); the worker (web/static/js/worker.js) uses
``snapshot.bin.gz`` only when the manifest's Pyodide version and sims.zip hash match what it loaded,
and starts Python the ordinary way otherwise. No Node, a failing Node, or ``CONTENTION_NO_SNAPSHOT=1``
leaves the site without a snapshot (one line says so) and the build goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from sitebuild.pack import ROOT

MANIFEST = "snapshot.json"
SNAPSHOT = "snapshot.bin.gz"  # gzip in the file itself: a static host serves .bin uncompressed
TIMEOUT_S = 180  # a cold start under Node takes ~4 s here; the rest is slack for a loaded machine


def write_snapshot(static: Path) -> bool:
    """Write ``py/snapshot.bin.gz`` and ``py/snapshot.json`` under ``static`` (which already holds
    ``py/sims.zip`` and ``vendor/pyodide/``); False, after one printed line, when there is none."""
    py = static / "py"
    (py / SNAPSHOT).unlink(missing_ok=True)
    why = _make(py, static / "vendor" / "pyodide")
    version = json.loads((ROOT / "node_modules" / "pyodide" / "package.json").read_text())["version"]
    manifest = {
        "pyodide": version,  # the worker compares it with pyodide.mjs's `version`
        "sims_sha256": hashlib.sha256((py / "sims.zip").read_bytes()).hexdigest(),  # and this with its sims.zip
        "file": None if why else SNAPSHOT,
        # the bytes of memory it restores (gzip's own record of the inflated size): the worker grows
        # the wasm's memory to this before the restore (web/static/js/wasm-start.js)
        "memory": None if why else int.from_bytes((py / SNAPSHOT).read_bytes()[-4:], "little"),
    }
    if why:
        print(f"no Pyodide snapshot: {why}", file=sys.stderr)
        manifest["why"] = why
    (py / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return not why


def _make(py: Path, pyodide_dir: Path) -> str:
    """Run snapshot.mjs; "" when it wrote the snapshot, else why not (one line)."""
    if os.environ.get("CONTENTION_NO_SNAPSHOT"):
        return "CONTENTION_NO_SNAPSHOT is set"
    node = shutil.which("node")
    if node is None:
        return "node is not on PATH"
    cmd = [node, str(ROOT / "sitebuild" / "snapshot.mjs"), str(pyodide_dir), str(py / "sims.zip"), str(py / SNAPSHOT)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{type(e).__name__}: {e}"
    if done.returncode != 0 or not (py / SNAPSHOT).exists():
        (py / SNAPSHOT).unlink(missing_ok=True)
        return (done.stderr.strip().splitlines() or [f"node exited with status {done.returncode}"])[-1]
    return ""
