"""Triton kernels against the float64 torch reference, each case run in a child process (one per
kernel family) so that a crash in the interpreter fails those cases instead of the whole run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy
import pytest
import triton

from gpu_backend import kernel_checks

ROOT = Path(__file__).resolve().parents[2]

CPU_CASES = [c.name for c in kernel_checks.cases("cpu")]
GPU_CASES = [c.name for c in kernel_checks.cases("cuda")]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("+")[0].split(".")[:2] if p.isdigit())


# triton < 3.9's interpreter with numpy >= 2.4 cannot loop to a loaded scalar (DESIGN.md): the
# dynamic-loop cases are for the GPU path and run here only where the interpreter can take them
_DYN_BROKEN = _version(triton.__version__) < (3, 9) and _version(numpy.__version__) >= (2, 4)


@cache
def _run_group(device: str, family: str) -> dict[str, dict]:
    names = [n for n in (CPU_CASES if device == "cpu" else GPU_CASES) if n.startswith(family + "-")]
    if device == "cpu" and _DYN_BROKEN:
        names = [n for n in names if not n.endswith("-dyn")]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    proc = subprocess.run(
        [sys.executable, "-m", "gpu_backend.kernel_checks", "--device", device, *names],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    results: dict[str, dict] = {}
    started = None
    for line in proc.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("started"):
            started = rec["case"]
        else:
            results[rec["case"]] = rec
    if started is not None and started not in results:  # the child died inside this case
        results[started] = {
            "case": started,
            "ok": False,
            "detail": f"child exited {proc.returncode}: {proc.stderr[-1500:]}",
        }
    return results


def _check(device: str, name: str) -> None:
    res = _run_group(device, name.split("-")[0]).get(name)
    assert res is not None, f"{name}: not reached (an earlier case crashed the child)"
    assert res["ok"], f"{name}: max_err={res.get('max_err')} tol={res.get('tol')} {res.get('detail', '')}"


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n,
            marks=pytest.mark.skipif(
                _DYN_BROKEN and n.endswith("-dyn"),
                reason="triton<3.9 interpreter + numpy>=2.4: no loop to a loaded scalar",
            ),
        )
        for n in CPU_CASES
    ],
)
def test_kernel_in_interpreter(name):
    _check("cpu", name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_CASES)
def test_kernel_on_gpu(name):
    _check("cuda", name)


def test_case_set_covers_the_brief():
    names = " ".join(CPU_CASES)
    for needle in ("-g1-", "-g4-", "-g8-", "split1", "split3", "splitauto", "extend-", "kvwrite-", "-empty", "-dyn"):
        assert needle in names, needle
    # contexts that are not a multiple of the block size
    assert any(n % c.block_size for c in kernel_checks.cases("cpu") for n in c.lens)
