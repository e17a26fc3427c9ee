"""Without a GPU, compile the kernels for sm_90 (H100/H200) through Triton's ahead-of-time path: the
interpreter never lowers a kernel, so this is what catches code that would not compile on the GPU,
and it checks that tl.dot lowers to tensor-core MMA and that nothing spills registers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

NAMES = [
    "decode-bf16-g4-split",
    "decode-bf16-g1-nosplit",
    "decode-fp16-g8-split",
    "extend-bf16-g4",
    "extend-fp16-g1",
    "extend-bf16-g8",
    "merge-bf16",
    "kvwrite-bf16",
    "read-sweep",
]


@cache
def _results() -> dict[str, dict]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(PYTHONPATH=str(ROOT), TRITON_DEFAULT_FP_FUSION="1")
    proc = subprocess.run(
        [sys.executable, "-m", "gpu_backend.aot_check", *NAMES],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    out = {}
    for line in proc.stdout.splitlines():
        rec = json.loads(line)
        out[rec["name"]] = rec
    if not out:
        pytest.fail(f"aot_check produced nothing (exit {proc.returncode}): {proc.stderr[-1500:]}")
    return out


def test_every_kernel_family_is_covered():
    from gpu_backend import aot_check

    names = {c.name for c in aot_check.configs()}
    assert set(NAMES) <= names


@pytest.mark.parametrize("name", NAMES)
def test_compiles_for_sm90(name):
    pytest.importorskip("triton.backends.nvidia.compiler", reason="triton without its NVIDIA backend")
    res = _results()[name]
    assert res["ok"], res["error"]
    assert res["spill_bytes"] == 0, f"{name} spills {res['spill_bytes']} bytes"
    if name.startswith(("decode", "extend")):
        assert res["mma"], "tl.dot must run on the tensor cores"
