"""Leader leases for reads (sims/replication/lease.py): the guarded lease (measured from when the
heartbeat left, checked on the clock at the answer) against the unguarded one (a flag a timer
clears, armed when the ack is handled), the replication-lease-pause preset, and the schedule
search that finds the unguarded lease's stale reads and shrinks them (docs/search.md)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from sims.adversary import Problem, Search
from sims.adversary.shrink import shrink
from sims.adversary.topics import spec_of
from sims.core import presets
from sims.core.scenario import Scenario
from sims.net import Delay, Network, Node
from sims.replication import trials

PRESET = "replication-lease-pause"


def _stale(preset, seed: int, at: float) -> dict[str, float]:
    sc = Scenario(preset, seed)
    sc.advance(at)
    return {name: m["stale_reads"] for name, m in sc.metrics().items()}


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_the_unguarded_lease_answers_stale_reads_after_the_pause_and_the_guarded_none(seed):
    """The preset's claim on each of seeds 1-5: the leader that woke cut off answers reads the
    oracle rejects under the unguarded lease (10-22 by 16 s), none under the guarded one."""
    stale = _stale(presets.load(PRESET), seed, 16.0)
    assert stale["lease_read"] == 0
    assert stale["lease_read_unguarded"] >= 5, stale


def test_without_a_pause_a_cut_off_leader_answers_no_stale_read_under_either_lease():
    """The unguarded lease fails only through the pause: cut off without one, its timer clears
    the flag before the monitor promotes anyone (so the pause, not the cut, is the cause)."""
    p = presets.load(PRESET)
    events = [ev for ev in p.events if ev["fault"] not in ("pause", "resume")]
    stale = _stale(dataclasses.replace(p, events=tuple(events)), 1, 16.0)
    assert stale == {"lease_read": 0, "lease_read_unguarded": 0}


def test_a_paused_node_takes_a_client_request_at_its_resume_in_order_with_its_messages():
    class Log(Node):
        def __init__(self, i: int, n: int) -> None:
            super().__init__(i, n)
            self.seen: list[tuple] = []

        def on_message(self, src, msg, now):
            self.seen.append(("msg", msg, now))

        def on_request(self, req, now):
            self.seen.append(("req", req, now))

    net = Network([Log(0, 2), Log(1, 2)], random.Random(1), Delay("fixed", mean=0.01))
    net.start(0.0)
    net.apply({"fault": "pause", "node": 1}, 0.0)
    net.nodes[0].send(1, "a")  # arrives at 0.01
    net.advance(0.02)
    net.request(1, "r", 0.02)
    net.advance(0.5)
    assert net.nodes[1].seen == []
    net.apply({"fault": "resume", "node": 1}, 0.5)
    net.advance(0.5)
    assert net.nodes[1].seen == [("msg", "a", 0.5), ("req", "r", 0.5)]
    net.request(1, "s", 0.6)  # not paused: at once
    assert net.nodes[1].seen[-1] == ("req", "s", 0.6)
    net.apply({"fault": "pause", "node": 1}, 0.7)
    net.request(1, "lost", 0.7)
    net.apply({"fault": "crash", "node": 1}, 0.8)  # a crash drops the waiting request, uncounted
    assert net.dropped == 0 and not net.nodes[1].paused


# -- the schedule search ------------------------------------------------------------------------
PAUSE_CUT_RESUME = [(8, 0), (3, 2), (11, 2)]  # pause node 0, 50 ms, cut node 0 off, 1.5 s, resume


def test_pause_steps_join_the_replication_search_only_for_a_lease_policy():
    """The other replication searches keep their eight steps (and their evaluation counts)."""
    spec = spec_of("replication")
    assert len(trials.steps(3)) == 8 and trials.steps(3, pauses=True)[8:] == [
        ("pause", 0),
        ("pause", 1),
        ("pause", 2),
        ("resume",),
    ]
    assert Problem("replication", "lost_acked_writes(async)", 3, 40).universe == 8 * len(trials.GAPS)
    assert Problem("replication", "stale_reads(lease_read)", 3, 40).universe == 12 * len(trials.GAPS)
    assert spec.violations_of("async") == "lost_acked_writes"
    assert spec.violations_of("lease_read_unguarded") == "stale_reads"


def _genome(genes: list[tuple[int, int]]) -> list[int]:
    return [step * len(trials.GAPS) + gap for step, gap in genes]


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_pause_cut_off_resume_breaks_only_the_unguarded_lease(seed):
    """The three steps the search shrinks to on seeds 3 and 5: the unguarded leader answers stale
    reads on each seed's clients, the guarded one none."""
    genome = _genome(PAUSE_CUT_RESUME)
    bad = Problem("replication", "stale_reads(lease_read_unguarded)", 3, 40, seed=seed)
    faults = bad.layout.schedule(genome)
    assert [(ev["t"], ev["fault"]) for ev in faults] == [(1.0, "pause"), (1.05, "partition"), (2.55, "resume")]
    assert bad.score(genome) > 0
    good = Problem("replication", "stale_reads(lease_read)", 3, 40, seed=seed)
    assert good.score(genome) == 0


def test_the_monitor_waits_for_a_lease_renewed_between_two_of_its_looks():
    """A counterexample the search found against an earlier guarded lease on seed 1 (eval 1800):
    node 0 wakes at 8.65 s, renews its lease with node 2 and is cut off at 8.7 s, before the
    monitor's next look saw it back; the monitor promoted node 2 at once. Now node 2's promise
    (it acknowledged a heartbeat at 8.7 s) holds the promotion until the lease has run out."""
    genes = [(1, 2), (5, 2), (1, 2), (8, 0), (6, 0), (4, 2), (4, 0), (4, 2), (11, 0), (3, 0)]
    good = Problem("replication", "stale_reads(lease_read)", 3, 40, seed=1)
    faults = good.layout.schedule(_genome(genes))
    assert [ev["t"] for ev in faults][-2:] == [8.65, 8.7]
    assert good.score(_genome(genes)) == 0


@pytest.mark.every_seed("seed")
# 3 first: the quick run's one (found at evaluation 126). Seeds 1 and 2 find it too, at evaluations
# 1,106 and 1,391 (docs/search.md), but take 2.5-5 min each here: the CLI checked them, not `make test`
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_the_search_finds_the_unguarded_leases_stale_read_and_shrinks_it(seed):
    problem = Problem("replication", "stale_reads(lease_read_unguarded)", 3, 40, seed=seed)
    search = Search(problem, seed, 2000).run(until_found=True)
    assert search.found, search.state()
    kept: list[tuple[list[int], float]] = []
    out = shrink(problem, search.best, 2000, on_step=lambda g, score: kept.append((list(g), score)))
    assert out.minimal and len(out.genome) <= 8, out
    fresh = Problem("replication", "stale_reads(lease_read_unguarded)", 3, 40, seed=seed)
    for genome, score in kept:  # every kept step still breaks it
        assert fresh.score(genome) == score > 0
    steps = [trials.steps(3, pauses=True)[g // len(trials.GAPS)][0] for g in out.genome]
    assert "pause" in steps and "resume" in steps, steps
    again = shrink(fresh, out.genome, 2000)
    assert again.genome == out.genome and again.steps == [] and again.minimal


@pytest.mark.slow  # about 350 evaluations of the page's own panels (20-60 ms delays): minutes here
def test_the_lease_page_finds_a_schedule_that_breaks_the_unguarded_lease_and_plays_it():
    """The page's "Find a schedule that breaks this" ([site.search]): found at evaluation 353 on
    the preset's seed; the page plays the schedule with the unguarded panel stale and the guarded not."""
    import json

    from web.pyodide import bridge

    def call(op: str, **args):
        reply = json.loads(bridge.call(op, json.dumps(args)))
        assert reply["ok"], reply
        return reply["result"]

    info = call("search_info", preset=PRESET)
    assert info["objective"] == "stale_reads(lease_read_unguarded)" and info["size"] == 3
    state = call("search_start", id="t", preset=PRESET)
    while not state["done"]:
        state = call("search_run", id="t", n=300)
    result = call("search_result", id="t")
    call("search_drop", id="t")
    assert result["best_score"] > 0 and result["overrides"]["events"] == result["schedule"]
    session = bridge.Session(PRESET, None, None, result["overrides"])
    session.sc.run()
    played = session.sc.metrics()
    assert played["lease_read_unguarded"]["stale_reads"] == result["best_score"]
    assert played["lease_read"]["stale_reads"] == 0
