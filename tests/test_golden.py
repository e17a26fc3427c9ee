"""Every preset's stream hash and metrics equal the golden file.

A change here is deliberate or a bug: regenerate with ``python scripts/golden.py --update`` only in
a commit that names its issue and says why the numbers moved.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("golden", ROOT / "scripts" / "golden.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)

WANT = golden.read()
SLOW = {"routing-llmd"}  # about 5 s of CPU each: `make test` checks them, `make check` does not


# `make check` compares one preset of each topic (tests/conftest.py), `make test` every one
@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(WANT)])
def test_preset_matches_golden(name):
    got = golden.compute([name])[name]
    assert got["stream_sha256"] == WANT[name]["stream_sha256"]
    assert got["panels"] == WANT[name]["panels"]


def test_every_preset_has_a_golden_line():
    from sims.core import presets

    assert sorted(presets.preset_names()) == sorted(WANT)
