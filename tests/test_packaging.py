"""Package data: a wheel built from a clean copy of the repository carries the presets
and no stray top-level modules, and the installed ``contention`` gives, from another folder, the
same list, the same stream hash and the same metrics as the checkout (also for a preset file of
the user's own)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP_LEVEL_OK = {"sims", "web", "sitebuild", "gpu_backend", "contention_harness", "sweep", "realsys"}


def checkout(*args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "sims", *args], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with ``pip install .`` (not editable) of the tracked files only."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, files):
        p = ROOT / rel.decode()
        if p.is_file():
            (src / rel.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, src / rel.decode())
    env_dir = base / "venv"
    venv.create(env_dir, with_pip=True)
    pip = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(src)], capture_output=True, text=True
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    return env_dir


@pytest.mark.slow
def test_the_wheel_has_the_presets_and_no_stray_modules(installed):
    site = next((installed / "lib").glob("python3*/site-packages"))
    top = {p.name.removesuffix(".py") for p in site.iterdir() if not p.name.endswith((".dist-info", ".pth"))}
    top -= {"__pycache__", "pip", "setuptools", "pkg_resources", "_distutils_hack"}
    assert top <= TOP_LEVEL_OK, top - TOP_LEVEL_OK
    assert "harness" not in top
    names = sorted(p.stem for p in (ROOT / "sims" / "presets").glob("*.toml"))
    assert sorted(p.stem for p in (site / "sims" / "presets").glob("*.toml")) == names


@pytest.mark.slow
def test_installed_contention_matches_the_checkout(installed, tmp_path):
    exe = str(installed / "bin" / "contention")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CONTENTION_PRESETS")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([exe, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)

    listing = run("list", "--json")
    assert listing.returncode == 0, listing.stderr
    assert [e["name"] for e in json.loads(listing.stdout)] == [e["name"] for e in checkout("list", "--json")]
    assert all(e["available"] for e in json.loads(listing.stdout))

    got = run("run", "cache-scan", "--json")
    assert got.returncode == 0, got.stderr
    want = checkout("run", "cache-scan", "--json")
    assert json.loads(got.stdout) == want

    mine = tmp_path / "my.toml"
    text = (ROOT / "sims" / "presets" / "cache-scan.toml").read_text().replace('name = "cache-scan"', 'name = "my"')
    mine.write_text(text)
    own = run("run", "./my.toml", "--json")
    assert own.returncode == 0, own.stderr
    obj = json.loads(own.stdout)
    assert obj["preset"] == "my" and obj["stream_sha256"] == want["stream_sha256"] and obj["panels"] == want["panels"]

    bad = run("run", "cache-scan", "--seed", "-1")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
