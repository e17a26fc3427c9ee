"""GPUs from their datasheets (``gpus.toml``): peak FLOP/s per dtype, memory bandwidth and size,
GPU-to-GPU and host link bandwidth. The step-time model needs nothing else from a GPU: its fitted
efficiencies (``fit.toml``) are fractions of these peaks, so a GPU is added by its datasheet alone."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from sims.core.limits import InputError

GPUS_PATH = Path(__file__).with_name("gpus.toml")
_TABLE: dict[str, dict] = {}


@dataclass(frozen=True)
class Gpu:
    name: str
    vendor: str
    peak_bf16: float  # dense FLOP/s, BF16/FP16 tensor cores
    peak_fp8: float  # dense FLOP/s with FP8 operands (= peak_bf16 without FP8 tensor cores)
    hbm_bytes_s: float  # device memory bandwidth
    memory_bytes: float  # device memory
    link_bytes_s: float  # GPU-to-GPU, one direction, all links (NVLink, Infinity Fabric, PCIe)
    pcie_bytes_s: float  # host link as swap achieves it

    def peak(self, compute_dtype: str) -> float:
        """FLOP/s for GEMMs whose operands are ``compute_dtype`` ("bf16" or "fp8")."""
        return self.peak_fp8 if compute_dtype == "fp8" else self.peak_bf16


def _table() -> dict[str, dict]:
    if not _TABLE:
        with open(GPUS_PATH, "rb") as f:
            _TABLE.update(tomllib.load(f))
    return _TABLE


def gpu_names() -> list[str]:
    return sorted(_table())


def gpu(name: str) -> Gpu:
    """The datasheet of ``name``; an unknown name is bad input, listing the valid ones."""
    table = _table()
    if name not in table:
        raise InputError(f"unknown gpu {name!r}; valid: {', '.join(sorted(table))}")
    row = table[name]
    return Gpu(
        name=name,
        vendor=str(row["vendor"]),
        peak_bf16=float(row["peak_bf16"]),
        peak_fp8=float(row["peak_fp8"]),
        hbm_bytes_s=float(row["hbm_bytes_s"]),
        memory_bytes=float(row["memory_bytes"]),
        link_bytes_s=float(row["link_bytes_s"]),
        pcie_bytes_s=float(row["pcie_bytes_s"]),
    )
