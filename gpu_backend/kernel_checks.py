"""Kernel-vs-reference cases, runnable in a child process so a crash fails a case, not the test run.

``python -m gpu_backend.kernel_checks [--device cpu|cuda] [--json] [NAME ...]`` prints one JSON line per
case as it finishes: ``{"case", "ok", "max_err", "tol", "detail"}``. On CPU set ``TRITON_INTERPRET=1``
first (the module does so itself when CUDA is absent and the variable is unset). Case names list the
kernel, dtype, GQA ratio, block size, split mode: ``decode-fp16-g4-bs4-split3``.
"""

from __future__ import annotations

import os
import sys

if "TRITON_INTERPRET" not in os.environ:  # must precede the kernels' definition
    try:
        import torch as _torch

        if not _torch.cuda.is_available():
            os.environ["TRITON_INTERPRET"] = "1"
    except ModuleNotFoundError:
        pass

import argparse
import json
import random
from dataclasses import dataclass
from itertools import accumulate

import torch

from gpu_backend import ops, reference

_TOL = {torch.float32: 2e-4, torch.float16: 1.5e-2, torch.bfloat16: 4e-2}
_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


@dataclass(frozen=True)
class Case:
    """One comparison; ``lens`` are context lengths after the step, ``new`` the new tokens per sequence."""

    name: str
    kind: str  # decode | extend | kvwrite
    dtype: str
    group: int  # query heads per KV head
    block_size: int
    lens: tuple[int, ...]
    new: tuple[int, ...] = ()
    splits: int | None = 1  # decode only: 1 = off, None = auto
    kv_heads: int = 2
    head_dim: int = 16
    block_n: int | None = None
    block_m: int | None = None
    dynamic: bool | None = None


def scattered_tables(
    lens: list[int], block_size: int, rng: random.Random, spare: int = 3
) -> tuple[list[list[int]], int]:
    """Block tables drawn without replacement from a shuffled pool (non-contiguous, interleaved)."""
    need = [-(-n // block_size) for n in lens]
    num_blocks = sum(need) + spare
    pool = list(range(num_blocks))
    rng.shuffle(pool)
    tables, i = [], 0
    for n in need:
        tables.append(pool[i : i + n])
        i += n
    return tables, num_blocks


def _table_tensor(tables: list[list[int]], device: str) -> torch.Tensor:
    width = max(1, max(len(t) for t in tables))
    return torch.tensor([t + [0] * (width - len(t)) for t in tables], dtype=torch.int32, device=device)


def run_case(case: Case, device: str) -> dict:
    """Run one case on ``device``; returns the JSON-able result."""
    rng = random.Random(case.name)
    torch.manual_seed(rng.randrange(1 << 30))
    dtype = _DTYPES[case.dtype]
    lens = list(case.lens)
    tables, num_blocks = scattered_tables(lens, case.block_size, rng)
    hkv, d, bs = case.kv_heads, case.head_dim, case.block_size
    k_cache = torch.randn(num_blocks, bs, hkv, d, device=device).to(dtype)
    v_cache = torch.randn(num_blocks, bs, hkv, d, device=device).to(dtype)
    bt = _table_tensor(tables, device)
    cl = torch.tensor(lens, dtype=torch.int32, device=device)
    hq = hkv * case.group
    tol = _TOL[dtype]
    if case.kind == "kvwrite":
        new = list(case.new)
        slots = ops.slot_mapping(tables, [n - k for n, k in zip(lens, new, strict=True)], new, bs)
        slots[len(slots) // 2] = -1  # a padding row is skipped
        kn = torch.randn(len(slots), hkv, d, device=device).to(dtype)
        vn = torch.randn(len(slots), hkv, d, device=device).to(dtype)
        want_k, want_v = k_cache.clone().view(-1, hkv, d), v_cache.clone().view(-1, hkv, d)
        for j, s in enumerate(slots):
            if s >= 0:
                want_k[s], want_v[s] = kn[j], vn[j]
        ops.kv_write(kn, vn, k_cache, v_cache, torch.tensor(slots, dtype=torch.int64, device=device))
        ok = torch.equal(k_cache.view(-1, hkv, d), want_k) and torch.equal(v_cache.view(-1, hkv, d), want_v)
        return {"case": case.name, "ok": bool(ok), "max_err": 0.0 if ok else 1.0, "tol": 0.0, "detail": ""}
    if case.kind == "decode":
        q = torch.randn(len(lens), hq, d, device=device).to(dtype)
        got = ops.paged_decode(
            q, k_cache, v_cache, bt, cl, num_splits=case.splits, block_n=case.block_n, dynamic_loop=case.dynamic
        )
        qlens = [1] * len(lens)
    else:
        qlens = list(case.new)
        qs = torch.tensor([0, *accumulate(qlens)], dtype=torch.int32, device=device)
        q = torch.randn(sum(qlens), hq, d, device=device).to(dtype)
        got = ops.paged_extend(
            q, k_cache, v_cache, bt, cl, qs, block_m=case.block_m, block_n=case.block_n, dynamic_loop=case.dynamic
        )
    nonzero = [i for i, n in enumerate(lens) if n > 0]
    rows = [r for i in nonzero for r in range(sum(qlens[:i]), sum(qlens[: i + 1]))]
    want = reference.paged_attention(
        q.cpu()[rows],
        k_cache.cpu(),
        v_cache.cpu(),
        [tables[i] for i in nonzero],
        [lens[i] for i in nonzero],
        [qlens[i] for i in nonzero],
    )
    got_cpu = got.double().cpu()
    finite = bool(torch.isfinite(got_cpu).all())
    err = float((got_cpu[rows] - want).abs().max()) if rows else 0.0
    empty_rows = [r for r in range(got_cpu.shape[0]) if r not in set(rows)]
    empty_zero = all(float(got_cpu[r].abs().max()) == 0.0 for r in empty_rows)
    ok = finite and empty_zero and err <= tol
    detail = "" if finite else "non-finite output"
    if not empty_zero:
        detail = "an empty sequence produced non-zero output"
    return {"case": case.name, "ok": ok, "max_err": err, "tol": tol, "detail": detail}


def cases(device: str) -> list[Case]:
    """The interpreter set (tiny shapes, fp32/fp16) or the GPU set (Llama-sized heads, fp16/bf16)."""
    out: list[Case] = []
    if device == "cpu":
        lens = (5, 17, 30, 1)
        for dt in ("fp32", "fp16"):
            for g in (1, 4, 8):
                for splits in (1, 3, None):
                    out.append(
                        Case(
                            f"decode-{dt}-g{g}-bs4-split{splits or 'auto'}",
                            "decode",
                            dt,
                            g,
                            4,
                            lens,
                            splits=splits,
                            block_n=8,
                        )
                    )
        out.append(
            Case("decode-fp32-g4-bs16-dyn", "decode", "fp32", 4, 16, (40, 3, 70), splits=2, block_n=16, dynamic=True)
        )
        out.append(Case("decode-fp32-g4-bs4-empty", "decode", "fp32", 4, 4, (0, 9), splits=2, block_n=8))
        for dt in ("fp32", "fp16"):
            for g in (1, 4, 8):
                out.append(
                    Case(
                        f"extend-{dt}-g{g}-bs4",
                        "extend",
                        dt,
                        g,
                        4,
                        (7, 21, 12, 30),
                        new=(7, 5, 1, 13),
                        block_m=4,
                        block_n=8,
                    )
                )
        out.append(
            Case(
                "extend-fp32-g4-bs16-dyn",
                "extend",
                "fp32",
                4,
                16,
                (33, 20),
                new=(9, 20),
                block_m=8,
                block_n=16,
                dynamic=True,
            )
        )
        out.append(Case("kvwrite-fp16-bs4", "kvwrite", "fp16", 4, 4, (9, 14, 3), new=(9, 2, 1)))
        out.append(Case("kvwrite-fp32-bs16", "kvwrite", "fp32", 1, 16, (40, 17), new=(1, 17)))
        return out
    lens = (1, 200, 1000, 4096, 37)
    for dt in ("fp16", "bf16"):
        for g in (1, 4, 8):
            for splits in (1, None, 7):
                out.append(
                    Case(
                        f"decode-{dt}-g{g}-bs16-split{splits or 'auto'}",
                        "decode",
                        dt,
                        g,
                        16,
                        lens,
                        splits=splits,
                        kv_heads=8,
                        head_dim=128,
                    )
                )
            out.append(
                Case(
                    f"extend-{dt}-g{g}-bs16",
                    "extend",
                    dt,
                    g,
                    16,
                    (300, 1000, 64, 5),
                    new=(300, 77, 1, 5),
                    kv_heads=8,
                    head_dim=128,
                )
            )
    out.append(Case("decode-fp16-g4-bs32-empty", "decode", "fp16", 4, 32, (0, 513), splits=4, kv_heads=8, head_dim=128))
    out.append(Case("kvwrite-bf16-bs16", "kvwrite", "bf16", 4, 16, (300, 40), new=(300, 1), kv_heads=8, head_dim=128))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpu_backend.kernel_checks")
    p.add_argument("names", nargs="*", help="case names (default: all for the device)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--list", action="store_true", help="print the case names and exit")
    args = p.parse_args(argv)
    if args.device == "cpu" and os.environ.get("TRITON_INTERPRET") != "1":
        print("error: CPU cases need TRITON_INTERPRET=1 set before start", file=sys.stderr)
        return 2
    todo = cases(args.device)
    if args.list:
        print("\n".join(c.name for c in todo))
        return 0
    if args.names:
        known = {c.name: c for c in todo}
        bad = [n for n in args.names if n not in known]
        if bad:
            print(f"error: unknown case(s) {', '.join(bad)}", file=sys.stderr)
            return 2
        todo = [known[n] for n in args.names]
    failed = 0
    for case in todo:
        print(json.dumps({"case": case.name, "started": True}), flush=True)
        try:
            res = run_case(case, args.device)
        except Exception as exc:  # report and go on: one broken case must not hide the others
            res = {
                "case": case.name,
                "ok": False,
                "max_err": None,
                "tol": None,
                "detail": f"{type(exc).__name__}: {exc}",
            }
        failed += not res["ok"]
        print(json.dumps(res), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
