"""Compile every kernel configuration for a GPU target on a machine without a GPU (Triton's
ahead-of-time path and its bundled ptxas). Catches lowering errors the interpreter cannot see and
reports, per configuration, whether ``tl.dot`` became tensor-core MMA (wgmma on sm_90, mma.sync
below) and the registers / spill bytes ptxas reports.

``python -m gpu_backend.aot_check [--arch 90] [--json] [NAME ...]``; configurations are the shapes
the replay and bench launch (Llama-3-8B heads: head_dim 128, 8 KV heads, block size 16).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from gpu_backend import kernels


@dataclass(frozen=True)
class Config:
    """One kernel specialisation: argument types in order (name, type, divisible by 16?) and constexprs."""

    name: str
    kernel: object
    args: tuple[tuple[str, str, bool], ...]
    constexprs: dict
    num_warps: int = 4
    needs_mma: bool = False  # the kernel has tl.dot: it must lower to tensor-core MMA


def _decode(dt: str, group: int, split: bool) -> Config:
    mid = "*fp32" if split else f"*{dt}"
    args = (
        ("Q", f"*{dt}", True),
        ("K", f"*{dt}", True),
        ("V", f"*{dt}", True),
        ("BlockTables", "*i32", True),
        ("ContextLens", "*i32", True),
        ("Out", f"*{dt}", True),
        ("MidO", mid, True),
        ("MidLse", mid, True),
        ("scale_log2", "fp32", False),
        ("stride_qb", "i32", True),
        ("stride_qh", "i32", True),
        ("stride_kb", "i32", True),
        ("stride_ks", "i32", True),
        ("stride_kh", "i32", True),
        ("stride_vb", "i32", True),
        ("stride_vs", "i32", True),
        ("stride_vh", "i32", True),
        ("stride_bt", "i32", False),
        ("stride_ob", "i32", True),
        ("stride_oh", "i32", True),
        ("stride_mb", "i32", True),
        ("stride_mh", "i32", True),
        ("stride_ms", "i32", True),
        ("stride_lb", "i32", False),
        ("stride_lh", "i32", False),
        ("max_blocks", "i32", False),
        ("tokens_per_split", "i32", True),
        ("static_iters", "i32", False),
    )
    const = dict(
        GROUP=group,
        GROUP_PAD=max(16, group),
        HEAD_DIM=128,
        BLOCK_D=128,
        BLOCK_SIZE=16,
        BLOCK_N=64,
        SPLIT=split,
        DYNAMIC_LOOP=True,
    )
    return Config(
        f"decode-{dt}-g{group}-{'split' if split else 'nosplit'}",
        kernels.decode_split_kernel,
        args,
        const,
        needs_mma=True,
    )


def _merge() -> Config:
    args = (
        ("MidO", "*fp32", True),
        ("MidLse", "*fp32", True),
        ("ContextLens", "*i32", True),
        ("Out", "*bf16", True),
        ("stride_mb", "i32", True),
        ("stride_mh", "i32", True),
        ("stride_ms", "i32", True),
        ("stride_lb", "i32", False),
        ("stride_lh", "i32", False),
        ("stride_ob", "i32", True),
        ("stride_oh", "i32", True),
        ("tokens_per_split", "i32", True),
        ("num_splits", "i32", False),
    )
    return Config("merge-bf16", kernels.decode_merge_kernel, args, dict(HEAD_DIM=128, BLOCK_D=128, BLOCK_S=8))


def _extend(dt: str, group: int) -> Config:
    gp = 1 << max(0, (group - 1).bit_length())
    block_m = max(16, 64 // gp)
    args = (
        ("Q", f"*{dt}", True),
        ("K", f"*{dt}", True),
        ("V", f"*{dt}", True),
        ("BlockTables", "*i32", True),
        ("ContextLens", "*i32", True),
        ("QueryStart", "*i32", True),
        ("Out", f"*{dt}", True),
        ("scale_log2", "fp32", False),
        ("stride_qt", "i32", True),
        ("stride_qh", "i32", True),
        ("stride_kb", "i32", True),
        ("stride_ks", "i32", True),
        ("stride_kh", "i32", True),
        ("stride_vb", "i32", True),
        ("stride_vs", "i32", True),
        ("stride_vh", "i32", True),
        ("stride_bt", "i32", False),
        ("stride_ot", "i32", True),
        ("stride_oh", "i32", True),
        ("max_blocks", "i32", False),
        ("static_iters", "i32", False),
    )
    const = dict(
        GROUP=group,
        GROUP_PAD=gp,
        HEAD_DIM=128,
        BLOCK_D=128,
        BLOCK_SIZE=16,
        BLOCK_M=block_m,
        BLOCK_N=64,
        DYNAMIC_LOOP=True,
    )
    return Config(
        f"extend-{dt}-g{group}",
        kernels.extend_kernel,
        args,
        const,
        num_warps=8 if block_m * gp >= 128 else 4,
        needs_mma=True,
    )


def _kv_write(dt: str) -> Config:
    args = (
        ("Knew", f"*{dt}", True),
        ("Vnew", f"*{dt}", True),
        ("K", f"*{dt}", True),
        ("V", f"*{dt}", True),
        ("SlotMapping", "*i64", True),
        ("stride_nt", "i32", True),
        ("stride_nh", "i32", True),
        ("stride_kb", "i32", True),
        ("stride_ks", "i32", True),
        ("stride_kh", "i32", True),
        ("stride_vb", "i32", True),
        ("stride_vs", "i32", True),
        ("stride_vh", "i32", True),
    )
    const = dict(NUM_KV_HEADS=8, HEAD_DIM=128, BLOCK_H=8, BLOCK_D=128, BLOCK_SIZE=16)
    return Config(f"kvwrite-{dt}", kernels.kv_write_kernel, args, const)


def _read_sweep() -> Config:
    args = (("X", "*bf16", True), ("Partial", "*fp32", True), ("n", "i32", False), ("iters", "i32", False))
    return Config("read-sweep", kernels.read_sweep_kernel, args, dict(BLOCK=4096), num_warps=8)


def configs() -> list[Config]:
    out = [_decode(dt, g, sp) for dt in ("bf16", "fp16") for g in (1, 4, 8) for sp in (False, True)]
    out += [_extend(dt, g) for dt in ("bf16", "fp16") for g in (1, 4, 8)]
    return out + [_merge(), _kv_write("bf16"), _read_sweep()]


def _ptxas(arch: int) -> str:
    """The ptxas Triton itself uses for ``arch`` (the API moved between 3.6 and 3.9)."""
    from triton.backends.nvidia import compiler as nv

    try:
        return nv.get_ptxas(arch).path
    except TypeError:
        return nv.get_ptxas().path


def _ptxas_stats(ptx: str, arch: int) -> dict:
    """Registers and spill bytes from ``ptxas -v``."""
    sm = f"sm_{arch}a" if arch >= 90 else f"sm_{arch}"
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        proc = subprocess.run(
            [_ptxas(arch), "-v", f"--gpu-name={sm}", src, "-o", os.path.join(d, "k.cubin")],
            capture_output=True,
            text=True,
            timeout=300,
        )
    text = proc.stdout + proc.stderr
    regs = re.search(r"Used (\d+) registers", text)
    spills = [int(a) + int(b) for a, b in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)]
    return {"regs": int(regs.group(1)) if regs else None, "spill_bytes": max(spills, default=0)}


def compile_one(cfg: Config, arch: int = 90) -> dict:
    """Compile ``cfg`` for sm_<arch>; returns {name, ok, seconds, mma, regs, spill_bytes, shared, error}."""
    signature = {n: t for n, t, _ in cfg.args} | {k: "constexpr" for k in cfg.constexprs}
    attrs = {(i,): [["tt.divisibility", 16]] for i, (_, _, div) in enumerate(cfg.args) if div}
    t0 = time.perf_counter()
    res: dict = {
        "name": cfg.name,
        "ok": False,
        "mma": None,
        "regs": None,
        "spill_bytes": None,
        "shared": None,
        "error": "",
    }
    try:
        src = ASTSource(cfg.kernel, signature, cfg.constexprs, attrs)
        target = GPUTarget("cuda", arch, 32)
        backend = triton.compiler.make_backend(target)
        options = backend.parse_options({"num_warps": cfg.num_warps})
        compiled = triton.compile(src, target=target, options=options.__dict__)
        ptx = compiled.asm["ptx"]
        res["mma"] = ("wgmma" in ptx) or ("mma.sync" in ptx)  # 16-row tiles get mma.sync, 64+ may get wgmma
        res["shared"] = compiled.metadata.shared
        res.update(_ptxas_stats(ptx, arch))
        res["ok"] = bool(res["mma"]) or not cfg.needs_mma
        if not res["ok"]:
            res["error"] = "tl.dot did not lower to tensor-core MMA"
    except Exception as exc:  # report the config and go on
        res["error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    res["seconds"] = round(time.perf_counter() - t0, 2)
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpu_backend.aot_check")
    p.add_argument("names", nargs="*", help="configuration names (default: all)")
    p.add_argument("--arch", type=int, default=90, help="compute capability x10 (90 = H100/H200)")
    p.add_argument("--list", action="store_true", help="print the configuration names")
    args = p.parse_args(argv)
    todo = configs()
    if args.list:
        print("\n".join(c.name for c in todo))
        return 0
    if args.names:
        known = {c.name: c for c in todo}
        bad = [n for n in args.names if n not in known]
        if bad:
            print(f"error: unknown configuration(s) {', '.join(bad)}", file=sys.stderr)
            return 2
        todo = [known[n] for n in args.names]
    failed = 0
    for cfg in todo:
        res = compile_one(cfg, args.arch)
        failed += not res["ok"]
        print(json.dumps(res), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
