"""Scoring one candidate workload: build the panels the objective names and feed them its stream.

The panels are the topic's own (``make_panel``), fed the whole stream in one ``feed`` call: by
the panel contract that equals a ``contention run`` of the written preset, without the preset
parsing, stream building and checkpoints a Scenario costs per run (``tests/test_adversary.py``
holds the two to the same numbers).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from sims.adversary.objective import Objective
from sims.adversary.topics import Layout, TopicSpec, spec_of
from sims.core import registry
from sims.core.limits import InputError
from sims.core.panel import PanelContext

__all__ = ["PanelPlan", "Problem", "violation_sentence"]

# a safety checker's property: where its key points, and what breaking it means (Raft, Figure 3)
_PROPERTIES = {
    "election_safety": ("in term", "two leaders in one term"),
    "leader_completeness": ("in term", "a leader lacks an entry committed in an earlier term"),
    "log_matching": ("at index", "two logs hold the same index and term but differ before it"),
    "state_machine_safety": ("at index", "two nodes committed different entries there"),
}


def violation_sentence(key: str, t: float) -> str:
    """One checker violation ("property:key" first seen at ``t``) as the search prints it."""
    what, _, where = key.partition(":")
    place, meaning = _PROPERTIES.get(what, ("at", ""))
    return f"{what.replace('_', ' ')} broken {place} {where} at t = {t:.3f} s" + (f" ({meaning})" if meaning else "")


@dataclass(frozen=True)
class PanelPlan:
    """One panel a candidate runs on: its name in the written preset and its validated params."""

    name: str
    policy: str
    size: int
    raw: dict  # as written in the preset (the size, and for ratelimit the limiter's numbers)
    params: dict  # resolved: the topic's and the policy's defaults filled in


class Problem:
    """The topic, the objective for one k, the panels it needs (plus any extra policies to show),
    and the seed the run uses (a panel's own generator derives from it).

    With ``preset`` (the browser's page), the panels are the preset's own (its names, its
    parameters): each term names a panel of it by policy and size, and every candidate fits
    in the preset's duration, so the page plays it with only its ``workload`` replaced.
    ``steps``: a schedule search's step set (``sims.consensus.trials.step_set``); ``params``:
    panel parameters set on every panel (the CLI's ``--set``, e.g. Raft's ``prevote``)."""

    def __init__(
        self,
        topic: str,
        objective: str,
        size: int,
        length: int,
        *,
        extra: list[str] = (),
        keys: int | None = None,
        seed: int = 1,
        preset=None,
        steps: tuple[str, ...] | None = None,
        params: dict | None = None,
    ) -> None:
        self.spec: TopicSpec = spec_of(topic)
        if size < 1 or length < 1:
            raise InputError(f"--size and --length must be >= 1, got {size} and {length}")
        if keys is not None and keys < 1:
            raise InputError(f"--keys must be >= 1, got {keys}")
        self.topic = topic
        self.objective = Objective(objective, size)
        self.size = size
        self.length = length
        self.seed = seed
        # a schedule runs until its last step settles: the page takes that duration with it
        fixed = preset is not None and self.spec.genome != "schedule"
        pauses = self.spec.pauses([t.policy for t in self.objective.terms] + list(extra))
        self.layout: Layout = self.spec.layout(
            size, length, keys, preset.duration if fixed else None, seed=seed, steps=steps, pauses=pauses
        )
        self._params = dict(params or {})
        if self._params and preset is not None:
            raise InputError("--set: a preset's panels keep their own parameters")
        if self.spec.size_param in self._params:
            raise InputError(f"--set {self.spec.size_param}: that is --size")
        self.universe = self.layout.universe
        self._topic = registry.load_topic(topic)
        known = registry.topic_info(topic).metrics
        for term in self.objective.terms:
            if term.metric not in known:
                raise InputError(
                    f"objective: column {term.column}: unknown {topic} metric {term.metric!r}; valid: {', '.join(sorted(known))}"
                )
        self.panels: list[PanelPlan] = []
        self._index: dict[tuple[str, int], int] = {}
        self._protos: dict[str, object] = {}  # spec.copy_panels: each panel built once, on no stream
        # add a node at t...; a schedule search's own faults replace a preset's
        self._scheduled = [dict(e) for e in preset.events] if fixed else []
        if preset is not None:
            self._preset_panels(preset)
        else:
            wanted = [(t.policy, t.size) for t in self.objective.terms] + [(p, size) for p in extra]
            first: dict[str, int] = {}
            for policy, _ in wanted:
                first.setdefault(policy, len(first))
            for policy, psize in sorted(set(wanted), key=lambda w: (first[w[0]], w[1])):  # fifo-3 before fifo-4
                self._plan(policy, psize)
        self._slots = [self._index[(t.policy, t.size)] for t in self.objective.terms]

    def _preset_panels(self, preset) -> None:
        """One plan per panel of the preset that a term names (the first of its policy and size)."""
        for t in self.objective.terms:
            if (t.policy, t.size) in self._index:
                continue
            registry.get_policy(self.topic, t.policy)  # an unknown policy: the valid ones
            hit = [p for p in preset.panels if p.policy == t.policy and self.spec.size_of(p.params) == t.size]
            if not hit:
                have = ", ".join(f"{p.name} ({p.policy}, {self.spec.size_of(p.params)})" for p in preset.panels)
                raise InputError(
                    f"objective: column {t.column}: {preset.name} has no {t.policy} panel of size {t.size}; its panels: {have}"
                )
            p = hit[0]
            self._index[(t.policy, t.size)] = len(self.panels)
            self.panels.append(PanelPlan(p.name, p.policy, t.size, {}, dict(p.params)))

    def _plan(self, policy: str, size: int) -> None:
        if (policy, size) in self._index:
            return
        raw = self.spec.panel_params(policy, size) | self._params  # unknown policies raise, listing the valid ones
        cls = registry.get_policy(self.topic, policy)
        specs = dict(self._topic.panel_params) | dict(getattr(cls, "PARAMS", {}))
        for key in self._params:
            if key not in specs:
                raise InputError(
                    f"--set {key}: unknown {self.topic} panel parameter; valid: {', '.join(sorted(specs))}"
                )
        params = registry.resolve_params(specs, raw, "panel")
        self._index[(policy, size)] = len(self.panels)
        self.panels.append(PanelPlan(f"{policy}-{size}", policy, size, raw, params))

    def metrics(self, genome: list[int]) -> dict[str, dict[str, float]]:
        """Every panel's metrics at the end of the candidate's run, by panel name."""
        events = self.layout.events(genome)
        duration = self.layout.run_length(genome)
        if self._scheduled:  # merged as the stream builder does: after workload events at the same time
            merged = [(e["t"], 0, i, e) for i, e in enumerate(events)]
            merged += [(e["t"], 1, i, e) for i, e in enumerate(self._scheduled) if e["t"] <= duration]
            merged.sort(key=lambda x: (x[0], x[1], x[2]))
            events = [m[3] for m in merged]
        out = {}
        for plan in self.panels:
            panel = self._panel(plan, events, duration)
            panel.feed(events, 0, len(events), duration)
            out[plan.name] = panel.metrics()
        return out

    def why(self, genome: list[int]) -> list[str]:
        """What a protocol's safety checker caught on this candidate, in order of time: one line
        each, "panel: property at index or term K, first at T s" (empty for other topics)."""
        if not self.spec.violations:
            return []
        events, duration = self.layout.events(genome), self.layout.run_length(genome)
        out = []
        for plan in self.panels:
            panel = self._panel(plan, events, duration)
            panel.feed(events, 0, len(events), duration)
            found = getattr(getattr(panel, "checker", None), "violations", {})
            for key, t in sorted(found.items(), key=lambda kv: kv[1]):
                out.append(f"{plan.name}: {violation_sentence(key, t)}")
        return out

    def panel_index(self, policy: str, size: int) -> int:
        """Where the panel of ``policy`` at ``size`` is in ``panels``."""
        return self._index[(policy, size)]

    def run_panel(self, genome: list[int], index: int = 0, record: bool = False):
        """The ``index``-th panel after the candidate's run; ``record``: with its trace kept
        (``ConsensusPanel.record``), for a diagram."""
        events, duration = self.layout.events(genome), self.layout.run_length(genome)
        panel = self._panel(self.panels[index], events, duration)
        if record:
            panel.record()
        panel.feed(events, 0, len(events), duration)
        return panel

    def _panel(self, plan: PanelPlan, events: list[dict], duration: float):
        if not self.spec.copy_panels:
            ctx = PanelContext(self.seed, duration, events, plan.name)
            return self._topic.make_panel(plan.policy, plan.name, dict(plan.params), ctx)
        proto = self._protos.get(plan.name)
        if proto is None:
            ctx = PanelContext(self.seed, duration, [], plan.name)
            proto = self._protos[plan.name] = self._topic.make_panel(plan.policy, plan.name, dict(plan.params), ctx)
        return copy.deepcopy(proto)

    def score(self, genome: list[int], metrics: dict | None = None) -> float:
        """The objective on this candidate (-inf where it is undefined)."""
        return self.rank(genome, metrics)[0]

    def rank(self, genome: list[int], metrics: dict | None = None) -> tuple[float, float]:
        """(the objective, the sum of the terms it rewards): how the search orders candidates."""
        m = self.metrics(genome) if metrics is None else metrics
        values = [m[self.panels[i].name][t.metric] for i, t in zip(self._slots, self.objective.terms, strict=True)]
        return self.objective.value(values), self.objective.rewarded(values)
