"""The ``contention`` command line (also ``python -m sims``).

list, run, trace and bench need only the standard library. build, serve and gpu import their
edges (jinja2, starlette/uvicorn, torch/triton) lazily, inside the command. Bad input exits 2
with one line naming the problem, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sims.core import api, presets, registry
from sims.core.presets import PresetError
from sims.core.scenario import Scenario
from sims.core.stream import TraceError


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(f"{self.prog}: {message}")


def _panels_arg(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise UsageError("--panels: expected a comma-separated list of panel names")
    return names


def _harness():
    """The wall-clock harness (``harness.py`` beside sims/): bench timings and the progress bar."""
    import importlib

    return importlib.import_module("harness")


def run_with_progress(sc: Scenario, label: str) -> Scenario:
    """Run to the end in 100 chunks, with the harness's terminal progress bar (wall time lives
    outside sims/)."""
    bar = _harness().Progress(label)
    chunks = 100
    for k in range(1, chunks + 1):
        sc.advance(sc.duration * k / chunks)
        bar.update(k / chunks)
    bar.close()
    return sc


def _fmt(v: object) -> str:
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e15:
            return f"{int(v)}" if abs(v) >= 1000 else f"{v:g}"
        return f"{v:.4g}"
    return str(v)


def table(result: dict) -> str:
    """The side-by-side table: one row per metric, one column per panel."""
    panels = result["panels"]
    names = list(panels)
    metrics: list[str] = []
    for m in panels.values():
        for k in m:
            if k not in metrics:
                metrics.append(k)
    rows = [["metric", *names]] + [[k, *(_fmt(panels[n].get(k, "")) for n in names)] for k in metrics]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = [
        f"{result['preset']} ({result['topic']})  seed={result['seed']}  duration={result['duration']:g}s  "
        f"stream={result['stream_sha256'][:12]}",
    ]
    for j, r in enumerate(rows):
        out.append("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


# -- commands ---------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace) -> int:
    items = presets.all_presets()
    if args.json:
        print(json.dumps([api.describe(p, summary=True) for p in items], indent=2))
        return 0
    width = max((len(p.name) for p in items), default=4)
    for p in items:
        print(f"{p.name.ljust(width)}  {p.topic:<9}  {p.title}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    preset = presets.load(args.preset)
    events = None
    if args.trace_in:
        from sims.core import stream

        events = stream.read(args.trace_in)
    sc = Scenario(preset, args.seed, args.duration, _panels_arg(args.panels), events=events)
    run_with_progress(sc, args.preset)
    result = sc.result()
    if args.trace_out:
        from sims.core import stream

        stream.write(sc.run_events(), args.trace_out)
    if args.json:
        print(json.dumps(result))
    else:
        print(table(result))
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    topic = registry.load_topic(args.topic)
    spec = topic.trace
    values = {
        a.flag.lstrip("-").replace("-", "_"): getattr(args, a.flag.lstrip("-").replace("-", "_")) for a in spec.args
    }
    result = spec.run(args.policy, values, Path(args.trace))
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            if isinstance(v, list) and len(v) > 20:
                v = f"[{', '.join(map(str, v[:20]))}, ... ({len(v)} items)]"
            print(f"{k}: {v}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    bench = _harness()
    names = args.presets or presets.preset_names()
    for n in names:
        presets.load(n)
    report = bench.run(names, runs=args.runs, per_panel=not args.no_panels, progress=not args.json)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(bench.table(report))
    return 0


def _edge(module: str, extra: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise UsageError(
            f"this command needs the '{extra}' extra ({exc.name} is missing): pip install 'contention[{extra}]'"
        ) from None


def cmd_build(args: argparse.Namespace) -> int:
    _edge("sitebuild", "site").build(Path(args.out))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    server = _edge("web.server", "serve")
    return server.main(host=args.host, port=args.port, gpu=args.gpu, dist=Path(args.dist)) or 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="contention", description="Live, seeded simulations of systems under contention.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser("list", help="list the presets")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(fn=cmd_list)

    s = sub.add_parser("run", help="run a preset to the end and compare its panels")
    s.add_argument("preset", help="preset name (see `contention list`)")
    s.add_argument("--seed", type=int, help="stream seed (default: the preset's)")
    s.add_argument("--duration", type=float, help="virtual seconds (default: the preset's)")
    s.add_argument("--panels", help="comma-separated panel names to keep")
    s.add_argument("--json", action="store_true", help="print the run as one JSON object")
    s.add_argument("--trace-out", metavar="F", help="write the canonical stream (JSON lines) to F")
    s.add_argument("--trace-in", metavar="F", help="replay a canonical stream from F instead of generating it")
    s.set_defaults(fn=cmd_run)

    s = sub.add_parser("trace", help="run one policy over your own trace file")
    tsub = s.add_subparsers(dest="topic", metavar="TOPIC", parser_class=_Parser)
    tsub.required = True
    for topic_name in registry.topic_names():  # every topic that declares a trace replay
        topic = registry.load_topic(topic_name)
        if topic.trace is None:
            continue
        t = tsub.add_parser(topic_name, help=topic.trace.help)
        t.add_argument("--policy", required=True, help=f"one of: {', '.join(sorted(registry.policies(topic_name)))}")
        for a in topic.trace.args:
            t.add_argument(a.flag, type=a.type, required=a.required, help=a.help)
        t.add_argument("--trace", required=True, metavar="F", help="the trace file")
        t.add_argument("--json", action="store_true", help="print JSON")
        t.set_defaults(fn=cmd_trace)

    s = sub.add_parser("bench", help="measure simulation throughput per preset (median of runs)")
    s.add_argument("presets", nargs="*", help="presets to measure (default: all)")
    s.add_argument("--runs", type=int, default=3, help="runs per measurement (median reported)")
    s.add_argument("--no-panels", action="store_true", help="skip the per-panel measurements")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(fn=cmd_bench)

    s = sub.add_parser("build", help="build the static site into a folder")
    s.add_argument("--out", default="dist", help="output folder (default: dist)")
    s.set_defaults(fn=cmd_build)

    s = sub.add_parser("serve", help="serve the site and the JSON API on 127.0.0.1")
    s.add_argument("--host", default="127.0.0.1", help="bind address (default: 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    s.add_argument("--gpu", action="store_true", help="enable GPU replay (needs CUDA and the gpu extra)")
    s.add_argument("--dist", default="dist", help="site folder, built first if missing or stale")
    s.set_defaults(fn=cmd_serve)

    # listed for --help only: main() hands everything after `gpu` to gpu_backend's own parser
    sub.add_parser("gpu", help="GPU replay, calibration and benchmarks (gpu extra; see `contention gpu --help`)")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ["gpu"]:  # everything after `gpu` belongs to gpu_backend's own parser
            return _edge("gpu_backend.cli", "gpu").main(argv[1:]) or 0
        args = build_parser().parse_args(argv)
        if getattr(args, "runs", 1) is not None and getattr(args, "runs", 1) < 1:
            raise UsageError("--runs must be at least 1")
        return args.fn(args)
    except (UsageError, PresetError, TraceError, ValueError) as exc:
        print(f"error: {exc}" if not str(exc).startswith("contention") else str(exc), file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"error: {exc.filename}: file not found", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
