"""``python -m sims run ratelimit-burst --json`` works inside Pyodide from sims/ alone
(no harness, no web/, no site build), and prints what CPython prints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pyodide_available() -> bool:
    return shutil.which("node") is not None and (ROOT / "node_modules" / "pyodide" / "pyodide.mjs").exists()


def sims_only_archive(dest: Path) -> Path:
    """sims/ and nothing else: its Python files and its data (the presets, engine profiles)."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted((ROOT / "sims").rglob("*")):
            if p.suffix in (".py", ".toml", ".json") and "__pycache__" not in p.parts:
                zf.write(p, p.relative_to(ROOT).as_posix())
    names = zipfile.ZipFile(dest).namelist()
    assert all(n.startswith("sims/") for n in names) and "sims/presets/ratelimit-burst.toml" in names
    return dest


def in_pyodide(archive: Path, *args: str) -> dict:
    out = subprocess.run(
        ["node", str(ROOT / "tests" / "node" / "pyodide_cli.mjs"), str(archive), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.mark.slow
@pytest.mark.skipif(not pyodide_available(), reason="needs node and the pyodide npm package")
def test_cli_runs_in_pyodide_from_sims_alone(tmp_path):
    archive = sims_only_archive(tmp_path / "sims.zip")
    got = in_pyodide(archive, "run", "ratelimit-burst", "--json")
    assert got["rc"] == 0, got["stderr"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    want = subprocess.run(
        [sys.executable, "-m", "sims", "run", "ratelimit-burst", "--json"], capture_output=True, text=True, env=env
    )
    assert json.loads(got["stdout"]) == json.loads(want.stdout)
    bad = in_pyodide(archive, "run", "ratelimit-burst", "--seed", "-1")
    assert bad["rc"] == 2 and "--seed" in bad["stderr"] and "Traceback" not in bad["stderr"]
