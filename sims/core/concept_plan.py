"""What a concept page's figure shows after each hands-on step, and the check that the step's
sentence (its ``expect``) and the quiz's answer hold there, in CPython.

The steps are cumulative: step k's button puts the figure in the state the steps before it left
(``plan``), then carries out its own action, so the page's buttons (web/static/js/concept.js) and
this check agree on every state: the overrides, the injected actions, the panels shown and the
virtual time. After a ``step`` action the time is whatever the element's notable-event rule finds,
so no ``expect`` may sit there until a later action sets the time again.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

from sims.core.concepts import Concept, ConceptError, figure_preset


@dataclass(frozen=True)
class State:
    """The figure at one moment: what the element's link state would say."""

    overrides: tuple[tuple[str, Any], ...]  # the figure's, then every `set` so far, later wins
    actions: tuple[tuple[int, float], ...]  # injected (action index, virtual time), in order
    panels: tuple[str, ...]  # shown
    t: float | None  # virtual time; None after `step` (the element finds it)

    def as_json(self) -> dict:
        return {
            "overrides": dict(self.overrides),
            "actions": [list(a) for a in self.actions],
            "panels": list(self.panels),
            "t": self.t,
        }


def inject_shows(t: float, duration: float) -> float:
    """Where an injection at ``t`` leaves a paused figure: a little later, so its effect shows
    (the element's ``inject`` moves on by max(1 s, duration / 30))."""
    return min(duration, t + max(1.0, duration / 30))


def initial(c: Concept) -> State:
    fig = c.figure
    return State(fig.overrides, (), fig.panels, fig.at)


def _merged(overrides: tuple, more: dict) -> tuple:
    out = dict(overrides)
    out.update(more)
    return tuple(out.items())


def plan(c: Concept) -> list[State]:
    """The state after each step, in order."""
    state, out = initial(c), []
    for k, step in enumerate(c.steps):
        a = step.action
        preset = figure_preset(replace(c.figure, overrides=state.overrides), c.path)
        where = f"{c.path}: steps[{k}]"
        if "seek" in a:
            state = replace(state, t=float(a["seek"]))
        elif "play" in a:
            if state.t is not None and a["until"] < state.t:
                raise ConceptError(f"{where}.action.until: the figure is already at {state.t:g} s, past {a['until']:g}")
            state = replace(state, t=float(a["until"]))
        elif "step" in a:
            if state.t is not None and state.t >= preset.duration:
                raise ConceptError(
                    f"{where}.action.step: the figure is at the run's end ({state.t:g} s): nothing is left to step to"
                )
            state = replace(state, t=None)
        elif "panels" in a:
            state = replace(state, panels=tuple(a["panels"]))
        elif "set" in a:
            state = State(_merged(state.overrides, a["set"]), (), state.panels, float(a.get("at", 0.0)))
        else:  # inject
            at = float(a["at"])
            if state.actions and at < state.actions[-1][1]:
                raise ConceptError(
                    f"{where}.action.at: an injection goes after the one before it ({state.actions[-1][1]:g} s)"
                )
            state = replace(state, actions=(*state.actions, (a["inject"], at)), t=inject_shows(at, preset.duration))
        if step.expect:
            if state.t is None:
                raise ConceptError(f"{where}.expect: after a `step` action the time is not known; seek or play first")
            hidden = [p for p in step.expect["panels"] if p not in state.panels]
            if hidden:
                raise ConceptError(f"{where}.expect.panels: {', '.join(hidden)} not shown at this step")
        out.append(state)
    return out


# -- runs, cached ---------------------------------------------------------------------------------
_METRICS: dict[tuple, dict] = {}
_RUNS: dict[tuple, Any] = {}


def metrics_at(c: Concept, state: State) -> dict[str, dict[str, float]]:
    """Every panel's metrics of the figure's preset in ``state`` (its overrides and injected
    actions, at its time). Runs are kept per (preset, overrides, actions) and only move forward
    when asked in time order, so the checks of one file (and of files sharing a figure) are cheap."""
    from sims.core.scenario import Scenario

    key = (c.figure.preset, repr(state.overrides), state.actions)  # repr: an override may be a list
    if (key, state.t) not in _METRICS:
        sc = _RUNS.get(key)
        if sc is None or sc.t > state.t:
            preset = figure_preset(replace(c.figure, overrides=state.overrides), c.path)
            sc = _RUNS[key] = Scenario(preset)
            for index, t in state.actions:
                sc.insert(dict(preset.actions[index]["event"], t=t))
        sc.advance(state.t)
        _METRICS[(key, state.t)] = sc.metrics()
    return _METRICS[(key, state.t)]


def _order_problem(m: dict, expect: dict) -> str:
    metric, order, margin = expect["metric"], expect["panels"], expect.get("margin", 0.0)
    higher = expect["higher_is_better"]
    for name in order:
        if metric not in m[name]:
            return f"panel {name!r} reports no {metric!r}"
    for better, worse in itertools.pairwise(order):
        a, b = m[better][metric], m[worse][metric]
        if not higher and m[better].get(f"{metric}_censored", 0):
            return f"{better}'s {metric} is a censored lower bound"
        gap = a - b if higher else b - a
        if not (gap >= margin if margin else gap > 0):
            need = f"by at least {margin:g}" if margin else "strictly"
            return f"{better} {metric}={a:.6g} does not beat {worse} {b:.6g} {need}"
    return ""


def quiz_result(c: Concept, k: int) -> dict:
    """Quiz ``k`` run on the figure (its overrides, its panels, at the quiz's time): the values
    and the panel(s) that win it, as the page reveals them."""
    q = c.quiz[k]
    m = metrics_at(c, replace(initial(c), t=q.at))
    values = {n: m[n].get(q.metric) for n in c.figure.panels}
    known = [v for v in values.values() if v is not None]
    best = (max if q.pick == "max" else min)(known) if known else None
    return {
        "question": q.question,
        "metric": q.metric,
        "at": q.at,
        "options": list(c.figure.panels),
        "answer": [n for n, v in values.items() if v is not None and v == best],
        "values": values,
        "explain": q.explain,
    }


def check(c: Concept) -> list[str]:
    """Every broken promise of ``c`` as one line naming the file and the field: a step whose
    ``expect`` does not hold where the step leaves the figure, a quiz whose ``answer`` is not the
    figure's only winner. A structural problem raises ConceptError instead."""
    if c.alias_of:
        return []
    problems = []
    states = plan(c)
    for k, (step, state) in enumerate(zip(c.steps, states, strict=True)):
        if step.expect:
            why = _order_problem(metrics_at(c, state), step.expect)
            if why:
                problems.append(f"{c.path}: steps[{k}].expect: at {state.t:g} s, {why}")
    for k, q in enumerate(c.quiz):
        r = quiz_result(c, k)
        if None in r["values"].values():
            missing = [n for n, v in r["values"].items() if v is None]
            problems.append(f"{c.path}: quiz[{k}].metric: {', '.join(missing)} report no {q.metric!r}")
        elif r["answer"] != [q.answer]:
            shown = ", ".join(f"{n} {v:.6g}" for n, v in r["values"].items())
            problems.append(
                f"{c.path}: quiz[{k}].answer: {q.answer!r}, but at {q.at:g} s the {q.pick} {q.metric} is {' and '.join(r['answer'])} ({shown})"
            )
    return problems
