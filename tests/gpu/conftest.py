"""GPU tests: without CUDA the kernels run in Triton's CPU interpreter, so TRITON_INTERPRET=1 must be
set here, before anything imports gpu_backend's kernels. Tests marked ``gpu`` are skipped without CUDA."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch", reason="the gpu extra (torch) is not installed")
HAS_CUDA = torch.cuda.is_available()
if not HAS_CUDA:  # before triton is imported: the interpreter patches triton.language at import
    os.environ.setdefault("TRITON_INTERPRET", "1")
pytest.importorskip("triton", reason="the gpu extra (triton) is not installed")


def pytest_collection_modifyitems(config, items):
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)
