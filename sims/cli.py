"""The ``contention`` command line (also ``python -m sims``).

list, run and trace need only sims/ (they run from sims/ alone, in CPython and in Pyodide). bench
needs the wall-clock harness (``contention_harness``, beside sims/); build, serve and gpu import
their edges (jinja2, starlette/uvicorn, torch/triton) lazily, inside the command.

One error path: every refusal (a bad flag, a broken preset, a malformed trace line, a file that
cannot be written) is an exception that ``main`` prints as one line, ``error: ...``, capped in
length, with exit status 2. Never a traceback.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import math
import os
import re
import signal
import sys
from pathlib import Path

from sims.core import api, presets, registry
from sims.core.limits import MAX_DURATION, parse_seed, show
from sims.core.presets import PresetError
from sims.core.scenario import Scenario
from sims.core.trace import TraceError

MAX_MESSAGE = 1000  # characters of an error line


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class Terminated(Exception):
    """SIGTERM arrived: unwind (removing a half-written --trace-out), then exit 143."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(f"{self.prog}: {message}")


# -- argument types: each refuses with a message naming the flag (argparse adds "argument --x:") --
def _seed(text: str) -> int:
    try:
        return parse_seed(text, "seed")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("seed: ")) from None


def _number(text: str) -> float:
    try:
        value = float(text) if len(text) <= 40 else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {show(text)}")
    return value


def _duration(text: str) -> float:
    value = _number(text)
    if not 0 < value <= MAX_DURATION:
        raise argparse.ArgumentTypeError(f"expected seconds > 0 and <= {MAX_DURATION:g}, got {show(text)}")
    return value


def _positive(typ: type):
    """A converter for trace flags: integers >= 1, or finite numbers > 0."""

    def convert(text: str):
        if typ is int:
            if not (text.isascii() and text.isdigit() and len(text) <= 18) or int(text) < 1:
                raise argparse.ArgumentTypeError(f"expected a positive integer, got {show(text)}")
            return int(text)
        value = _number(text)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a number > 0, got {show(text)}")
        return value

    convert.__name__ = f"positive {typ.__name__}"
    return convert


def _path(text: str) -> str:
    if not text or "\0" in text:
        raise argparse.ArgumentTypeError(f"expected a file name, got {show(text)}")
    return text


def _port(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 5) or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port between 1 and 65535, got {show(text)}")
    return int(text)


_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


def _host(text: str) -> str:
    """An IPv4/IPv6 address or a host name; a dotted quad must be a valid address (256.1.1.1 is not)."""
    try:
        ipaddress.ip_address(text)
        return text
    except ValueError:
        pass
    if re.fullmatch(r"[0-9.]+", text) or not _HOSTNAME.match(text):
        raise argparse.ArgumentTypeError(f"expected an IP address or a host name, got {show(text)}")
    return text


def _panels_arg(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise UsageError("--panels: expected a comma-separated list of panel names")
    if len(set(names)) != len(names):
        raise UsageError(f"--panels: a panel is named twice in {show(text, 80)}")
    return names


def _harness():
    """The wall-clock harness (``contention_harness``, beside sims/): bench timings and the
    progress bar. None when it is absent (sims/ alone, e.g. in Pyodide)."""
    import importlib

    try:
        return importlib.import_module("contention_harness")
    except ModuleNotFoundError as exc:
        if exc.name != "contention_harness":
            raise
        return None


def _interactive() -> bool:
    try:
        return sys.stdout.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def run_with_progress(sc: Scenario, label: str) -> Scenario:
    """Run to the end in 100 chunks, with the harness's progress bar when there is a terminal to
    draw it on and the harness to time it (wall time lives outside sims/)."""
    harness = _harness() if _interactive() else None
    bar = harness.Progress(label) if harness is not None else None
    chunks = 100
    for k in range(1, chunks + 1):
        sc.advance(sc.duration * k / chunks)
        if bar is not None:
            bar.update(k / chunks)
    if bar is not None:
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
    """Every preset; a broken one is listed as unavailable with its reason (exit status 0)."""
    index = presets.load_index()
    if args.json:
        entries = [{**api.describe(p, summary=True), "available": True} for p in index.available]
        entries = sorted(entries + index.unavailable, key=lambda e: e["name"])
        print(json.dumps(entries, indent=2))
        return 0
    width = max((len(n) for n in presets.preset_names()), default=4)
    rows = [(p.name, f"{p.name.ljust(width)}  {p.topic:<9}  {p.title}") for p in index.available]
    rows += [
        (e["name"], f"{e['name'].ljust(width)}  {'-':<9}  unavailable: {_one_line(e['error'])}")
        for e in index.unavailable
    ]
    for _, line in sorted(rows):
        print(line)
    return 0


def _trace_schema(preset, seed: int | None, duration: float | None) -> dict:
    """What a --trace-in stream must look like for this preset: the kinds and fields of the
    preset's own stream, its scheduled events and its actions."""
    from sims.core import stream

    own = stream.build(preset, preset.seed if seed is None else seed, stream.horizon(preset, duration or 0.0))
    expect = stream.schema(own + [dict(e) for e in preset.events])
    for a in preset.actions:  # "break it" buttons: their events may appear in a recorded stream
        expect.setdefault(a["event"]["kind"], {"kind": "string"})
    return expect


def _write_trace(events, path: str) -> None:
    """``--trace-out``: SIGTERM while writing removes the half-written ``F.part``."""
    from sims.core import stream

    def on_term(signum, frame):
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, on_term)
    except (ValueError, AttributeError, OSError):  # not the main thread, or no signals (Pyodide)
        previous = None
    try:
        stream.write(events, path)
    except OSError as exc:
        raise UsageError(f"--trace-out: cannot write {show(path, 120)}: {exc.strerror or exc}") from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def cmd_run(args: argparse.Namespace) -> int:
    preset = presets.load(args.preset)
    panels = _panels_arg(args.panels)
    if args.trace_out is not None:
        out = Path(args.trace_out)
        if out.is_dir():
            raise UsageError(f"--trace-out: {show(args.trace_out, 120)} is a directory; expected a file name")
        if not out.parent.is_dir():
            raise UsageError(f"--trace-out: cannot write {show(args.trace_out, 120)}: its folder does not exist")
    events = None
    if args.trace_in:
        from sims.core import stream

        events = stream.read(args.trace_in, _trace_schema(preset, args.seed, args.duration))
    sc = Scenario(preset, args.seed, args.duration, panels, events=events, drain=args.drain)
    if events is None:
        run_with_progress(sc, preset.name)
    else:
        try:  # a replayed stream can still hold values the panels cannot use
            run_with_progress(sc, preset.name)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError, AssertionError) as exc:
            raise TraceError(
                f"{args.trace_in}: the stream does not fit preset {preset.name}: {type(exc).__name__}: {show(str(exc), 120)}"
            ) from None
    if args.drain:
        sc.run()  # arrivals stopped at the duration: run until every request finishes
    result = sc.result()
    if args.trace_out is not None:
        _write_trace(sc.run_events(), args.trace_out)
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
    if bench is None:
        raise UsageError("bench needs the wall-clock harness (contention_harness), which is not installed here")
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


def _folder(text: str, flag: str) -> Path:
    """An output folder: it may not exist yet, but it must not be a file."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag}: {show(text, 120)} is a file; expected a folder")
    return path


def _sweep_cli():
    """Sweeps and plans live beside sims/ (processes, files, wall time); Ray is imported only for --ray."""
    import importlib

    return importlib.import_module("sweep.cli")


def cmd_replay(args: argparse.Namespace) -> int:
    """Real servers, sockets and wall time live in realsys/, beside sims/."""
    import importlib

    return importlib.import_module("realsys.cli").cmd_replay(args, table)


def cmd_build(args: argparse.Namespace) -> int:
    out = _folder(args.out, "--out")
    _edge("sitebuild", "site").build(out)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    dist = _folder(args.dist, "--dist")
    server = _edge("web.server", "serve")  # it binds first: a port in use is one line, before any worker
    sweep = Path(args.sweep) if args.sweep else None
    if sweep is not None and not (sweep.is_file() and sweep.suffix == ".jsonl"):
        raise UsageError(f"--sweep: {show(args.sweep, 120)} is not a .jsonl results file")
    return server.main(host=args.host, port=args.port, gpu=args.gpu, dist=dist, real=args.real, sweep=sweep) or 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="contention", description="Live, seeded simulations of systems under contention.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser("list", help="list the presets")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(fn=cmd_list)

    s = sub.add_parser("run", help="run a preset to the end and compare its panels")
    s.add_argument("preset", help="preset name (see `contention list`), or the path of your own preset file (.toml)")
    s.add_argument("--seed", type=_seed, help="stream seed, 0 to 2^53-1 (default: the preset's)")
    s.add_argument(
        "--duration", type=_duration, help=f"virtual seconds, at most {MAX_DURATION:g} (default: the preset's)"
    )
    s.add_argument("--panels", help="comma-separated panel names to keep, each once")
    s.add_argument("--json", action="store_true", help="print the run as one JSON object")
    s.add_argument("--trace-out", metavar="F", type=_path, help="write the canonical stream (JSON lines) to F")
    s.add_argument(
        "--trace-in",
        metavar="F",
        type=_path,
        help="replay a canonical stream from F instead of generating it (its event kinds and fields must match the preset's)",
    )
    s.add_argument(
        "--drain",
        action="store_true",
        help="engine/cluster: stop arrivals at the duration, run until every request finishes, "
        "and divide throughput by the time to the last completion (vLLM benchmark_serving)",
    )
    s.set_defaults(fn=cmd_run)

    s = sub.add_parser("trace", help="run one policy over your own trace file")
    tsub = s.add_subparsers(dest="topic", metavar="TOPIC", parser_class=_Parser)
    tsub.required = True
    for topic_name in registry.topic_names():  # every topic that declares a trace replay
        topic = registry.load_topic(topic_name)
        if topic.trace is None:
            continue
        t = tsub.add_parser(topic_name, help=topic.trace.help)
        names = ", ".join(sorted(registry.policies(topic_name)))
        t.add_argument(topic.trace.policy_flag, dest="policy", required=True, help=f"one of: {names}")
        for a in topic.trace.args:
            if a.type is bool:
                t.add_argument(a.flag, action="store_true", help=a.help)
                continue
            t.add_argument(a.flag, type=_positive(a.type) if a.positive else a.type, required=a.required, help=a.help)
        t.add_argument("--trace", required=True, metavar="F", type=_path, help="the trace file")
        t.add_argument("--json", action="store_true", help="print JSON")
        t.set_defaults(fn=cmd_trace)

    s = sub.add_parser("bench", help="measure simulation throughput per preset (median of runs)")
    s.add_argument("presets", nargs="*", help="presets to measure (default: all)")
    s.add_argument("--runs", type=_positive(int), default=3, help="runs per measurement (median reported)")
    s.add_argument("--no-panels", action="store_true", help="skip the per-panel measurements")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(fn=cmd_bench)

    s = sub.add_parser("build", help="build the static site into a folder")
    s.add_argument("--out", default="dist", help="output folder (default: dist)")
    s.set_defaults(fn=cmd_build)

    s = sub.add_parser("serve", help="serve the site and the JSON API on 127.0.0.1")
    s.add_argument("--host", type=_host, default="127.0.0.1", help="bind address (default: 127.0.0.1)")
    s.add_argument("--port", type=_port, default=8000, help="port, 1 to 65535 (default: 8000)")
    s.add_argument("--gpu", action="store_true", help="enable GPU replay (needs CUDA and the gpu extra)")
    s.add_argument("--dist", default="dist", help="site folder, built first if missing or stale")
    s.add_argument("--real", action="store_true", help="offer replays on real Redis and nginx on the preset pages")
    s.add_argument("--sweep", metavar="F.jsonl", type=_path, help="show a finished sweep's results at /sweep/")
    s.set_defaults(fn=cmd_serve)

    s = sub.add_parser("sweep", help="run a grid of parameters over N seeds; rows per (cell, seed, panel)")
    s.add_argument("preset", help="preset name or a .toml file")
    s.add_argument(
        "--grid",
        action="append",
        metavar="KEY=VALUES",
        help="KEY=V1,V2,... or KEY=LO:HI[:STEP]; KEY is workload.X, defaults.X or panels.NAME.X (repeatable)",
    )
    s.add_argument(
        "--seeds",
        type=_positive(int),
        default=5,
        help="seeds per cell: the preset's seed and the ones after (default 5)",
    )
    s.add_argument("--panels", help="comma-separated panel names to keep")
    s.add_argument("--out", metavar="F", help="results file: .jsonl, .csv or .parquet (journaled as it runs)")
    s.add_argument("--resume", action="store_true", help="continue an interrupted sweep into the same --out")
    s.add_argument("--ray", nargs="?", const=True, metavar="ADDRESS", help="run on Ray: a local cluster, or ADDRESS")
    s.add_argument("--workers", type=_positive(int), help="local processes (default: every core) or Ray CPUs")
    s.add_argument(
        "--max-cells", type=_positive(int), default=1000, help="refuse a larger grid unless --yes (default 1000)"
    )
    s.add_argument("--yes", action="store_true", help="run a grid larger than --max-cells")
    s.add_argument("--metrics", help="comma-separated metrics for the summary and the plot")
    s.add_argument("--plot", metavar="F.html", help="write a self-contained page: each metric against the first key")
    s.add_argument(
        "--drain",
        action="store_true",
        help="engine/cluster: stop arrivals at the duration and run until every request finishes (no censored figures)",
    )
    s.add_argument("--json", action="store_true", help="print the summary as JSON")
    s.set_defaults(fn=lambda a: _sweep_cli().cmd_sweep(a))

    s = sub.add_parser("plan", help="the smallest value of one knob whose confidence bound meets every target")
    s.add_argument("preset", help="preset name or a .toml file")
    s.add_argument("--vary", required=True, metavar="KEY=LO:HI[:STEP]", help="the knob and its candidate values")
    s.add_argument("--target", action="append", metavar="METRIC<X", help='e.g. "ttft_p90<1.0" (repeatable)')
    s.add_argument("--seeds", type=_positive(int), default=10, help="seeds per candidate (default 10)")
    s.add_argument("--panel", required=True, help="the panel whose metrics must meet the targets")
    s.add_argument("--confidence", type=float, default=0.95, help="one-sided confidence of the bound (default 0.95)")
    s.add_argument("--ray", nargs="?", const=True, metavar="ADDRESS", help="run on Ray: a local cluster, or ADDRESS")
    s.add_argument("--workers", type=_positive(int), help="local processes (default: every core) or Ray CPUs")
    s.add_argument(
        "--drain",
        action="store_true",
        help="engine/cluster: stop arrivals at the duration and run until every request finishes (no censored figures)",
    )
    s.add_argument("--json", action="store_true", help='print {"answer", "feasible", "margins", "runs"}')
    s.set_defaults(fn=lambda a: _sweep_cli().cmd_plan(a))

    s = sub.add_parser("replay", help="play a preset's stream against real Redis or nginx, beside the simulator")
    s.add_argument("preset", help="a cache preset (--against redis) or a rate-limit preset (--against nginx)")
    s.add_argument("--against", required=True, choices=("redis", "nginx"), help="the real system")
    s.add_argument("--address", metavar="HOST:PORT", help="a running Redis to use instead of starting one")
    s.add_argument(
        "--speed", type=_positive(float), default=1.0, help="virtual seconds per wall second, at most 100 (default 1)"
    )
    s.add_argument("--seed", type=_seed, help="stream seed, 0 to 2^53-1 (default: the preset's)")
    s.add_argument(
        "--duration", type=_duration, help=f"virtual seconds, at most {MAX_DURATION:g} (default: the preset's)"
    )
    s.add_argument("--json", action="store_true", help="print the run as one JSON object")
    s.set_defaults(fn=cmd_replay)

    # listed for --help only: main() hands everything after `gpu` to gpu_backend's own parser
    sub.add_parser("gpu", help="GPU replay, calibration and benchmarks (gpu extra; see `contention gpu --help`)")
    return p


def _one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def _fail(message: str) -> int:
    """The one error path: one line on stderr, exit status 2."""
    message = _one_line(message)
    print(message if message.startswith("contention") else f"error: {message}", file=sys.stderr)
    return 2


def _stdout_gone() -> None:
    """Stdout cannot take more (a closed pipe, a full disk): point it at /dev/null so the
    interpreter's final flush does not print a traceback of its own."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv[:1] == ["gpu"]:  # everything after `gpu` belongs to gpu_backend's own parser
            return _edge("gpu_backend.cli", "gpu").main(argv[1:]) or 0
        args = build_parser().parse_args(argv)
        status = args.fn(args)
        sys.stdout.flush()
        return status
    except (UsageError, PresetError, TraceError, ValueError) as exc:
        return _fail(str(exc))
    except BrokenPipeError:
        _stdout_gone()
        return 0
    except OSError as exc:  # a file named by the user that cannot be read or written, stdout full
        _stdout_gone()
        name = f"{show(exc.filename, 120)}: " if exc.filename else "standard output: " if exc.errno == 28 else ""
        return _fail(f"{name}{exc.strerror or exc}")
    except RecursionError:
        return _fail("input nested too deeply")
    except MemoryError:
        return _fail("out of memory; ask for a shorter --duration")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("terminated", file=sys.stderr)
        return 143


if __name__ == "__main__":
    sys.exit(main())
