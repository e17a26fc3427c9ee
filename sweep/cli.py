"""``contention sweep`` and ``contention plan`` (parsers in sims/cli/edges.py, work here)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sims.core import presets
from sweep import executors, grid, plan, plot, run


def load_preset(name: str) -> presets.Preset:
    return presets.load(name)  # a name, or the path of a .toml file


def _panels(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise grid.SweepError("--panels: expected a comma-separated list of panel names")
    return names


def _workers(n: int | None) -> int | None:
    if n is not None and n < 1:
        raise grid.SweepError(f"--workers must be at least 1, got {n}")
    return n


def cmd_sweep(args: argparse.Namespace) -> int:
    preset = load_preset(args.preset)
    spec = grid.parse_grid(args.grid or [])
    out = Path(args.out) if args.out else None
    if args.resume and out is None:
        raise grid.SweepError("--resume needs --out (the journal lives beside it)")
    plot_path = Path(args.plot) if args.plot else None
    if plot_path is not None and plot_path.suffix != ".html":
        raise grid.SweepError(f"--plot {plot_path}: expected an .html file")
    execute = executors.pick(args.ray, _workers(args.workers))
    rows = run.run(
        preset,
        spec,
        args.seeds,
        _panels(args.panels),
        execute,
        out=out,
        resume=args.resume,
        progress=sys.stderr.isatty() and not args.json,
        max_cells=args.max_cells,
        yes=args.yes,
        drain=args.drain,
    )
    metrics = _metrics(args.metrics, preset, rows)
    summ = run.summary(rows, metrics)
    if plot_path is not None:
        plot.write(plot_path, f"{preset.name}: sweep over {', '.join(spec)}", summ, next(iter(spec)), metrics)
    if args.json:
        print(json.dumps({"preset": preset.name, "seeds": args.seeds, "summary": summ}))
    else:
        print(table(summ, metrics))
        if out is not None:
            print(f"{len(rows)} rows written to {out}")
    return 0


def _metrics(text: str | None, preset: presets.Preset, rows: list[dict]) -> list[str]:
    have = [m for r in rows for m in r["metrics"]]
    if text:
        wanted = [m.strip() for m in text.split(",") if m.strip()]
        unknown = [m for m in wanted if m not in have]
        if unknown and have:
            raise grid.SweepError(f"--metrics: no panel reports {', '.join(unknown)}")
        return wanted
    claim = preset.site.get("claim", {}) if isinstance(preset.site, dict) else {}
    first = [claim["metric"]] if isinstance(claim, dict) and claim.get("metric") in have else []
    charts = [m for m in preset.site.get("charts", []) if m in have and m not in first]
    rest = [m for m in dict.fromkeys(have) if m not in first + charts and not m.endswith("_censored")]
    return (first + charts + rest)[:4]


def table(summ: list[dict], metrics: list[str]) -> str:
    head = ["params", "panel", "seeds", *(f"{m} (mean ± 95% t)" for m in metrics)]
    rows = [head]
    for s in summ:
        cells = []
        for m in metrics:
            ci = s["metrics"].get(m)
            if not ci or ci["mean"] is None:
                cells.append("-")
                continue
            half = "" if ci["hi"] is None else f" ± {(ci['hi'] - ci['lo']) / 2:.4g}"
            mark = f" (≥, {ci['censored_seeds']} censored)" if ci.get("censored_seeds") else ""
            cells.append(f"{ci['mean']:.4g}{half}{mark}")
        params = " ".join(f"{k}={v}" for k, v in s["params"].items())
        err = f" [{len(s['errors'])} error(s): {s['errors'][0][:60]}]" if s["errors"] else ""
        rows.append([params, s["panel"] + err, str(s["seeds"]), *cells])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(r)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def with_model(preset, model: str):
    """``plan --model``: every panel runs ``model`` (a shipped name or a config.json, made absolute
    so worker processes find it)."""
    if not all("model" in p.params for p in preset.panels):
        raise grid.SweepError(f"--model: preset {preset.name!r} has panels without a model")
    if model.endswith(".json") or "/" in model:
        model = str(Path(model).resolve())
    return preset.with_overrides({f"panels.{p.name}.model": model for p in preset.panels})


def cmd_plan(args: argparse.Namespace) -> int:
    preset = load_preset(args.preset)
    if args.model:
        preset = with_model(preset, args.model)
    targets = [plan.parse_target(t) for t in args.target or []]
    if args.plot and not args.space:
        raise grid.SweepError("--plot: plan draws its Pareto plot over a --space")
    if args.load and not args.space:
        raise grid.SweepError("--load: plan draws its capacity curve over a --space")
    if args.load and (args.resume or args.plot):
        raise grid.SweepError("--load: not with --resume or --plot yet (one search per load value)")
    if args.resume and not args.space:
        raise grid.SweepError("--resume: plan keeps a journal of a --space search (one knob alone takes seconds)")
    if args.space:
        return _plan_space(args, preset, targets)
    execute = executors.pick(args.ray, _workers(args.workers))
    result = plan.plan(preset, args.vary, targets, args.seeds, args.panel, execute, args.confidence, args.drain)
    if args.json:
        print(json.dumps(result))
        return 0
    conf = f"{args.confidence:.0%} one-sided bound"
    for r in result["runs"]:
        print(
            f"{result['key']}={r['value']}: {'meets' if r['ok'] else 'misses'} ({_bounds(r)}; {conf}, {r['seeds']} seeds)"
        )
    if any(r.get("censored_seeds") for r in result["runs"]) and not args.drain:
        print("censored: requests still waiting at the end make a latency only a lower bound; plan with --drain")
    if result["feasible"]:
        margins = ", ".join(f"{k} by {v:.4g}" for k, v in result["margins"].items() if v is not None)
        print(f"answer: {result['key']}={result['answer']} for panel {result['panel']} (margin: {margins})")
    else:
        print(f"infeasible: no {result['key']} up to the largest value meets every target for panel {result['panel']}")
    print(f"runs: {sum(r['seeds'] for r in result['runs'])} ({len(result['runs'])} values x {args.seeds} seeds)")
    return 0


def _bounds(probe: dict) -> str:
    """Each target's bound; a censored one (some seeds' figure a lower bound) says so."""
    lower = probe.get("censored_seeds", {})
    return ", ".join(
        f"{k}: {'-' if v is None else f'{v:.4g}'}"
        + (f", censored on {lower[k]} seed{'' if lower[k] == 1 else 's'}" if k in lower else "")
        for k, v in probe["bounds"].items()
    )


def _plan_curve(args: argparse.Namespace, preset: presets.Preset, targets: list, execute) -> int:
    """``plan --space ... --load KEY=V1,V2``: the cheapest configuration at each load."""
    from sweep import deploy

    result = deploy.curve(
        preset, args.load, args.vary, args.space, targets, args.seeds, args.panel, execute, args.confidence, args.drain
    )
    if args.json:
        print(json.dumps(result))
        return 0
    for r in result["curve"]:
        head = f"{result['key']}={r['value']:g}"
        if r["feasible"]:
            config = ", ".join(f"{k}={v}" for k, v in r["config"].items())
            print(
                f"{head}: {config}: {r['gpus']} GPUs, ${r['usd_per_hour']:.2f}/hour, ${r['usd_per_month']:,.0f}/month"
            )
        else:
            print(f"{head}: infeasible; {r['binding']} binds")
    print(f"runs: {result['runs']}; configurations not run because they missed at a lower load: {result['skipped']}")
    return 0


def _plan_space(args: argparse.Namespace, preset: presets.Preset, targets: list) -> int:
    from sweep import deploy, pareto

    plot_path = Path(args.plot) if args.plot else None
    if plot_path is not None and plot_path.suffix != ".html":
        raise grid.SweepError(f"--plot {args.plot!r}: expected a .html file name")
    if not 0.5 < args.confidence < 1.0:
        raise grid.SweepError(f"--confidence must lie in (0.5, 1), got {args.confidence}")
    execute = executors.pick(args.ray, _workers(args.workers))
    if args.load:
        return _plan_curve(args, preset, targets, execute)
    result = deploy.search(
        preset,
        args.vary,
        args.space,
        targets,
        args.seeds,
        args.panel,
        execute,
        args.confidence,
        args.drain,
        journal=Path(args.resume) if args.resume else None,
        progress=sys.stderr.isatty(),
    )
    result["pareto"] = pareto.front(result["probes"])
    if plot_path is not None:
        pareto.write(plot_path, f"{preset.name}: {args.panel}", result["pareto"])
    if args.json:
        print(json.dumps(result))
        return 0
    for p in result["probes"]:
        config = " ".join(f"{k.rpartition('.')[2]}={v}" for k, v in p["config"].items())
        print(
            f"{config}: {p['gpus']} GPUs, ${p['usd_per_hour']:.2f}/h: {'meets' if p['ok'] else 'misses'} ({_bounds(p)})"
        )
    for p in result["pruned"]:
        print(f"pruned {' '.join(f'{k}={v}' for k, v in p['config'].items())}: {p['why']}")
    if result["feasible"]:
        config = ", ".join(f"{k}={v}" for k, v in result["config"].items())
        per_tok = result["usd_per_mtok_out"]
        tail = f", ${per_tok:.2f} per million output tokens" if per_tok is not None else ""
        print(
            f"answer: {config}: {result['gpus']} GPUs, ${result['usd_per_hour']:.2f}/hour, "
            f"${result['usd_per_month']:,.0f}/month{tail} ({args.confidence:.0%} one-sided bound, {args.seeds} seeds)"
        )
        for r in result["runner_ups"][:3]:
            config = ", ".join(f"{k}={v}" for k, v in r["config"].items())
            print(f"runner-up: {config}: {r['gpus']} GPUs, ${r['usd_per_hour']:.2f}/hour")
    else:
        print(f"infeasible: no configuration in the space meets every target; {result['binding']} binds")
    print(
        f"runs: {sum(p['seeds'] for p in result['probes'])} ({len(result['probes'])} configurations x {args.seeds} seeds)"
    )
    return 0
