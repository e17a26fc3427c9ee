"""Tensor-parallel communication: the all-reduce curve fitted to NCCL's measured one (Vidur's
``network/a100_dgx/all_reduce.csv``, one 8-GPU DGX A100 node; ``fit.toml`` [allreduce]).

A ring all-reduce of B bytes over n GPUs moves 2(n-1)/n x B through each GPU's link, after a
latency floor that grows with the ring: ``latency + latency_per_gpu (n - 2) + 2(n-1)/n B /
(link x bus_eff)``. The measurements offered a second, faster path for small messages (a tree or
the low-latency protocol) no support: below 1 MB they scatter between 20 and 65 us with no size
trend, so one curve fits them, and docs/engine.md gives its error by size."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AllReduce:
    latency_s: float  # two GPUs, a small message
    latency_per_gpu_s: float  # more per GPU beyond two
    bus_eff: float  # achieved / datasheet link bandwidth, one direction
    link_bytes_s: float  # the GPU's datasheet link bandwidth, one direction

    def seconds(self, nbytes: float, n: int) -> float:
        """One all-reduce of ``nbytes`` over ``n`` GPUs (0 for one GPU)."""
        if n < 2:
            return 0.0
        ring = 2.0 * (n - 1) / n * nbytes / (self.link_bytes_s * self.bus_eff)
        return self.latency_s + self.latency_per_gpu_s * (n - 2) + ring
