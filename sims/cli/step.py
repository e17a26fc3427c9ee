"""``contention step``: the step-time model for one step, in its four parts (``sims.hw.step``;
the engine prices its steps with the same function)."""

from __future__ import annotations

import argparse
import json

from sims.cli import args as arg


def _count(text: str) -> int:
    """A non-negative integer of at most 12 digits."""
    if not (text.isascii() and text.isdigit() and len(text) <= 12):
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {arg.show(text)}")
    return int(text)


def cmd_step(args: argparse.Namespace) -> int:
    from sims.engine.cost import cost_model
    from sims.hw.step import FIT_PATH, load

    if args.tokens < 1:
        raise arg.UsageError("--tokens: expected at least 1")
    model = args.model
    if args.dtype or args.kv_dtype:
        model = {"config": model} | ({"weight_dtype": args.dtype} if args.dtype else {})
        model |= {"kv_cache_dtype": args.kv_dtype} if args.kv_dtype else {}
    cost = cost_model(args.gpu, model, args.tp or 0)
    t, c = args.tokens, args.context
    if args.decode:  # t sequences of one new token, c context tokens before them in all
        parts = cost.step.parts(0, 0, 0, t, c)
    else:  # one sequence: t new tokens after c cached ones, each attending to itself and before
        parts = cost.step.parts(t, t * c + t * (t + 1) // 2, c, 0, 0)
    out = {
        "gpu": cost.gpu,
        "model": cost.model,
        "tp": cost.tp,
        "tokens": t,
        "context": c,
        "seconds": parts.seconds,
        "parts": {
            "linear": parts.linear,
            "attention": parts.attention,
            "communication": parts.communication,
            "overhead": parts.overhead,
        },
    }
    if args.json:
        print(json.dumps(out))
        return 0
    err = load(FIT_PATH)["errors"]
    what = f"decode of {t} sequences over {c} context tokens" if args.decode else f"prefill of {t} tokens after {c}"
    fitted = f"fitted: {err['linear_median']:.1%} median, {err['linear_p90']:.1%} p90 error on {err['gpu']} data"
    notes = {
        "linear": fitted,
        "attention": "modelled from the GPU's peaks, not measured",
        "communication": f"NCCL all-reduce fit, {err['allreduce_median']:.1%} median error"
        if cost.tp > 1
        else "one GPU",
        "overhead": "final norm, logits of the sampled rows, host",
    }
    print(f"{cost.model} on {cost.tp}x {cost.gpu}, {what}: {parts.seconds * 1e3:.3f} ms")
    for name, value in out["parts"].items():
        print(f"  {name:<14}{value * 1e3:10.3f} ms  {notes[name]}")
    return 0


def _flags(s: argparse.ArgumentParser) -> None:
    s.add_argument("--gpu", required=True, help="A100-40GB A100-80GB H100-80GB H200 A40 L40S B200 MI300X")
    s.add_argument("--model", required=True, help="a shipped model (Llama-3-8B, ...) or a path to a config.json")
    s.add_argument("--tp", type=arg.positive(int), help="tensor-parallel GPUs (default: the model's)")
    s.add_argument("--tokens", type=_count, required=True, help="prefill: new tokens; --decode: sequences")
    s.add_argument("--context", type=_count, default=0, help="cached context tokens (in all, with --decode)")
    s.add_argument("--decode", action="store_true", help="T sequences decoding one token each")
    s.add_argument(
        "--dtype", choices=("bf16", "fp16", "fp8", "int8", "int4"), help="weight dtype (default: the config's)"
    )
    s.add_argument("--kv-dtype", choices=("auto", "fp8"), help="KV-cache dtype (default: the weights' 16 bits)")
    s.add_argument(
        "--json", action="store_true", help='print {"gpu","model","tp","tokens","context","seconds","parts"}'
    )
    s.set_defaults(fn=cmd_step)


def add(sub) -> None:
    sub.add_parser(
        "step", help="the step-time model: one step's seconds in linear/attention/communication/overhead", fill=_flags
    )
