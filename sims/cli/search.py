"""``contention search``: the workload that most separates two policies (sims/adversary, imported
when the command parses: a plain ``run`` does not load it)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from sims.cli import args as arg
from sims.cli.args import UsageError
from sims.cli.output import harness, interactive
from sims.core import registry
from sims.core.limits import show

MAX_LENGTH = 100_000  # references (or arrivals) in a candidate
CHUNK = 200  # evaluations between progress updates
DRAWN = ("consensus", "replication", "election")  # topics whose panels record a run for --svg (sims/net/diagram.py)

# with --policies a,b and no --objective: b's advantage over a, in each topic's headline metric
DEFAULT_OBJECTIVE = {
    "paging": "faults({a}) - faults({b})",
    "cache": "hits({b}) - hits({a})",
    "hashing": "max_load_ratio({a}) - max_load_ratio({b})",
    "ratelimit": "max_in_any_window({a}) - max_in_any_window({b})",
}


def _bounded(top: int):
    """A converter: an integer in [1, top]."""
    positive = arg.positive(int)

    def convert(text: str) -> int:
        value = positive(text)
        if value > top:
            raise argparse.ArgumentTypeError(f"expected at most {top}, got {show(text)}")
        return value

    convert.__name__ = "integer"
    return convert


def _command(args: argparse.Namespace, objective: str) -> str:
    """The command line that reproduces this search."""
    import shlex

    words = ["contention", "search", args.topic]
    if args.policies:
        words += ["--policies", args.policies]
    words += ["--objective", objective, "--size", str(args.size), "--length", str(args.length)]
    words += ["--budget", str(args.budget), "--seed", str(args.seed)]
    if args.keys is not None:
        words += ["--keys", str(args.keys)]
    if args.steps is not None:
        words += ["--steps", args.steps]
    for key, value in args.set or []:
        words += ["--set", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    if args.start is not None:
        words += ["--from", args.start]
    if args.shrink:
        words.append("--shrink")
    return shlex.join(words)


def _policies(text: str | None, topic: str) -> list[str]:
    if text is None:
        return []
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names or len(set(names)) != len(names):
        raise UsageError(f"--policies: expected distinct comma-separated policy names, got {show(text, 80)}")
    for n in names:
        registry.get_policy(topic, n)  # ValueError listing the valid ones
    return names


def _number(x: float) -> float | int:
    return int(x) if math.isfinite(x) and x == int(x) else x


def cmd_search(args: argparse.Namespace) -> int:
    import shlex

    from sims.adversary import SPECS, Problem, Search
    from sims.adversary.writer import preset_text

    if args.topic not in SPECS:
        raise UsageError(f"search: unknown topic {show(args.topic)}; valid: {', '.join(sorted(SPECS))}")
    policies = _policies(args.policies, args.topic)
    spec = SPECS[args.topic]
    if args.size is None:
        args.size = spec.default_size
    objective = args.objective
    if objective is None and spec.violations and policies:
        objective = "violations"
    if objective is not None and objective.strip() == "violations":  # the checker's count, per policy
        if not spec.violations:
            raise UsageError(
                f"search: {args.topic} has no safety checker; 'violations' is for consensus, replication and election"
            )
        if not policies:
            raise UsageError("search: --objective violations needs --policies: whose violations to count")
        objective = " + ".join(f"{spec.violations_of(p)}({p})" for p in policies)
    if objective is None:
        if len(policies) < 2:
            raise UsageError("search: give --objective, or --policies a,b to compare b against a")
        objective = DEFAULT_OBJECTIVE[args.topic].format(a=policies[0], b=policies[1])
    if args.out is not None and not args.out.endswith(".toml"):
        raise UsageError(f"--out: expected a file name ending in .toml, got {show(args.out, 120)}")
    if args.out is not None and not Path(args.out).parent.is_dir():
        raise UsageError(f"--out: cannot write {show(args.out, 120)}: its folder does not exist")
    if args.svg is not None:
        if args.topic not in DRAWN or not policies:
            raise UsageError(f"--svg: draws the first --policies panel of a {', '.join(DRAWN)} search; give --policies")
        if not args.svg.endswith(".svg"):
            raise UsageError(f"--svg: expected a file name ending in .svg, got {show(args.svg, 120)}")
        if not Path(args.svg).parent.is_dir():
            raise UsageError(f"--svg: cannot write {show(args.svg, 120)}: its folder does not exist")
    steps = None
    if args.steps is not None:
        if args.topic not in ("consensus", "election"):
            raise UsageError(f"--steps: only consensus and election schedules have a choice of steps, not {args.topic}")
        steps = tuple(p.strip() for p in args.steps.split(",") if p.strip())
    params = arg.settings(args.set)
    problem = Problem(
        args.topic,
        objective,
        args.size,
        args.length,
        extra=policies,
        keys=args.keys,
        seed=args.seed,
        steps=steps,
        params=params,
    )
    start = None
    if args.start is not None:
        from sims.core import presets, stream

        source = presets.load(args.start)
        if source.topic != args.topic:
            raise UsageError(f"--from: {source.name} is a {source.topic} preset, not {args.topic}")
        start = problem.layout.genome_of(stream.build(source, source.seed, source.duration), args.length)
        if not start:
            raise UsageError(f"--from: {source.name}'s stream has no references a {args.topic} search can vary")
    search = Search(problem, args.seed, args.budget, start=start)
    timer = harness() if interactive() and not args.json else None
    bar = timer.Progress(f"search {args.topic}") if timer is not None else None
    while not search.done and not (args.shrink and search.found):  # shrinking: the first will do
        search.run(CHUNK, until_found=args.shrink)
        if bar is not None:
            bar.update(search.evals / search.budget, f"best {search.best_score:g} at {search.best_at}")
    if bar is not None:
        bar.close()
    best, score, shrunk = search.best, search.best_score, None
    found = search.found
    if found and args.shrink:
        from sims.adversary.shrink import shrink

        shrunk = shrink(problem, best, args.budget)
        best, score = shrunk.genome, shrunk.score
    metrics = problem.metrics(best)
    command = _command(args, problem.objective.text)
    if args.out is not None and found:  # nothing found: no preset that claims otherwise
        text = preset_text(problem, best, Path(args.out).stem, score, command)
        Path(args.out).write_text(text, encoding="utf-8")
    if args.svg is not None and found:
        _write_svg(problem, best, problem.panel_index(policies[0], args.size), args.svg, command)
    best_score = _number(score) if math.isfinite(score) else None
    result = {
        "found": found,
        "best": best_score,
        "topic": args.topic,
        "objective": problem.objective.text,
        "size": args.size,
        "length": args.length,
        "seed": args.seed,
        "budget": args.budget,
        **search.state(),
        "best_score": best_score,
        "workload": problem.layout.workload(best),
        **({"schedule": problem.layout.schedule(best)} if spec.genome == "schedule" else {}),
        "panels": metrics,
        "out": args.out if found else None,
        **({"svg": args.svg if found else None} if args.svg is not None else {}),
    }
    if spec.violations:
        result["why"] = problem.why(best)
    if shrunk is not None:
        result["shrunk"] = {
            "from": len(search.best),
            "to": len(best),
            "from_score": _number(search.best_score),
            "evaluations": shrunk.evaluations,
            "minimal": shrunk.minimal,
        }
    if args.json:
        print(json.dumps(result))
        return 0 if found else 1
    if not found:
        print(
            f"no {'schedule' if spec.genome == 'schedule' else 'workload'} with objective > 0 in {search.evals:,} "
            f"evaluations (the best scored {search.best_score:g}; "
            f"k = {args.size}, seed {args.seed}){': wrote no preset' if args.out else ''}"
        )
        return 1
    print(f"{problem.objective.text} = {score:g}  (k = {args.size}, seed {args.seed})")
    print(f"found at evaluation {search.best_at} of {search.evals}, {search.restarts} restarts")
    for line in problem.why(best):
        print("  " + line)
    if shrunk is not None:
        print(
            f"shrunk from {len(search.best)} to {len(best)} (objective {search.best_score:g} -> {score:g}) in "
            f"{shrunk.evaluations:,} evaluations: "
            + ("locally minimal" if shrunk.minimal else "the budget ran out before a minimum")
        )
    for name, m in metrics.items():
        print(
            f"  {name}: "
            + ", ".join(f"{k} {m[k]:g}" for k in sorted({t.metric for t in problem.objective.terms} & set(m)) or m)
        )
    wl = problem.layout.workload(best)
    if spec.genome == "schedule":
        schedule = problem.layout.schedule(best)
        print(f"schedule ({len(best)} steps, {len(schedule)} events):")
        for ev in schedule[:60]:
            print("  " + ", ".join(f"{k} {v}" for k, v in ev.items()))
    else:
        seq = wl.get("keys", wl.get("times"))
        print(f"workload ({len(seq)}): {' '.join(map(str, seq[:60]))}{' ...' if len(seq) > 60 else ''}")
    if args.out is not None:
        print(f"wrote {args.out}: contention run {shlex.quote(args.out)}")
    if args.svg is not None:
        print(
            f"wrote {args.svg}: the space-time diagram of {problem.panels[problem.panel_index(policies[0], args.size)].name}"
        )
    return 0


def _write_svg(problem, genome: list[int], index: int, path: str, command: str) -> None:
    """The space-time diagram of one panel's run of ``genome`` (sims/net/diagram.py)."""
    from sims.net.diagram import svg

    panel = problem.run_panel(genome, index, record=True)
    Path(path).write_text(svg(panel, f"{panel.name}: {command}"), encoding="utf-8")


def _flags(s: argparse.ArgumentParser) -> None:
    from sims.adversary import SPECS
    from sims.adversary.local import MAX_BUDGET

    s.add_argument("topic", help=f"one of: {', '.join(sorted(SPECS))}")
    s.add_argument(
        "--policies",
        help="comma-separated policies shown as extra panels (a,b: the default objective compares b with a)",
    )
    s.add_argument(
        "--objective",
        help='what to maximize, e.g. "hits(b) - hits(a)"; a term without a size is at size k; '
        '"violations": the checker\'s count over --policies (consensus: safety violations; replication: '
        "acknowledged writes lost, stale reads for the lease policies; election: seconds with two leaders)",
    )
    s.add_argument(
        "--size",
        type=arg.positive(int),
        default=None,
        help="k: frames (paging), objects (cache), nodes (hashing), requests per 1 s window (ratelimit), "
        "servers (consensus, replication, election); default 4 (consensus and election 5, replication 3)",
    )
    s.add_argument(
        "--length",
        type=_bounded(MAX_LENGTH),
        default=40,
        help="most references (arrivals, keys) in a workload; default 40",
    )
    s.add_argument(
        "--budget",
        type=_bounded(MAX_BUDGET),
        default=2000,
        help="evaluations (candidate workloads scored); default 2000",
    )
    s.add_argument("--seed", type=arg.seed, default=1, help="search seed (also the written preset's seed); default 1")
    s.add_argument(
        "--keys",
        type=arg.positive(int),
        help="distinct keys a workload draws from (default: k+3 pages, 2k cache keys, 10^6 hashing keys)",
    )
    s.add_argument(
        "--steps",
        metavar="A,B,...",
        help="consensus, election: the steps a schedule may use (default: every step but oneway; "
        "all: every step). consensus: op, isolate1, isolate2, crash, crash_next, restart, heal; election "
        "adds pause and skew; oneway (the leader's next node stops hearing the others; heal clears it) "
        "only when named",
    )
    s.add_argument(
        "--set",
        action="append",
        type=arg.setting,
        metavar="PARAM=VALUE",
        help="a panel parameter of every searched panel, e.g. prevote=true for Raft (repeatable)",
    )
    s.add_argument(
        "--from",
        dest="start",
        metavar="PRESET",
        help="start from the first --length references (arrivals) of a preset's own stream (default: a random workload)",
    )
    s.add_argument(
        "--shrink",
        action="store_true",
        help="stop at the first workload scoring above 0 and cut it down to a locally minimal one that "
        "still does (at most --budget more evaluations); a schedule's runs of steps are also replaced by "
        "one step that takes as long",
    )
    s.add_argument(
        "--out",
        metavar="F.toml",
        type=arg.path,
        help="write the best workload as a preset file (only when one was found)",
    )
    s.add_argument(
        "--svg",
        metavar="F.svg",
        type=arg.path,
        help="consensus, replication, election: write a space-time diagram (nodes, messages, faults, roles, "
        "the client operations or leaders, the violations) of the first --policies panel's run of the best "
        "schedule (only when one was found)",
    )
    s.add_argument("--json", action="store_true", help="print the result as one JSON object")
    s.set_defaults(fn=cmd_search)


def add(sub) -> None:
    sub.add_parser(
        "search",
        help="search for the workload that maximizes an objective over policies (e.g. Belady's anomaly)",
        description="Seeded local search over workloads: maximize an OBJECTIVE, arithmetic (+ - * / and "
        "parentheses) over terms METRIC(policy[, size]), numbers and k (= --size). Exits 0 when a workload "
        "with objective > 0 was found (written with --out), 1 when none was (nothing written). Example: contention search "
        'paging --objective "faults(fifo, k+1) - faults(fifo, k)" --size 3 --length 40 --budget 20000',
        fill=_flags,
    )
