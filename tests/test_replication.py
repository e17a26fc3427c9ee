"""Replication: the stale-read oracle against hand-made histories and a brute-force
linearizability check; sync never loses an acknowledged write under random faults; R + W > N
never reads stale without faults; seeking gives the view of advancing; the books recount."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import presets
from sims.core.panel import PanelContext
from sims.core.registry import get_policy
from sims.core.scenario import Scenario
from sims.replication import PANEL_PARAMS, make_panel
from sims.replication.oracle import stale_reads
from sims.replication.workload import registers

PRESETS = [n for n in presets.preset_names() if n.startswith("replication-")]


def w(value, start, end, key=0):
    return {"op": "w", "key": key, "value": value, "start": start, "end": end}


def r(value, start, end, key=0):
    return {"op": "r", "key": key, "value": value, "start": start, "end": end}


# the oracle -----------------------------------------------------------------------------------
def test_a_read_after_a_completed_write_that_returns_the_initial_value_is_stale():
    assert stale_reads([w(1, 0.0, 1.0), r(None, 2.0, 3.0)]) == [1]


def test_a_read_overlapping_the_write_may_return_either_value():
    assert stale_reads([w(1, 0.0, 2.0), r(None, 1.0, 3.0), r(1, 1.0, 3.0)]) == []


def test_a_read_of_a_superseded_value_is_stale():
    h = [w(1, 0.0, 1.0), w(2, 2.0, 3.0), r(1, 4.0, 5.0), r(2, 4.0, 5.0)]
    assert stale_reads(h) == [2]


def test_concurrent_writes_may_be_ordered_either_way():
    h = [w(1, 0.0, 3.0), w(2, 1.0, 2.0), r(1, 4.0, 5.0), r(2, 4.0, 5.0)]
    assert stale_reads(h) == []


def test_a_write_that_never_completed_may_be_seen_or_not():
    h = [w(1, 0.0, 1.0), w(2, 2.0, None), r(2, 3.0, 4.0), r(1, 5.0, 6.0)]
    assert stale_reads(h) == []


def test_other_registers_do_not_count_and_boundaries_are_strict():
    assert stale_reads([w(1, 0.0, 1.0, key=1), r(None, 2.0, 3.0, key=0)]) == []
    assert stale_reads([w(2, 0.0, 1.0), r(None, 1.0, 2.0)]) == []  # it ended as the read began: concurrent


def linearizable_read(h: list[dict], i: int) -> bool:
    """Brute force: is there an order of the writes and read i, respecting real time, in which
    read i returns its value? (Reads other than i impose nothing: the oracle's rule.)"""
    ops = [o for o in h if o["op"] == "w" and o["key"] == h[i]["key"]] + [h[i]]
    inf = float("inf")
    for perm in itertools.permutations(range(len(ops))):
        pos = {k: p for p, k in enumerate(perm)}
        if any(
            (ops[a]["end"] if ops[a]["end"] is not None else inf) < ops[b]["start"] and pos[a] > pos[b]
            for a in range(len(ops))
            for b in range(len(ops))
        ):
            continue
        before = [ops[k] for k in perm[: pos[len(ops) - 1]] if k != len(ops) - 1]
        # a pending write may also be left out entirely (it never took effect)
        completed = [o for o in before if o["end"] is not None]
        seen = completed[-1]["value"] if completed else None
        if seen == h[i]["value"] or (before and before[-1]["value"] == h[i]["value"]):
            return True
    return False


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), st.integers(0, 8), st.integers(1, 4), st.booleans(), st.integers(0, 4)),
        min_size=1,
        max_size=5,
    )
)
def test_the_oracle_agrees_with_brute_force(spec):
    h = []
    values = [None]
    for is_read, start, length, done, pick in spec:
        end = float(start + length) if done or is_read else None
        if is_read:
            h.append(r(values[pick % len(values)], float(start), end))
        else:
            values.append(len(values))
            h.append(w(values[-1], float(start), end))
    # a read may only return a value written before it ended
    for o in h:
        if o["op"] == "r" and o["value"] is not None:
            src = next(x for x in h if x["op"] == "w" and x["value"] == o["value"])
            if src["start"] >= o["end"]:
                o["value"] = None
    flagged = set(stale_reads(h))
    for i, o in enumerate(h):
        if o["op"] == "r":
            assert (i in flagged) == (not linearizable_read(h, i)), (h, i)


# strategies under random schedules ----------------------------------------------------------------
def run(policy: str, events: list[dict], until: float, seed: int = 0, **params):
    cls = get_policy("replication", policy)
    p = {k: v.default for k, v in (PANEL_PARAMS | cls.PARAMS).items()} | params
    ctx = PanelContext(seed=seed, duration=until, events=events, panel_name=policy)
    panel = make_panel(policy, policy, p, ctx)
    lo = 0
    for k in range(1, 11):  # in slices, checking the books as it goes
        t = until * k / 10
        hi = lo
        while hi < len(events) and events[hi]["t"] <= t:
            hi += 1
        panel.feed(events, lo, hi, t)
        panel.check_invariants()
        lo = hi
    return panel


def ops(seed: int, n: int, until: float, rate: float = 150.0, keys: int = 3) -> list[dict]:
    p = {"rate": rate, "read_ratio": 0.4, "keys": keys, "contacts": n, "stop_at": 0.0}
    return list(registers(p, random.Random(seed), until))


def merge(events: list[dict], faults: list[dict]) -> list[dict]:
    merged = [(e["t"], 0, i, e) for i, e in enumerate(events)] + [(f["t"], 1, i, f) for i, f in enumerate(faults)]
    merged.sort(key=lambda x: x[:3])
    return [m[3] for m in merged]


fault_st = st.tuples(
    st.floats(0.1, 7.9, allow_nan=False),
    st.sampled_from(["crash", "restart", "partition", "heal", "slow"]),
    st.integers(0, 4),
    st.integers(0, 31),
)


def faults_of(spec, n: int) -> list[dict]:
    out = []
    for t, kind, node, mask in spec:
        f = {"t": t, "kind": "fault", "fault": kind}
        if kind in ("crash", "restart", "slow"):
            f["node"] = node % n
        if kind == "restart":
            f["durable"] = True
        if kind == "slow":
            f["extra"] = 0.02 * (mask % 3)
        if kind == "partition":
            side = [i for i in range(n) if mask >> i & 1]
            f["groups"] = [side] if side and len(side) < n else [[0]]
        out.append(f)
    return sorted(out, key=lambda f: f["t"])


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 10**6), st.sampled_from([3, 5]), st.lists(fault_st, max_size=8))
def test_sync_never_loses_an_acknowledged_write(seed, n, spec):
    until = 10.0
    events = merge(ops(seed, n, 8.0), faults_of(spec, n))
    panel = run("sync", events, until, seed=seed, nodes=n, failover_after=0.5)
    assert panel.metrics()["lost_acked_writes"] == 0


def test_async_does_lose_acknowledged_writes_on_such_a_schedule():
    """The property above can fail: the same harness finds async's losses (counted when the old
    leader comes back and truncates what only it held)."""
    crash = [
        {"t": 4.03, "kind": "fault", "fault": "crash", "node": 0},  # between two shipments
        {"t": 6.0, "kind": "fault", "fault": "restart", "node": 0, "durable": True},
    ]
    events = merge(ops(1, 3, 8.0, rate=300.0), crash)
    panel = run("async", events, 10.0, nodes=3, ship_every=0.05, failover_after=0.5)
    assert panel.metrics()["lost_acked_writes"] > 0


@settings(max_examples=examples(40), deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(1, 5).flatmap(lambda N: st.tuples(st.just(N), st.integers(1, N), st.integers(1, N))),
    st.floats(0.0, 0.03),
)
def test_overlapping_quorums_never_read_stale_without_faults(seed, nrw, spread):
    N, R, W = nrw
    if R + W <= N:
        R = N + 1 - W
    events = ops(seed, N, 3.0, rate=400.0, keys=1)
    panel = run("quorum", events, 4.0, seed=seed, nodes=N, N=N, R=R, W=W, delay_lo=0.001, delay_hi=0.001 + spread)
    m = panel.metrics()
    assert m["stale_reads"] == 0
    assert m["acked_writes"] > 0


def test_disjoint_quorums_do_read_stale():
    events = ops(2, 3, 3.0, rate=400.0, keys=1)
    panel = run("quorum", events, 4.0, nodes=3, N=3, R=1, W=1, delay_lo=0.001, delay_hi=0.02)
    assert panel.metrics()["stale_reads"] > 0


def test_a_lost_disk_on_every_holder_loses_the_writes_and_the_books_say_so():
    events = ops(3, 3, 2.0, rate=200.0)
    faults = []
    for i in range(3):
        faults += [{"t": 2.5, "kind": "fault", "fault": "crash", "node": i}]
        faults += [{"t": 3.0, "kind": "fault", "fault": "restart", "node": i, "durable": False}]
    panel = run("quorum", merge(events, faults), 4.0, nodes=3)
    m = panel.metrics()
    assert m["lost_acked_writes"] == m["acked_writes"] > 0


def test_sloppy_quorum_serves_the_minority_and_hands_hints_back():
    events = ops(4, 5, 6.0, rate=200.0)
    faults = [
        {"t": 1.0, "kind": "fault", "fault": "partition", "groups": [[0, 1]]},
        {"t": 4.0, "kind": "fault", "fault": "heal"},
    ]
    strict = run("quorum", merge(events, faults), 8.0, nodes=5, N=3, R=2, W=2).metrics()
    sloppy = run("sloppy_quorum", merge(events, faults), 8.0, nodes=5, N=3, R=2, W=2)
    assert sloppy.metrics()["partition_availability"] > strict["partition_availability"] + 0.2
    assert all(not node.hints for node in sloppy.net.nodes)  # all handed back after the heal


def test_chain_loses_nothing_when_a_middle_node_dies():
    events = merge(ops(5, 3, 6.0, rate=200.0), [{"t": 2.0, "kind": "fault", "fault": "crash", "node": 1}])
    panel = run("chain", events, 8.0, nodes=3, failover_after=0.3)
    m = panel.metrics()
    assert m["lost_acked_writes"] == 0 and m["stale_reads"] == 0
    assert panel.monitor.chain == [0, 2]
    assert m["acked_writes"] > 0.7 * m["writes"]  # all but the clients of node 1, gone from t = 2 s


def test_bad_settings_are_refused_naming_the_field():
    with pytest.raises(ValueError, match="R: expected at most N"):
        run("quorum", [], 1.0, nodes=3, N=3, R=4, W=1)
    with pytest.raises(ValueError, match="N: expected at most nodes"):
        run("quorum", [], 1.0, nodes=3, N=5)


# views and seeking ------------------------------------------------------------------------------
@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", PRESETS)
def test_seeking_back_gives_the_view_of_advancing_there(name):
    p = presets.load(name)
    times = [p.duration * f for f in (0.2, 0.37, 0.55, 0.8)]
    direct = {}
    for t in times:
        sc = Scenario(p, p.seed)
        sc.advance(t)
        direct[t] = (sc.views(), sc.metrics())
    sc = Scenario(p, p.seed, checkpoint_every=2.0)
    sc.advance(p.duration)
    for t in reversed(times):
        sc.seek(t)
        assert (sc.views(), sc.metrics()) == direct[t], f"{name} at t={t}"


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_keeps_its_books(name):
    p = presets.load(name)
    sc = Scenario(p, p.seed)
    for k in range(1, 6):
        sc.advance(p.duration * k / 5)
        for panel in sc.panels.values():
            panel.check_invariants()


crash_st = st.tuples(
    st.floats(0.1, 7.9, allow_nan=False),
    st.sampled_from(["crash", "restart", "slow"]),
    st.integers(0, 4),
    st.integers(0, 31),
)


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(0, 10**6), st.lists(crash_st, max_size=8))
def test_chain_never_loses_an_acknowledged_write_nor_reads_stale(seed, spec):
    """Under fail-stop faults, the paper's model. (A tail cut off by a partition does not know it
    was removed and goes on answering reads from its side: stale, as the next test shows.)"""
    events = merge(ops(seed, 3, 8.0), faults_of(spec, 3))
    m = run("chain", events, 10.0, seed=seed, nodes=3, failover_after=0.3).metrics()
    assert m["lost_acked_writes"] == 0
    assert m["stale_reads"] == 0


def test_a_tail_cut_off_by_a_partition_serves_stale_reads():
    faults = [
        {"t": 2.0, "kind": "fault", "fault": "partition", "groups": [[2]]},
        {"t": 6.0, "kind": "fault", "fault": "heal"},
    ]
    m = run("chain", merge(ops(7, 3, 8.0), faults), 10.0, nodes=3, failover_after=0.3).metrics()
    assert m["stale_reads"] > 0 and m["lost_acked_writes"] == 0


def test_a_drifting_clock_makes_last_writer_wins_read_stale_even_with_overlapping_quorums():
    """Node 2's clock runs at half speed: its writes carry old timestamps and lose to older
    writes under last-writer-wins, which the oracle sees as stale reads (Dynamo's caveat)."""
    drift = [{"t": 0.0, "kind": "fault", "fault": "drift", "node": 2, "rate": 0.5}]
    events = merge(ops(6, 3, 4.0, rate=300.0, keys=1), drift)
    m = run("quorum", events, 5.0, nodes=3, N=3, R=2, W=2).metrics()
    assert m["stale_reads"] > 0


def test_the_renderer_draws_every_preset_view_under_node(tmp_path):
    import json
    import shutil
    import subprocess
    from pathlib import Path

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    views = {}
    for name in PRESETS:
        p = presets.load(name)
        sc = Scenario(p)
        for t in (0.0, p.duration * 0.4, p.duration * 0.6, p.duration):  # partitions and crashes included
            sc.advance(t)
            views[f"{name}@{t}"] = sc.views()
    f = tmp_path / "views.json"
    f.write_text(json.dumps(views))
    script = Path(__file__).parent / "node" / "render_views.mjs"
    res = subprocess.run([node, str(script), "replication", "replication", str(f)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout.strip().splitlines()[-1])["calls"] > 1000


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", PRESETS)
def test_every_break_it_button_is_an_event_that_replays_exactly(name):
    """Each action, pressed mid-run, changes nothing before it, and a run that had it in its
    stream from the start ends in the same state."""
    p = presets.load(name)
    assert p.actions, name
    t = p.duration * 0.45
    for action in p.actions:
        ev = {"t": t, **action["event"]}
        live = Scenario(p, p.seed, checkpoint_every=2.0)
        live.advance(t + 1.0)
        live.insert(dict(ev))  # in the past: replays from the last checkpoint before it
        live.advance(p.duration * 0.7)
        planned = Scenario(p, p.seed)
        planned.insert(dict(ev))
        planned.advance(p.duration * 0.7)
        assert live.views() == planned.views(), action["label"]
        assert live.metrics() == planned.metrics(), action["label"]
        for panel in live.panels.values():
            panel.check_invariants()


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.floats(0.0, 0.99), max_size=30),
    st.lists(st.floats(0.0, 2.0), max_size=5),
    st.integers(0, 5),
    st.sampled_from([0.0, 0.5, 0.99, 1.0]),
)
def test_latency_percentiles_equal_the_plain_percentile_of_every_operation(done, ages, gone, q):
    from sims.core.metrics import percentile
    from sims.replication.books import Books

    b = Books(timeout=1.0)
    b.lat["write"] = sorted(done)
    b.failed["write"] = gone
    now = 10.0
    b.pending = {i: ("write", 0, now - a, False) for i, a in enumerate(ages)}
    seen = [min(now - (now - a), 1.0) for a in ages]  # the ages as the books see them
    everything = done + seen + [1.0] * gone
    p, censored = b.latency("write", q, now)
    assert p == percentile(everything, q)
    bounds = seen + [1.0] * gone  # lower bounds: flagged when one takes part in the figure
    v = sorted(everything)
    used = math.ceil(q * (len(v) - 1)) if v else 0  # the highest rank the figure reads
    assert censored == int(bool(bounds) and min(bounds) <= v[used])


@pytest.mark.parametrize("groups", [[0, 1], "01", [[0], 1]])
def test_a_partition_whose_groups_are_not_node_lists_is_refused_at_load(groups):
    p = presets.load("replication-partition")
    events = [dict(ev) for ev in p.events]
    k = next(i for i, ev in enumerate(events) if ev.get("kind") == "fault" and "groups" in ev)
    events[k]["groups"] = groups
    with pytest.raises(presets.PresetError, match=rf"events\[{k}\]\.groups: expected a list of node lists"):
        Scenario(dataclasses.replace(p, events=events), None, 5.0)


def test_failover_loses_async_writes_when_the_old_leader_rejoins_as_its_text_says():
    """replication-failover: the crashed leader's disk still holds the writes its followers never
    got, so they count as lost only once it comes back (t = 20 s) and truncates them; the page's
    text says when lost_acked_writes jumps, and it must be then."""
    p = presets.load("replication-failover")
    sc = Scenario(p, panels=["async"])
    sc.advance(19.9)
    assert sc.metrics()["async"]["lost_acked_writes"] == 0
    sc.advance(22.0)
    assert sc.metrics()["async"]["lost_acked_writes"] > 0
    jump = next(s for s in p.watch_for.split(". ") if "lost_acked_writes jumps" in s)
    assert "t = 20 s" in jump, jump
