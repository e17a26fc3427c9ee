"""The best candidate as a preset file that ``contention run FILE.toml`` plays.

The workload is explicit (``sequence`` keys or ``arrival_times``), so the preset names one exact
stream on every seed; the panels are the objective's (named ``policy-size``) plus any extra
policies asked for. TOML is written by hand (the standard library reads TOML but does not write
it): strings as JSON strings, which TOML reads the same, numbers as ``repr``.
"""

from __future__ import annotations

import json
from typing import Any

from sims.adversary.evaluate import Problem


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):  # an inline table (a schedule's event); keys are plain names
        return "{ " + ", ".join(f"{k} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _fmt(x: float) -> str:
    return f"{x:g}" if x == x else "undefined"


def preset_text(problem: Problem, genome: list[int], name: str, score: float, command: str = "") -> str:
    """The preset (TOML text) of ``genome``: ``name`` must be the file's stem."""
    metrics = problem.metrics(genome)
    terms = problem.objective.terms
    shown = ", ".join(
        f"{t.metric}({t.policy}-{t.size}) = {_fmt(metrics[f'{t.policy}-{t.size}'][t.metric])}" for t in terms
    )
    title = f"Found by search: {problem.objective.text} = {_fmt(score)}"
    watch = f"At the end: {shown}."
    description = (
        f"{'An' if problem.topic[0] in 'aeiou' else 'A'} {problem.topic} workload found by adversary search to maximize {problem.objective.text} "
        f"with k = {problem.size}" + (f" ({command})" if command else "") + "."
    )
    charts = []
    for t in terms:
        if t.metric not in charts:
            charts.append(t.metric)
    lines = [
        f"# {command}" if command else "# written by contention search",
        f"name = {_value(name)}",
        f"topic = {_value(problem.topic)}",
        f"title = {_value(title)}",
        f"watch_for = {_value(watch)}",
        f"description = {_value(description)}",
        f"seed = {problem.seed}",
        f"duration = {_value(problem.layout.run_length(genome))}",
        "",
        "[workload]",
    ]
    workload = problem.layout.workload(genome)
    lines += [f"{k} = {_value(v)}" for k, v in workload.items() if k != "schedule"]
    if "schedule" in workload:  # one event a line
        lines += ["schedule = ["] + [f"  {_value(ev)}," for ev in workload["schedule"]] + ["]"]
    if problem.layout.genome == "schedule" and problem.topic == "replication":  # faults as [[events]]
        for ev in problem.layout.schedule(genome):
            lines += ["", "[[events]]"] + [f"{k} = {_value(v)}" for k, v in ev.items()]
    for plan in problem.panels:
        lines += ["", "[[panels]]", f"name = {_value(plan.name)}", f"policy = {_value(plan.policy)}"]
        lines += [f"{k} = {_value(v)}" for k, v in plan.raw.items()]
    lines += ["", "[site]", f"charts = {_value(charts[:3])}", ""]
    return "\n".join(lines)
