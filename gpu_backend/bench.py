"""``contention gpu bench``: decode attention bandwidth over a batch x context grid, against the HBM
bandwidth measured in the same run (a read sweep) and the datasheet; paged (scattered block table)
against contiguous (identity table); torch SDPA on gathered KV as a reference.

Bytes counted per decode call: K and V of every context token (the floor any kernel must read) plus
q and the output; achieved bandwidth = bytes / median time. Rows are ordered by batch, then context.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

import torch
import triton

from gpu_backend import kernels, ops
from gpu_backend.spec import LLAMA3_8B, ModelShape

DATASHEET_BYTES_S = {"H200": 4.8e12, "H100": 3.35e12, "A100-SXM4-80GB": 2.039e12, "A100-SXM4-40GB": 1.555e12}


def timer(fn: Callable[[], object], device: torch.device, reps: int = 20) -> float:
    """Median seconds per call: triton's do_bench (L2 flushed between calls) on CUDA, wall clock on CPU."""
    if device.type == "cuda":
        return float(triton.testing.do_bench(fn, warmup=5, rep=max(reps, 25), return_mode="median")) / 1e3
    fn()
    times = []
    for _ in range(max(1, reps)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def datasheet_bytes_s(device: torch.device) -> float | None:
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    for key, value in DATASHEET_BYTES_S.items():
        if key in name.replace(" ", "-"):
            return value
    return None


def read_bandwidth(device: torch.device, sizes_mib: tuple[int, ...] = (256, 1024, 4096), reps: int = 20) -> dict:
    """The read sweep: bytes/s of a grid-stride read of buffers of each size (best of the sizes)
    and of a torch copy (read + write counted)."""
    rows = []
    programs = 4 * (torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 1)
    block = 4096 if device.type == "cuda" else 256
    for mib in sizes_mib:
        n = mib * 2**20 // 2
        x = torch.ones(n, dtype=torch.bfloat16, device=device)
        part = torch.empty(programs, dtype=torch.float32, device=device)
        iters = triton.cdiv(n, programs * block)
        t = timer(
            lambda x=x, part=part, n=n, iters=iters: kernels.read_sweep_kernel[(programs,)](
                x, part, n, iters, BLOCK=block, num_warps=8
            ),
            device,
            reps,
        )
        y = torch.empty_like(x)
        tc = timer(lambda x=x, y=y: y.copy_(x), device, reps)
        rows.append({"mib": mib, "read_bytes_s": 2 * n / t, "copy_bytes_s": 2 * 2 * n / tc})
        del x, y
    return {
        "sizes": rows,
        "read_bytes_s": max(r["read_bytes_s"] for r in rows),
        "copy_bytes_s": max(r["copy_bytes_s"] for r in rows),
    }


def _decode_inputs(
    shape: ModelShape,
    batch: int,
    ctx: int,
    block_size: int,
    dtype: torch.dtype,
    device: torch.device,
    scattered: bool,
    seed: int = 0,
):
    per_seq = triton.cdiv(ctx, block_size)
    num_blocks = batch * per_seq
    order = list(range(num_blocks))
    if scattered:
        random.Random(seed).shuffle(order)
    tables = torch.tensor(order, dtype=torch.int32, device=device).view(batch, per_seq)
    gen = torch.Generator(device=device).manual_seed(seed)
    k = torch.randn((num_blocks, block_size, shape.kv_heads, shape.head_dim), device=device, dtype=dtype, generator=gen)
    v = torch.randn_like(k)
    q = torch.randn((batch, shape.q_heads, shape.head_dim), device=device, dtype=dtype, generator=gen)
    lens = torch.full((batch,), ctx, dtype=torch.int32, device=device)
    return q, k, v, tables, lens


def decode_row(
    shape: ModelShape,
    batch: int,
    ctx: int,
    block_size: int,
    dtype: torch.dtype,
    device: torch.device,
    hbm_bytes_s: float,
    datasheet: float | None,
    reps: int = 20,
    sdpa: bool = True,
) -> dict:
    """One grid point: paged (scattered), contiguous (identity table) and SDPA times for one layer."""
    elem = torch.finfo(dtype).bits // 8
    kv_bytes = 2 * batch * ctx * shape.kv_heads * shape.head_dim * elem
    qo_bytes = 2 * batch * shape.q_heads * shape.head_dim * elem
    row: dict = {"batch": batch, "context": ctx, "bytes": kv_bytes + qo_bytes}
    for name, scattered in (("paged", True), ("contiguous", False)):
        q, k, v, tables, lens = _decode_inputs(shape, batch, ctx, block_size, dtype, device, scattered)
        out = torch.empty_like(q)
        t = timer(
            lambda q=q, k=k, v=v, tables=tables, lens=lens, out=out: ops.paged_decode(
                q, k, v, tables, lens, max_context=ctx, out=out
            ),
            device,
            reps,
        )
        row[f"{name}_s"] = t
        del k, v
    row["bytes_s"] = row["bytes"] / row["paged_s"]
    row["frac_measured_hbm"] = row["bytes_s"] / hbm_bytes_s
    row["frac_datasheet"] = row["bytes_s"] / datasheet if datasheet else None
    row["paged_overhead"] = row["paged_s"] / row["contiguous_s"] - 1.0
    if sdpa:
        gen = torch.Generator(device=device).manual_seed(1)
        qs = torch.randn((batch, shape.q_heads, 1, shape.head_dim), device=device, dtype=dtype, generator=gen)
        ks = torch.randn((batch, shape.kv_heads, ctx, shape.head_dim), device=device, dtype=dtype, generator=gen)
        vs = torch.randn_like(ks)
        f = torch.nn.functional.scaled_dot_product_attention
        row["sdpa_s"] = timer(lambda: f(qs, ks, vs, enable_gqa=True), device, reps)
        row["sdpa_bytes_s"] = row["bytes"] / row["sdpa_s"]
        del ks, vs
    return row


def run(
    batches: list[int],
    contexts: list[int],
    *,
    shape: ModelShape = LLAMA3_8B,
    block_size: int = 16,
    dtype: torch.dtype = torch.bfloat16,
    device: torch.device | None = None,
    reps: int = 20,
    read_sizes_mib: tuple[int, ...] = (256, 1024, 4096),
    sdpa: bool = True,
) -> dict:
    """The whole bench: the read sweep first, then one row per (batch, context)."""
    device = device or torch.device("cuda")
    hbm = read_bandwidth(device, read_sizes_mib, reps)
    sheet = datasheet_bytes_s(device)
    rows = [
        decode_row(shape, b, c, block_size, dtype, device, hbm["read_bytes_s"], sheet, reps, sdpa)
        for b in batches
        for c in contexts
    ]
    return {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu (Triton interpreter)",
        "shape": shape.name,
        "block_size": block_size,
        "dtype": str(dtype).removeprefix("torch."),
        "hbm": hbm,
        "datasheet_bytes_s": sheet,
        "rows": rows,
    }


def table(report: dict) -> str:
    hbm = report["hbm"]
    lines = [
        f"{report['device']}  {report['shape']}  block_size={report['block_size']}  {report['dtype']}",
        f"HBM read sweep {hbm['read_bytes_s'] / 1e12:.2f} TB/s, copy {hbm['copy_bytes_s'] / 1e12:.2f} TB/s"
        + (f", datasheet {report['datasheet_bytes_s'] / 1e12:.2f} TB/s" if report["datasheet_bytes_s"] else ""),
        f"{'batch':>5} {'ctx':>6} {'paged us':>9} {'TB/s':>6} {'%hbm':>5} {'%sheet':>6} {'contig us':>9} "
        f"{'ovh %':>6} {'sdpa us':>8}",
    ]
    for r in report["rows"]:
        sheet = f"{100 * r['frac_datasheet']:6.1f}" if r["frac_datasheet"] else f"{'-':>6}"
        sdpa = f"{r['sdpa_s'] * 1e6:8.1f}" if "sdpa_s" in r else f"{'-':>8}"
        lines.append(
            f"{r['batch']:>5} {r['context']:>6} {r['paged_s'] * 1e6:9.1f} {r['bytes_s'] / 1e12:6.2f} "
            f"{100 * r['frac_measured_hbm']:5.1f} {sheet} {r['contiguous_s'] * 1e6:9.1f} "
            f"{100 * r['paged_overhead']:6.1f} {sdpa}"
        )
    return "\n".join(lines)
