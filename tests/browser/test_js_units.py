"""The front end's pure modules (URL codec, palette, ticks, windowed ratios) under Node's test
runner: no browser, about a second."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

UNITS = Path(__file__).resolve().parent / "js" / "units.mjs"


def test_front_end_units_pass_under_node():
    node = shutil.which("node")
    if not node:
        pytest.fail("node is not installed (make test installs the npm dependencies with it)")
    r = subprocess.run([node, "--test", str(UNITS)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
