"""``contention diff PRESET --panels a,b``: the events at which two panels first decide
differently, each with both policies' reasons (the engine is ``sims.core.diverge``)."""

from __future__ import annotations

import argparse
import json

from sims.cli import args as arg
from sims.cli.args import UsageError
from sims.core import presets
from sims.core.limits import MAX_DURATION, show


def _limit(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 9) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {show(text)}")
    return int(text)


def cmd_diff(args: argparse.Namespace) -> int:
    from sims.core.diverge import Diverge

    preset = presets.load(args.preset)
    names = arg.panels(args.panels) or []
    if len(names) != 2:
        raise UsageError(f"--panels: expected two panel names, a,b; got {show(args.panels, 80)}")
    presets.select_panels(preset, names)  # an unknown name: one line listing the valid ones
    engine = Diverge(preset, names[0], names[1], seed=args.seed, duration=args.duration)
    found = engine.take(args.limit)
    total = engine.count_rest()
    if args.json:
        print(json.dumps({"divergences": [d.as_json() for d in found], "count": total, "compared": engine.end}))
        return 0
    a, b = names
    if not found:
        print(f"{a} and {b} decide alike on all {engine.end} events")
        return 0
    for d in found:
        print(f"#{d.index}  t={d.t:.3f} s  {d.event}")
        print(f"  {a}: {d.a.text if d.a else 'nothing'}: {d.reason_a}")
        print(f"  {b}: {d.b.text if d.b else 'nothing'}: {d.reason_b}")
    more = f" (first {len(found)} shown; --limit N for more)" if total > len(found) else ""
    print(f"{total} divergences in {engine.end} events{more}")
    return 0


def _flags(s: argparse.ArgumentParser) -> None:
    from sims.core.diverge import DEFAULT_LIMIT

    s.add_argument("preset", help="preset name (see `contention list`), or the path of your own preset file (.toml)")
    s.add_argument("--panels", required=True, help="the two panels to compare, a,b")
    s.add_argument("--limit", type=_limit, default=DEFAULT_LIMIT, help=f"divergences to show (default {DEFAULT_LIMIT})")
    s.add_argument("--seed", type=arg.seed, help="stream seed, 0 to 2^53-1 (default: the preset's)")
    s.add_argument(
        "--duration", type=arg.duration, help=f"virtual seconds, at most {MAX_DURATION:g} (default: the preset's)"
    )
    s.add_argument("--json", action="store_true", help="print {divergences: [...], count, compared}")
    s.set_defaults(fn=cmd_diff)


def add(sub) -> None:
    sub.add_parser("diff", help="where two panels first decide differently, and why", fill=_flags)
