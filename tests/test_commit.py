"""consensus/atomic commit: two_phase_commit and three_phase_commit (sims/consensus/commit.py),
against references computed by hand from the schedule: the messages of a fault-free transaction,
2PC's lock holding through the coordinator's downtime, 3PC's timeouts, the partition that splits
3PC's outcome, atomicity on random fault schedules, and the presets' claims on seeds 1-5."""

from __future__ import annotations

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims.consensus import PANEL_PARAMS, make_panel
from sims.consensus.commit_panel import PARAMS
from sims.core import presets, stream
from sims.core.panel import PanelContext
from sims.core.scenario import Scenario

D = 0.005  # one-way delay: fixed in the hand-made runs, so every time below is exact
W = 0.01  # a participant's work before it votes (txn_work)
TIMEOUT = 0.2  # txn_timeout
PARTS = [1, 2, 3, 4]


def run(policy: str, events: list[dict], duration: float, seed: int = 1, **params):
    full = {k: p.default for k, p in (PANEL_PARAMS | PARAMS).items()}
    full |= {"delay_lo": D, "delay_hi": D, "txn_work": W, "txn_timeout": TIMEOUT} | params
    panel = make_panel(policy, policy, full, PanelContext(seed, duration, events, policy))
    panel.feed(events, 0, len(events), duration)
    panel.check_invariants()
    return panel


def txn(t: float, id_: int = 1, parts=PARTS, no=()) -> dict:
    return {"t": t, "kind": "txn", "id": id_, "parts": list(parts), "no": list(no)}


def states(panel, txn_id: int = 1) -> dict[int, str]:
    return {node.id: node.state.get(txn_id) for node in panel.net.nodes[1:]}


# -- messages of one fault-free transaction, counted by hand --------------------------------------
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_a_fault_free_transaction_costs_4k_messages_in_2pc_and_6k_in_3pc(k):
    """2PC: PREP, VOTE, DEC, ACK per participant; 3PC adds PRE and its acknowledgement."""
    parts = PARTS[:k]
    for policy, per in (("two_phase_commit", 4), ("three_phase_commit", 6)):
        m = run(policy, [txn(1.0, parts=parts)], 3.0).metrics()
        assert (m["committed"], m["aborted"], m["messages"]) == (1, 0, per * k), (policy, m)
        assert m["messages_per_txn"] == per * k
        assert m["safety_violations"] == m["blocked"] == 0
        # each participant holds the locks from its yes vote (t0 + D + W) to the decision:
        # 2PC: the last vote arrives at t0 + 2D + W, the decision D later; 3PC: two more D
        held = (2 * D if policy == "two_phase_commit" else 4 * D) * k
        assert m["blocked_s"] == pytest.approx(held, abs=1e-9)


def test_a_no_vote_aborts_at_4k_messages_in_both():
    for policy in ("two_phase_commit", "three_phase_commit"):
        panel = run(policy, [txn(1.0, no=[3])], 3.0)
        m = panel.metrics()
        assert (m["committed"], m["aborted"], m["messages"]) == (0, 1, 16), (policy, m)
        assert set(states(panel).values()) == {"aborted"}


# -- 2PC blocks for as long as the coordinator is down --------------------------------------------
@pytest.mark.parametrize("crash, restart", [(1.018, 4.0), (1.016, 2.5), (1.019, 9.75)])
def test_2pc_participants_hold_their_locks_for_the_coordinators_whole_downtime(crash, restart):
    """Every participant votes yes at t0 + D + W = 1.015; the coordinator crashes before the votes
    arrive (1.020), so nobody knows the outcome and every participant is prepared: asking the others
    cannot help. The restarted coordinator aborts (presumed abort) and its decision arrives D later.
    Each participant's lock holding is then the downtime, plus the moments between its vote and
    the crash, plus the decision's flight."""
    events = [
        txn(1.0),
        {"t": crash, "kind": "fault", "fault": "crash", "node": "leader", "mark": "c"},
        {"t": restart, "kind": "fault", "fault": "restart", "node": "c", "durable": True},
    ]
    voted = 1.0 + D + W
    downtime = restart - crash
    panel = run("two_phase_commit", events, (crash + restart) / 2)
    m = panel.metrics()
    assert m["blocked"] == 1 and {panel.net.nodes[i].state_of(1) for i in PARTS} == {"blocked"}
    panel = run("two_phase_commit", events, restart + 1.0)
    m = panel.metrics()
    assert m["blocked_max_s"] == pytest.approx((restart + D) - voted, abs=1e-9)
    assert m["blocked_max_s"] - downtime == pytest.approx((crash - voted) + D, abs=1e-9)
    assert m["blocked_s"] == pytest.approx(4 * ((restart + D) - voted), abs=1e-9)
    assert (m["aborted"], m["blocked"], m["safety_violations"]) == (1, 0, 0)


def test_2pc_cooperative_termination_helps_when_a_participant_voted_no():
    """One participant voted no (and aborted at once): the blocked ones ask it and abort after one
    timeout, while the coordinator is still down."""
    events = [txn(1.0, no=[4]), {"t": 1.018, "kind": "fault", "fault": "crash", "node": 0}]
    m = run("two_phase_commit", events, 3.0).metrics()
    voted = 1.0 + D + W
    assert m["blocked_max_s"] == pytest.approx(voted + TIMEOUT + 2 * D - voted, abs=1e-9)
    assert (m["aborted"], m["safety_violations"]) == (1, 0)


# -- 3PC does not block on a coordinator crash ----------------------------------------------------
def test_3pc_participants_time_out_and_decide_while_the_coordinator_is_down():
    # before PRE: every participant is uncertain, times out 200 ms after its vote and aborts
    events = [txn(1.0), {"t": 1.018, "kind": "fault", "fault": "crash", "node": 0}]
    panel = run("three_phase_commit", events, 5.0)
    m = panel.metrics()
    assert m["blocked_max_s"] == pytest.approx(TIMEOUT, abs=1e-9)
    assert set(states(panel).values()) == {"aborted"} and m["safety_violations"] == 0
    # after PRE left (the votes arrive at 1.020, PRE with them): pre-committed, they time out and commit
    events = [txn(1.0), {"t": 1.021, "kind": "fault", "fault": "crash", "node": 0}]
    panel = run("three_phase_commit", events, 5.0)
    m = panel.metrics()
    assert m["blocked_max_s"] == pytest.approx(2 * D + TIMEOUT, abs=1e-9)  # PRE at +2D, then the timeout
    assert set(states(panel).values()) == {"committed"} and m["safety_violations"] == 0


# -- a partition: 3PC splits, 2PC blocks ------------------------------------------------------------
def test_a_partition_splits_3pc_and_blocks_2pc():
    """Votes reach the coordinator at 1.020 and PRE (3PC) or COMMIT (2PC) leaves at once, to arrive
    at 1.025; the cut at 1.022 keeps it from S4 and S5 (nodes 3 and 4)."""
    events = [
        txn(1.0),
        {"t": 1.022, "kind": "fault", "fault": "partition", "groups": [[0, 1, 2], [3, 4]]},
        {"t": 3.0, "kind": "fault", "fault": "heal"},
    ]
    three = run("three_phase_commit", events, 4.0)
    assert states(three) == {1: "committed", 2: "committed", 3: "aborted", 4: "aborted"}
    assert three.metrics()["safety_violations"] == 1
    assert list(three.checker.violations) == ["atomicity:1"]
    voted = 1.0 + D + W
    # S4 and S5 abort first (uncertain, 200 ms after their votes); S2 and S3 commit when their
    # pre-commit times out, as the coordinator's commit (its acknowledgements timed out) arrives
    assert three.checker.outcome[1] == "abort"
    assert three.checker.violations["atomicity:1"] == pytest.approx(1.0 + 2 * D + W + TIMEOUT + D, abs=1e-9)
    two = run("two_phase_commit", events, 2.0)
    assert states(two) == {1: "committed", 2: "committed", 3: "prepared", 4: "prepared"}
    assert [two.net.nodes[i].state_of(1) for i in (3, 4)] == ["blocked", "blocked"]
    two = run("two_phase_commit", events, 4.0)
    m = two.metrics()
    assert states(two) == {i: "committed" for i in PARTS} and m["safety_violations"] == 0
    # S4 and S5 held their locks until the heal, and learned the outcome within one timeout after it
    assert 3.0 - voted <= m["blocked_max_s"] <= 3.0 - voted + TIMEOUT + 2 * D


# -- atomicity on random schedules ----------------------------------------------------------------
@st.composite
def schedules(draw, lossy: bool):
    events, t, crashed = [], 0.5, set()
    for k in range(draw(st.integers(3, 20))):
        t += draw(st.sampled_from([0.002, 0.005, 0.01, 0.05, 0.3]))
        kind = draw(st.sampled_from(["txn", "txn", "txn", "crash", "restart", "partition", "heal", "link"]))
        if kind == "txn":
            parts = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4, unique=True))
            no = draw(st.lists(st.sampled_from(parts), max_size=1))
            events.append(txn(t, k + 1, sorted(parts), no))
        elif kind == "crash":
            node = draw(st.integers(0, 4))
            crashed.add(node)
            events.append({"t": t, "kind": "fault", "fault": "crash", "node": node})
        elif kind == "restart" and crashed:
            node = draw(st.sampled_from(sorted(crashed)))
            crashed.discard(node)
            events.append({"t": t, "kind": "fault", "fault": "restart", "node": node, "durable": True})
        elif kind == "partition" and lossy:
            side = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4, unique=True))
            events.append({"t": t, "kind": "fault", "fault": "partition", "groups": [side]})
        elif kind == "heal":
            events.append({"t": t, "kind": "fault", "fault": "heal"})
        elif kind == "link" and lossy:
            loss = draw(st.sampled_from([0.0, 0.1, 0.4]))
            events.append({"t": t, "kind": "fault", "fault": "link", "loss": loss, "duplicate": 0.1, "reorder": 0.2})
    for node in sorted(crashed):  # everyone back, so that every transaction can finish
        events.append({"t": t + 0.5, "kind": "fault", "fault": "restart", "node": node, "durable": True})
    events.append({"t": t + 0.5, "kind": "fault", "fault": "heal"})
    events.append({"t": t + 0.5, "kind": "fault", "fault": "link", "loss": 0.0, "duplicate": 0.0, "reorder": 0.0})
    return events, t + 8.0, draw(st.integers(0, 2**32))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedules(lossy=True))
def test_2pc_is_atomic_on_every_schedule_and_everyone_learns_the_outcome(case):
    """Crashes of any node, partitions of any split, lost, duplicated and reordered messages: 2PC
    never splits a transaction, and once all is repaired every participant decides."""
    events, duration, seed = case
    panel = run("two_phase_commit", events, duration, seed, delay_lo=0.005, delay_hi=0.01)
    assert not panel.checker.violations, events
    for node in panel.net.nodes[1:]:
        assert all(s in ("committed", "aborted") for s in node.state.values()), (node.id, node.state, events)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schedules(lossy=False))
def test_3pc_is_atomic_when_only_nodes_crash(case):
    """Skeen's model: crashes and restarts, messages never lost and delays bounded (5-10 ms, 10 ms of
    work before a vote): 3PC's timeouts never split a transaction."""
    events, duration, seed = case
    panel = run("three_phase_commit", events, duration, seed, delay_lo=0.005, delay_hi=0.01)
    assert not panel.checker.violations, events


# -- the presets' claims, measured against the schedule -------------------------------------------
def _stream(p, seed):
    return list(stream.generate(p.workload_kind, p.workload, seed, p.duration))


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_the_coordinator_crash_preset_blocks_2pc_for_its_downtime_and_not_3pc(seed):
    p = presets.load("consensus-two-phase-commit-blocks")
    events = _stream(p, seed)
    crash = next(e["t"] for e in events if e.get("fault") == "crash")
    restart = next(e["t"] for e in events if e.get("fault") == "restart")
    sc = Scenario(p, seed)
    sc.advance(p.duration)
    m = sc.metrics()
    two, three = m["two_phase_commit"], m["three_phase_commit"]
    # prepared before the crash, decided when the restarted coordinator's abort arrives
    assert restart - crash <= two["blocked_max_s"] <= restart - crash + 0.02, two
    assert three["blocked_max_s"] <= TIMEOUT + 0.03, three
    assert two["safety_violations"] == three["safety_violations"] == 0


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_the_partition_preset_splits_3pc_and_blocks_2pc_until_the_heal(seed):
    p = presets.load("consensus-three-phase-commit-split")
    events = _stream(p, seed)
    cut = next(e["t"] for e in events if e.get("fault") == "partition")
    heal = next(e["t"] for e in events if e.get("fault") == "heal")
    sc = Scenario(p, seed)
    sc.advance(p.duration)
    m = sc.metrics()
    two, three = m["two_phase_commit"], m["three_phase_broken"]
    assert three["safety_violations"] >= 1 and two["safety_violations"] == 0
    assert heal - cut <= two["blocked_max_s"] <= heal - cut + 0.05 + TIMEOUT, two
    assert three["blocked_max_s"] <= TIMEOUT + 0.03, three


# -- the workload ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "entry, field",
    [
        ({"t": 1.0, "kind": "txn", "parts": [0, 1]}, "parts"),
        ({"t": 1.0, "kind": "txn", "parts": [1], "no": [9]}, "no"),
        ({"t": 1.0, "kind": "txn", "parts": []}, "parts"),
        ({"t": 1.0, "fault": "explode"}, "fault"),
    ],
)
def test_a_bad_schedule_entry_names_its_field(entry, field):
    p = presets.load("consensus-two-phase-commit-blocks")
    wl = dict(p.workload, schedule=[{"t": 0.5, "kind": "txn"}, entry])
    with pytest.raises(ValueError, match=rf"workload\.schedule\[1\]\.{field}"):
        list(stream.generate(p.workload_kind, wl, 1, 5.0))


def test_transactions_draw_their_participants_and_votes_from_the_stream():
    p = presets.load("consensus-two-phase-commit-blocks")
    wl = dict(p.workload, no_prob=0.5, schedule=[])
    events = [e for e in stream.generate(p.workload_kind, wl, 3, 20.0) if e["kind"] == "txn"]
    assert len(events) > 100
    assert all(len(e["parts"]) == 3 and set(e["no"]) <= set(e["parts"]) for e in events)
    assert all(1 <= q <= 4 for e in events for q in e["parts"])
    share = sum(len(e["no"]) for e in events) / (3 * len(events))
    assert 0.4 < share < 0.6
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
