"""Running one protocol on a hand-made or generated schedule, without a preset: the property
tests, the seeded search for the broken variant's violation and the Figure 16 script use it.

``leader_relative_schedule(rng)`` draws the kind of schedule Figure 8 is made of, and
``schedule_events(steps)`` builds one from given steps (what ``contention search consensus``
varies): steps that
isolate the leader (alone or with its next node), crash the leader or its next node, restart
everything crashed, heal, or send one client command, with gaps short and long; the election
search adds two (``ELECTION_STEPS``): pause the leader, and slow its clock. One more step is
there only when asked for (``step_set``, the CLI's ``--steps``): ``oneway``, the leader's next
node stops hearing every other node while they still hear it (``sims.net``'s one-way blocks, as
the ``consensus-oneway`` preset; a heal clears them). Each panel resolves ``leader`` in its own
run, so one schedule exercises every protocol alike.
"""

from __future__ import annotations

from random import Random

from sims.consensus import PANEL_PARAMS, make_panel
from sims.consensus.panel import ConsensusPanel
from sims.core.limits import InputError
from sims.core.panel import PanelContext

STEPS = ("op", "isolate1", "isolate2", "crash", "crash_next", "restart", "heal")
GAPS = (0.01, 0.05, 0.3, 0.6)
# the election search's steps: the consensus ones (same numbers), then a pause of the leader for
# PAUSES[gap] seconds (it resumes, then the next step comes; the gaps tripled: two pauses shorter
# than failure detection, two longer than a lease's renewal period) and its clock set to run at
# SKEW (20% slow: past the lease's default guard of 10%, within the third ZooKeeper's client allows)
ELECTION_STEPS = (*STEPS, "pause", "skew")
PAUSES = (0.03, 0.15, 0.9, 1.8)
SKEW = 0.8
# steps a search uses only when asked (--steps): adding them to the defaults would change every
# seeded search's draws and so its published evaluation counts
EXTRA_STEPS = ("oneway",)


def step_set(topic: str, names: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The steps a ``topic`` (consensus or election) schedule search varies: ``names`` (a subset
    of the topic's steps and ``EXTRA_STEPS``, or ``("all",)``) in the canonical order, else the
    topic's default (STEPS, ELECTION_STEPS). A gene's step is an index into this tuple."""
    default = ELECTION_STEPS if topic == "election" else STEPS
    if names is None:
        return default
    known = (*default, *EXTRA_STEPS)
    if tuple(names) == ("all",):
        return known
    for name in names:
        if name not in known:
            raise InputError(f"--steps: unknown {topic} step {name!r}; valid: {', '.join(known)} (or all)")
    if not names or len(set(names)) != len(names):
        raise InputError(f"--steps: expected distinct step names, got {','.join(names)!r}")
    return tuple(n for n in known if n in names)


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


def schedule_events(
    steps: list[tuple[int, int]], names: tuple[str, ...] = STEPS, n: int = 5
) -> tuple[list[dict], float]:
    """The events of ``steps``, each (an index into ``names``, STEPS, ELECTION_STEPS or a
    ``step_set``, and an index into GAPS: the wait after it; after a pause, into PAUSES: its
    length), from t = 1 s, for ``n`` servers (a one-way step blocks the links of all the others);
    returns (events, a duration that lets the last step settle)."""
    t = 1.0
    events: list[dict] = []
    crashed: list[str] = []
    ops = marks = 0
    for step_index, gap in steps:
        step = names[step_index]
        if step == "pause":  # the leader stops the world, then resumes believing what it did
            mark = f"m{marks}"
            marks += 1
            events.append({"t": t, "kind": "fault", "fault": "pause", "node": "leader", "mark": mark})
            t += PAUSES[gap]
            events.append({"t": t, "kind": "fault", "fault": "resume", "node": mark})
            continue
        if step == "skew":
            events.append({"t": t, "kind": "fault", "fault": "drift", "node": "leader", "rate": SKEW})
        elif step == "op":
            ops += 1
            events.append({"t": t, "kind": "op", "id": ops})
        elif step == "oneway":  # the leader's next node hears nobody; everyone still hears it
            mark = f"m{marks}"
            marks += 1
            events.append({"t": t, "kind": "fault", "fault": "mark", "name": mark, "node": "leader"})
            for j in range(n):
                if j != 1:
                    src = f"{mark}+{j}" if j else mark
                    events.append({"t": t, "kind": "fault", "fault": "oneway", "from": src, "to": mark + "+1"})
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
