"""``contention list``, ``run``, ``trace`` and ``bench``: the commands that need only sims/ (bench
also needs the wall-clock harness, beside sims/)."""

from __future__ import annotations

import argparse
import gc
import json
from pathlib import Path

from sims.cli import args as arg
from sims.cli.args import Terminated, UsageError
from sims.cli.output import harness, one_line, run_with_progress, table
from sims.core import presets, registry
from sims.core.limits import MAX_DURATION, show
from sims.core.scenario import Scenario

COLUMNAR = ("cache", "paging")  # topics whose --trace-in stream is read as columns (sims.core.columns)


def cmd_list(args: argparse.Namespace) -> int:
    """Every preset; a broken one is listed as unavailable with its reason (exit status 0)."""
    from sims.core import api

    index = presets.load_index()
    if args.json:
        entries = [{**api.describe(p, summary=True), "available": True} for p in index.available]
        entries = sorted(entries + index.unavailable, key=lambda e: e["name"])
        print(json.dumps(entries, indent=2))
        return 0
    width = max((len(n) for n in presets.preset_names()), default=4)
    rows = [(p.name, f"{p.name.ljust(width)}  {p.topic:<9}  {p.title}") for p in index.available]
    rows += [
        (e["name"], f"{e['name'].ljust(width)}  {'-':<9}  unavailable: {one_line(e['error'])}")
        for e in index.unavailable
    ]
    for _, line in sorted(rows):
        print(line)
    return 0


def _trace_schema(preset, seed: int | None) -> tuple[dict, set[str]]:
    """What a --trace-in stream must look like for this preset: the kinds and fields of the
    preset's own stream (at its own duration), its scheduled events and its actions; and the kinds
    whose fields never vary there (closed: no other field is accepted)."""
    from sims.core import stream

    own = stream.build(preset, preset.seed if seed is None else seed, preset.duration)
    expect = stream.schema(own)
    for a in preset.actions:  # "break it" buttons: their events may appear in a recorded stream
        expect.setdefault(a["event"]["kind"], {"kind": "string"})
    return expect, stream.closed(own)


def write_trace(events, path: str) -> None:
    """``--trace-out``: SIGTERM while writing removes the half-written ``F.part``."""
    import signal

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


def _build(args: argparse.Namespace):
    """The run's preset and its ``Scenario`` (stream and panels built), or a ``UsageError``."""
    preset = presets.load(args.preset)
    overrides = arg.settings(args.set)
    if overrides:
        preset = preset.with_overrides(overrides)
    panels = arg.panels(args.panels)
    if args.trace_out is not None:
        out = Path(args.trace_out)
        if out.is_dir():
            raise UsageError(f"--trace-out: {show(args.trace_out, 120)} is a directory; expected a file name")
        if not out.parent.is_dir():
            raise UsageError(f"--trace-out: cannot write {show(args.trace_out, 120)}: its folder does not exist")
    events = None
    duration = args.duration
    if args.trace_format != "canonical" and not args.trace_in:
        raise UsageError("--trace-format: needs --trace-in FILE")
    if args.trace_in and args.trace_format != "canonical":
        from sims.core import traceformats

        events, span = traceformats.load(args.trace_in, args.trace_format, preset, args.seed)
        duration = duration or span
    elif args.trace_in:
        from sims.core import stream

        # a cache or paging panel reads the stream one reference at a time: columns, not dicts
        events = stream.read(args.trace_in, *_trace_schema(preset, args.seed), columns=preset.topic in COLUMNAR)
    sc = Scenario(preset, args.seed, duration, panels, events=events, drain=args.drain)
    if args.policy_file:  # an edited policy as one more panel (docs/editing.md)
        from sims.core import editpanel

        editpanel.add_file(sc, args.policy_file, preset)
    return preset, sc


def cmd_run(args: argparse.Namespace) -> int:
    # The preset, the stream, the panels and every module live until the command ends. While they
    # are built the cyclic collector's passes over them find nothing to free (18 M instructions,
    # 0.5% of `run engine-vidur-10k`), so it is off; then they are frozen out of its sight, so
    # its passes during the run (and the one at exit) scan only what the run allocates. Results do
    # not depend on it; reference counts still free what dies.
    gc.disable()
    try:
        preset, sc = _build(args)
        gc.freeze()
    finally:
        gc.enable()
    run_with_progress(sc, preset.name)
    if args.drain:
        sc.run()  # arrivals stopped at the duration: run until every request finishes
    result = sc.result()
    if args.trace_out is not None:
        write_trace(sc.run_events(), args.trace_out)
    if args.json:
        print(json.dumps(result))
    else:
        print(table(result))
    if args.policy_file:
        from sims.core import editpanel

        if editpanel.stops(sc):
            stops = [s.text(args.policy_file, n) for n, s in editpanel.stops(sc).items()]
            raise UsageError("; ".join(stops))
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
    bench = harness()
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


def _add_trace_topics(s: argparse.ArgumentParser) -> None:
    tsub = s.add_subparsers(dest="topic", metavar="TOPIC", parser_class=arg.Parser)
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
            t.add_argument(
                a.flag, type=arg.positive(a.type) if a.positive else a.type, required=a.required, help=a.help
            )
        t.add_argument("--trace", required=True, metavar="F", type=arg.path, help="the trace file")
        t.add_argument("--json", action="store_true", help="print JSON")
        t.set_defaults(fn=cmd_trace)


def _list_flags(s: argparse.ArgumentParser) -> None:
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(fn=cmd_list)


def _run_flags(s: argparse.ArgumentParser) -> None:
    from sims.core.traceformats import FORMATS as TRACE_FORMATS

    s.add_argument("preset", help="preset name (see `contention list`), or the path of your own preset file (.toml)")
    s.add_argument("--seed", type=arg.seed, help="stream seed, 0 to 2^53-1 (default: the preset's)")
    s.add_argument(
        "--duration", type=arg.duration, help=f"virtual seconds, at most {MAX_DURATION:g} (default: the preset's)"
    )
    s.add_argument("--panels", help="comma-separated panel names to keep, each once")
    s.add_argument(
        "--set",
        action="append",
        type=arg.setting,
        metavar="KEY=VALUE",
        help="override one preset value, e.g. defaults.usd_per_gpu_hour=1.99 or workload.rate=4 (repeatable)",
    )
    s.add_argument("--json", action="store_true", help="print the run as one JSON object")
    s.add_argument("--trace-out", metavar="F", type=arg.path, help="write the canonical stream (JSON lines) to F")
    s.add_argument(
        "--trace-in",
        metavar="F",
        type=arg.path,
        help="replay a stream from F instead of generating it (its event kinds and fields must match the preset's)",
    )
    s.add_argument(
        "--trace-format",
        choices=("canonical", *TRACE_FORMATS),
        default="canonical",
        help="what --trace-in holds: canonical (run --trace-out's JSON lines), azure (the Azure LLM inference CSV), "
        "mooncake (Mooncake's JSONL), pages, keys or arrivals (as `contention trace` reads them); see docs/traces.md",
    )
    s.add_argument(
        "--drain",
        action="store_true",
        help="engine/cluster: stop arrivals at the duration, run until every request finishes, "
        "and divide throughput by the time to the last completion (vLLM benchmark_serving)",
    )
    s.add_argument(
        "--policy-file",
        metavar="F",
        type=arg.path,
        help="run your own policy beside the others: a Python file that defines and registers one policy class "
        "as the topic's own do. It runs with your permissions, like any script: its import limits guard against "
        "mistakes and are no sandbox (docs/editing.md)",
    )
    s.set_defaults(fn=cmd_run)


def _bench_flags(s: argparse.ArgumentParser) -> None:
    s.add_argument("presets", nargs="*", help="presets to measure (default: all)")
    s.add_argument("--runs", type=arg.positive(int), default=3, help="runs per measurement (median reported)")
    s.add_argument("--no-panels", action="store_true", help="skip the per-panel measurements")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(fn=cmd_bench)


def add(sub) -> None:
    sub.add_parser("list", help="list the presets", fill=_list_flags)
    sub.add_parser("run", help="run a preset to the end and compare its panels", fill=_run_flags)
    # its per-topic commands import every topic: a plain run of one preset imports only its own
    sub.add_parser("trace", help="run one policy over your own trace file", fill=_add_trace_topics)
    sub.add_parser("bench", help="measure simulation throughput per preset (median of runs)", fill=_bench_flags)
