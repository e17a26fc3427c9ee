"""``contention gpu status | replay | bench | calibrate``.

Bad input exits 2 with one line; a missing CUDA GPU exits 1 with one line saying so. ``--device cpu``
runs the same code in Triton's interpreter (set up here, before the kernels are defined): slow, for
tiny shapes and for checking the plumbing on a machine without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


class UsageError(Exception):
    """Bad input: one line, exit 2."""


class NoDevice(Exception):
    """The command needs a CUDA GPU and none is usable: one line, exit 1."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise UsageError(f"{self.prog}: {message}")


def _int_list(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _device(args: argparse.Namespace) -> str:
    """'cuda' when usable; 'cpu' only on request (the interpreter is switched on here)."""
    if args.device == "cpu":
        if "gpu_backend.kernels" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
            raise UsageError("--device cpu: the kernels were already compiled for the GPU in this process")
        os.environ["TRITON_INTERPRET"] = "1"
        return "cpu"
    import gpu_backend

    st = gpu_backend.status()
    if not st["available"]:
        raise NoDevice(f"no CUDA GPU: {st['reason']} (for a slow CPU dry run add --device cpu --shape tiny)")
    return "cuda"


def _emit(obj: dict, args: argparse.Namespace, text: str) -> None:
    if getattr(args, "out", None):
        Path(args.out).write_text(json.dumps(obj, indent=1))
    print(json.dumps(obj) if args.json else text)


def cmd_status(args: argparse.Namespace) -> int:
    import gpu_backend

    st = gpu_backend.status()
    print(
        json.dumps(st)
        if args.json
        else (f"available: {st['device']}" if st["available"] else f"not available: {st['reason']}")
    )
    return 0 if st["available"] else 1


def _check_shape(args: argparse.Namespace) -> None:
    from gpu_backend.spec import shape_named

    shape_named(args.shape)


def cmd_replay(args: argparse.Namespace) -> int:
    from gpu_backend.spec import engine_panel

    _check_shape(args)
    engine_panel(args.preset, args.panel)  # bad input fails here, before any device is touched
    device = _device(args)
    from gpu_backend import replay

    result = replay.run(
        args.preset,
        args.seed,
        args.duration,
        panel=args.panel,
        device=device,
        shape=args.shape,
        dtype=args.dtype,
        full_model=args.full_model,
        max_steps=args.max_steps,
        keep_steps=bool(args.out),
    )
    _emit(result, args, replay.summary_text(result))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    _check_shape(args)
    device = _device(args)
    import torch

    from gpu_backend import bench
    from gpu_backend.replay import DTYPES
    from gpu_backend.spec import shape_named

    shape = shape_named(args.shape)
    sizes = (1,) if device == "cpu" else (256, 1024, 4096)
    report = bench.run(
        args.batches,
        args.contexts,
        shape=shape,
        block_size=args.block_size,
        dtype=DTYPES[args.dtype],
        device=torch.device(device),
        reps=args.reps,
        read_sizes_mib=sizes,
        sdpa=not args.no_sdpa,
    )
    _emit(report, args, bench.table(report))
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from gpu_backend import calibrate

    runs = []
    for f in args.from_files or []:
        try:
            runs.append(json.loads(Path(f).read_text()))
        except json.JSONDecodeError as exc:
            raise UsageError(f"{f}: not a replay JSON file ({exc.msg} at line {exc.lineno})") from None
    if args.presets:
        from gpu_backend.spec import engine_panel

        _check_shape(args)
        for name in args.presets:
            engine_panel(name, None)
        device = _device(args)
        from gpu_backend import replay

        for name in args.presets:
            runs.append(
                replay.run(
                    name,
                    args.seed,
                    args.duration,
                    device=device,
                    shape=args.shape,
                    dtype=args.dtype,
                    full_model=not args.attention_only,
                    max_steps=args.max_steps,
                    keep_steps=True,
                )
            )
    if not runs:
        raise UsageError("calibrate: give presets to replay, or --from replay.json files")
    from gpu_backend import replay

    model, report = replay.calibrate_runs(runs, gpu=args.gpu_name, model=args.model_name)
    report["written"] = None
    if not args.dry_run:
        report["written"] = str(calibrate.write_profile(report["after"], model.gpu, args.profile_out, report))
    lines = [f"calibrated {model.gpu} on {report['steps']} steps ({report['decode_steps']} decode-only)"]
    for k in calibrate.PARAMS:
        lines.append(f"  {k}: {report['before'][k]:.4g} -> {report['after'][k]:.4g}")
    lines.append(
        f"  mean |sim - measured| / measured: {report['mean_abs_rel_err_before']:.1%} -> "
        f"{report['mean_abs_rel_err_after']:.1%}"
    )
    if report["written"]:
        lines.append(f"  wrote [{model.gpu}] to {report['written']}")
    _emit(report, args, "\n".join(lines))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="contention gpu", description="GPU replay, calibration and benchmarks (Triton paged attention).")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    def common(s: argparse.ArgumentParser, shape: str = "Llama-3-8B") -> None:
        s.add_argument(
            "--device",
            choices=("cuda", "cpu"),
            default="cuda",
            help="cuda (default) or cpu (Triton interpreter: tiny shapes only)",
        )
        s.add_argument("--shape", default=shape, help="synthetic model shape: Llama-3-8B (default) or tiny")
        s.add_argument("--dtype", choices=("bf16", "fp16", "fp32"), default="bf16", help="KV and activation dtype")
        s.add_argument("--json", action="store_true", help="print JSON")
        s.add_argument("--out", metavar="F", help="also write the full JSON result to F")

    s = sub.add_parser("status", help="is a CUDA GPU usable? (exit 1 if not)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(fn=cmd_status)

    s = sub.add_parser("replay", help="replay a preset's engine steps on the GPU, measured beside simulated")
    s.add_argument("preset", help="an engine preset (see `contention list`)")
    s.add_argument("--seed", type=int, help="stream seed (default: the preset's)")
    s.add_argument("--duration", type=float, help="virtual seconds (default: the preset's)")
    s.add_argument("--panel", help="which panel's engine to replay (default: the first)")
    s.add_argument("--full-model", action="store_true", help="run the whole synthetic transformer, not only attention")
    s.add_argument("--max-steps", type=int, default=0, help="stop after N engine steps (0 = no limit)")
    common(s)
    s.set_defaults(fn=cmd_replay)

    s = sub.add_parser("bench", help="decode attention bandwidth vs HBM; paged vs contiguous; SDPA reference")
    s.add_argument("--batches", type=_int_list, default=[1, 8, 32, 64, 128], help="comma-separated batch sizes")
    s.add_argument(
        "--contexts", type=_int_list, default=[512, 1024, 4096, 8192], help="comma-separated context lengths"
    )
    s.add_argument("--block-size", type=_positive_int, default=16, help="tokens per KV block")
    s.add_argument("--reps", type=_positive_int, default=20, help="timed repetitions per point")
    s.add_argument("--no-sdpa", action="store_true", help="skip the torch SDPA reference")
    common(s)
    s.set_defaults(fn=cmd_bench)

    s = sub.add_parser("calibrate", help="fit the cost model's efficiency constants to replay measurements")
    s.add_argument("presets", nargs="*", help="engine presets to replay with the full synthetic model")
    s.add_argument("--from", dest="from_files", nargs="+", metavar="F", help="replay JSON files (replay --out F)")
    s.add_argument("--seed", type=int, help="stream seed (default: each preset's)")
    s.add_argument("--duration", type=float, help="virtual seconds per preset")
    s.add_argument("--max-steps", type=int, default=2000, help="engine steps per preset (0 = no limit)")
    s.add_argument("--attention-only", action="store_true", help="replay attention only (no weight reads)")
    s.add_argument("--gpu-name", help="sims/hw/gpus.toml GPU to calibrate (default: from the replays' device)")
    s.add_argument("--model-name", help="sims/hw/models model to compare with (default: the replayed shape)")
    s.add_argument("--profile-out", metavar="F", help="write a calibrated copy of sims/hw/efficiency.toml here instead")
    s.add_argument("--dry-run", action="store_true", help="fit and report, write nothing")
    common(s)
    s.set_defaults(fn=cmd_calibrate)
    return p


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
        if getattr(args, "max_steps", 0) < 0:
            raise UsageError("--max-steps must be >= 0")
        if getattr(args, "duration", None) is not None and not args.duration > 0:
            raise UsageError("--duration must be a positive number of seconds")
        return args.fn(args)
    except UsageError as exc:
        print(str(exc) if str(exc).startswith("contention") else f"error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, KeyError) as exc:
        msg = exc.args[0] if exc.args else str(exc)
        print(f"error: {msg}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"error: {exc.filename}: file not found", file=sys.stderr)
        return 2
    except (NoDevice, RuntimeError) as exc:
        print(f"error: {exc}".splitlines()[0], file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
