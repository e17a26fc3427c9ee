"""Running one protocol on a hand-made or generated schedule, without a preset: the property
tests, the seeded search for the broken variant's violation and the Figure 16 script use it.

``leader_relative_schedule(rng)`` draws the kind of schedule Figure 8 is made of, and
``schedule_events(steps)`` builds one from given steps (what ``contention search consensus``
varies): steps that
isolate the leader (alone or with its next node), crash the leader or its next node, restart
everything crashed, heal, or send one client command, with gaps short and long. Each panel
resolves ``leader`` in its own run, so one schedule exercises every protocol alike.
"""

from __future__ import annotations

from random import Random

from sims.consensus import PANEL_PARAMS, make_panel
from sims.consensus.panel import ConsensusPanel
from sims.core.panel import PanelContext

STEPS = ("op", "isolate1", "isolate2", "crash", "crash_next", "restart", "heal")
GAPS = (0.01, 0.05, 0.3, 0.6)


def run_events(
    policy: str, events: list[dict], duration: float, seed: int = 1, record: bool = False, **params
) -> ConsensusPanel:
    """A panel of ``policy`` fed ``events`` (time-ordered stream events) up to ``duration``;
    ``record``: keeping a trace for ``sims.consensus.diagram``."""
    full = {k: p.default for k, p in PANEL_PARAMS.items()} | params
    ctx = PanelContext(seed, duration, events, policy)
    panel = make_panel(policy, policy, full, ctx)
    if record:
        panel.record()
    panel.feed(events, 0, len(events), duration)
    return panel


def leader_relative_schedule(rng: Random, length: int = 14) -> tuple[list[dict], float]:
    """``length`` random steps from t = 1 s; returns (events, a duration that lets it settle)."""
    steps = []
    for _ in range(length):
        step = rng.randrange(len(STEPS))
        steps.append((step, rng.randrange(len(GAPS))))
    return schedule_events(steps)


def schedule_events(steps: list[tuple[int, int]]) -> tuple[list[dict], float]:
    """The events of ``steps``, each (an index into STEPS, an index into GAPS: the wait after
    it), from t = 1 s; returns (events, a duration that lets the last step settle)."""
    t = 1.0
    events: list[dict] = []
    crashed: list[str] = []
    ops = marks = 0
    for step_index, gap in steps:
        step = STEPS[step_index]
        if step == "op":
            ops += 1
            events.append({"t": t, "kind": "op", "id": ops})
        elif step.startswith("isolate"):
            mark = f"m{marks}"
            marks += 1
            events.append({"t": t, "kind": "fault", "fault": "mark", "name": mark, "node": "leader"})
            group = [mark] if step == "isolate1" else [mark, mark + "+1"]
            events.append({"t": t, "kind": "fault", "fault": "partition", "groups": [group]})
        elif step.startswith("crash"):
            mark = f"m{marks}"
            marks += 1
            node = "leader" if step == "crash" else "leader+1"
            events.append({"t": t, "kind": "fault", "fault": "crash", "node": node, "mark": mark})
            crashed.append(mark)
        elif step == "restart":
            for mark in crashed:
                events.append({"t": t, "kind": "fault", "fault": "restart", "node": mark, "durable": True})
            crashed = []
        else:
            events.append({"t": t, "kind": "fault", "fault": "heal"})
        t += GAPS[gap]
    return events, t + 1.0
