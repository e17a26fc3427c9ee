"""The commands whose work lives beside sims/: ``build`` (sitebuild/), ``serve`` (web/server/),
``sweep`` and ``plan`` (sweep/), ``replay`` (realsys/) and ``gpu`` (gpu_backend/). Each imports its
edge lazily, inside the command, so sims/ alone still runs ``list``, ``run`` and ``trace``."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from sims.cli import args as arg
from sims.cli.args import UsageError
from sims.cli.output import table
from sims.core.limits import MAX_DURATION, show


def cmd_build(args: argparse.Namespace) -> int:
    out = arg.folder(args.out, "--out")
    arg.edge("sitebuild", "site").build(out)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    dist = arg.folder(args.dist, "--dist")
    server = arg.edge("web.server", "serve")  # it binds first: a port in use is one line, before any worker
    sweep = Path(args.sweep) if args.sweep else None
    if sweep is not None and not (sweep.is_file() and sweep.suffix == ".jsonl"):
        raise UsageError(f"--sweep: {show(args.sweep, 120)} is not a .jsonl results file")
    return server.main(host=args.host, port=args.port, gpu=args.gpu, dist=dist, real=args.real, sweep=sweep) or 0


def cmd_sweep(args: argparse.Namespace) -> int:
    """Processes, files and wall time live in sweep/; Ray is imported only for --ray."""
    return importlib.import_module("sweep.cli").cmd_sweep(args)


def cmd_plan(args: argparse.Namespace) -> int:
    return importlib.import_module("sweep.cli").cmd_plan(args)


def cmd_replay(args: argparse.Namespace) -> int:
    """Real servers, sockets and wall time live in realsys/."""
    return importlib.import_module("realsys.cli").cmd_replay(args, table)


def _drain(s) -> None:
    s.add_argument(
        "--drain",
        action="store_true",
        help="engine/cluster: stop arrivals at the duration and run until every request finishes (no censored figures)",
    )


def _where(s) -> None:
    s.add_argument("--ray", nargs="?", const=True, metavar="ADDRESS", help="run on Ray: a local cluster, or ADDRESS")
    s.add_argument("--workers", type=arg.positive(int), help="local processes (default: every core) or Ray CPUs")


def _build_flags(s: argparse.ArgumentParser) -> None:
    s.add_argument("--out", default="dist", help="output folder (default: dist)")
    s.set_defaults(fn=cmd_build)


def _serve_flags(s: argparse.ArgumentParser) -> None:
    s.add_argument("--host", type=arg.host, default="127.0.0.1", help="bind address (default: 127.0.0.1)")
    s.add_argument("--port", type=arg.port, default=8000, help="port, 1 to 65535 (default: 8000)")
    s.add_argument("--gpu", action="store_true", help="enable GPU replay (needs CUDA and the gpu extra)")
    s.add_argument("--dist", default="dist", help="site folder, built first if missing or stale")
    s.add_argument("--real", action="store_true", help="offer replays on real Redis and nginx on the preset pages")
    s.add_argument("--sweep", metavar="F.jsonl", type=arg.path, help="show a finished sweep's results at /sweep/")
    s.set_defaults(fn=cmd_serve)


def _sweep_flags(s: argparse.ArgumentParser) -> None:
    s.add_argument("preset", help="preset name or a .toml file")
    s.add_argument(
        "--grid",
        action="append",
        metavar="KEY=VALUES",
        help="KEY=V1,V2,... or KEY=LO:HI[:STEP]; KEY is workload.X, defaults.X or panels.NAME.X (repeatable)",
    )
    s.add_argument(
        "--seeds",
        type=arg.positive(int),
        default=5,
        help="seeds per cell: the preset's seed and the ones after (default 5, at most 10000)",
    )
    s.add_argument("--panels", help="comma-separated panel names to keep")
    s.add_argument("--out", metavar="F", help="results file: .jsonl, .csv or .parquet (journaled as it runs)")
    s.add_argument("--resume", action="store_true", help="continue an interrupted sweep into the same --out")
    _where(s)
    s.add_argument(
        "--max-cells",
        type=arg.positive(int),
        default=1000,
        help="refuse a larger grid unless --yes (default 1000; never more than 50000 cells or runs)",
    )
    s.add_argument("--yes", action="store_true", help="run a grid larger than --max-cells")
    s.add_argument("--metrics", help="comma-separated metrics for the summary and the plot")
    s.add_argument("--plot", metavar="F.html", help="write a self-contained page: each metric against the first key")
    _drain(s)
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(fn=cmd_sweep)


def _plan_flags(s: argparse.ArgumentParser) -> None:
    s.add_argument("preset", help="preset name or a .toml file")
    s.add_argument("--vary", required=True, metavar="KEY=LO:HI[:STEP]", help="the knob and its candidate values")
    s.add_argument("--target", action="append", metavar="METRIC<X", help='e.g. "ttft_p90<1.0" (repeatable)')
    s.add_argument(
        "--seeds", type=arg.positive(int), default=10, help="seeds per candidate (default 10, at most 10000)"
    )
    s.add_argument("--panel", required=True, help="the panel whose metrics must meet the targets")
    s.add_argument(
        "--space",
        action="append",
        metavar="KEY=V1,V2,...",
        help="engine/cluster: a deployment choice to search over (repeatable; e.g. defaults.gpu=H100-80GB,H200); "
        "the answer is then the cheapest configuration in $/hour that meets every target (docs/cost.md)",
    )
    s.add_argument(
        "--plot",
        metavar="F.html",
        help="with --space: write a self-contained Pareto plot, tokens/s per GPU against tokens/s per user",
    )
    s.add_argument(
        "--model", metavar="NAME|PATH", help="engine/cluster: every panel runs this model (a config.json or a name)"
    )
    s.add_argument("--confidence", type=float, default=0.95, help="one-sided confidence of the bound (default 0.95)")
    s.add_argument(
        "--load",
        metavar="KEY=V1,V2,...",
        help="with --space: the answer at each value of a load knob (e.g. workload.rate=1,2,4), in increasing "
        "order; a configuration that misses at a lower value is not run at a higher one",
    )
    s.add_argument(
        "--resume",
        metavar="F.jsonl",
        help="with --space: keep each configuration's runs in F as they finish; run again with the same "
        "inputs to skip what F holds (an interrupted search loses at most the configuration in flight)",
    )
    _where(s)
    _drain(s)
    s.add_argument("--json", action="store_true", help='print {"answer", "feasible", "margins", "runs"}')
    s.set_defaults(fn=cmd_plan)


def _replay_flags(s: argparse.ArgumentParser) -> None:
    s.add_argument("preset", help="a cache preset (--against redis) or a rate-limit preset (--against nginx)")
    s.add_argument("--against", required=True, choices=("redis", "nginx"), help="the real system")
    s.add_argument("--address", metavar="HOST:PORT", help="a running Redis to use instead of starting one")
    s.add_argument(
        "--speed",
        type=arg.positive(float),
        default=1.0,
        help="virtual seconds per wall second, at most 100 (default 1)",
    )
    s.add_argument("--seed", type=arg.seed, help="stream seed, 0 to 2^53-1 (default: the preset's)")
    s.add_argument(
        "--duration", type=arg.duration, help=f"virtual seconds, at most {MAX_DURATION:g} (default: the preset's)"
    )
    s.add_argument("--json", action="store_true", help="print the run as one JSON object")
    s.set_defaults(fn=cmd_replay)


def add(sub) -> None:
    sub.add_parser("build", help="build the static site into a folder", fill=_build_flags)
    sub.add_parser("serve", help="serve the site and the JSON API on 127.0.0.1", fill=_serve_flags)
    sub.add_parser(
        "sweep", help="run a grid of parameters over N seeds; rows per (cell, seed, panel)", fill=_sweep_flags
    )
    sub.add_parser(
        "plan",
        help="the smallest value of one knob whose confidence bound meets every target; with --space, the cheapest deployment",
        fill=_plan_flags,
    )
    sub.add_parser(
        "replay", help="play a preset's stream against real Redis or nginx, beside the simulator", fill=_replay_flags
    )
    # listed for --help only: main() hands everything after `gpu` to gpu_backend's own parser
    sub.add_parser("gpu", help="GPU replay, calibration and benchmarks (gpu extra; see `contention gpu --help`)")
