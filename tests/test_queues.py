"""Queues: closed forms (M/M/1, Erlang C, Little's law), the disciplines' semantics, the fast
loop against the plain one, censored percentiles, the presets' stories and `contention trace`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from math import factorial, fsum, sqrt
from pathlib import Path

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import api, presets
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, policies, resolve_params
from sims.core.scenario import Scenario
from sims.queues import make_panel
from sims.queues.panel import Job
from sims.queues.trace import replay

ROOT = Path(__file__).resolve().parents[1]
POLICIES = sorted(policies("queues"))


def _preset(workload: dict, panels: list[dict], duration: float = 60.0, seed: int = 1, **top) -> presets.Preset:
    raw = {
        "name": "q",
        "topic": "queues",
        "title": "t",
        "watch_for": "w",
        "seed": seed,
        "duration": duration,
        "workload": {"kind": "queueing", **workload},
        "panels": panels,
        **top,
    }
    return presets.parse_preset(raw, "q.toml")


def _panel(policy: str, events: list | None = None, **params):
    cls = get_policy("queues", policy)
    specs = dict(load_topic("queues").panel_params) | dict(cls.PARAMS)
    return make_panel(
        policy, policy, resolve_params(specs, params, "panel"), PanelContext(1, 10.0, events or [], policy)
    )


# -- closed forms ----------------------------------------------------------------------------------
def _batch_means(preset: presets.Preset, seed: int, batches: int, warmup: float) -> list[float]:
    """Mean wait of the requests that started service in each of ``batches`` equal stretches of
    the run after ``warmup``: nearly independent when each stretch is many relaxation times."""
    sc = Scenario(preset, seed=seed)
    (panel,) = sc.panels.values()
    sc.advance(warmup)
    step = (preset.duration - warmup) / batches
    out = []
    for b in range(batches):
        s0, n0 = panel.wait_sum, len(panel.waits)
        sc.advance(warmup + (b + 1) * step)
        out.append((panel.wait_sum - s0) / (len(panel.waits) - n0))
    panel.check_invariants()
    return out


def _within(means: list[float], expected: float, rel_se: float) -> tuple[float, float]:
    k = len(means)
    mean = fsum(means) / k
    se = sqrt(fsum((m - mean) ** 2 for m in means) / (k - 1) / k)
    assert se < rel_se * expected, f"run too short to test anything: standard error {se} vs {expected}"
    assert abs(mean - expected) < 4 * se, f"mean wait {mean} vs closed form {expected} (standard error {se})"
    return mean, se


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mm1_mean_wait_matches_rho_over_mu_minus_lambda(seed):
    # lambda = 800/s, mu = 1000/s: W_q = rho / (mu - lambda) = 4 ms. The relaxation time of M/M/1
    # at rho = 0.8 is about 1 / (mu (1 - sqrt(rho))^2) = 0.09 s, so 20 batches of 7.5 s are each
    # some 80 relaxation times long and their means nearly independent.
    lam, mu = 800.0, 1000.0
    p = _preset({"rate": lam, "service": "exp", "service_mean": 1 / mu}, [{"policy": "fifo"}], duration=155.0)
    _within(_batch_means(p, seed, 20, 5.0), (lam / mu) / (mu - lam), 0.08)


def erlang_c(c: int, a: float) -> float:
    """Probability that an arrival waits in M/M/c with offered load a = lambda / mu."""
    rho = a / c
    top = a**c / factorial(c) / (1 - rho)
    return top / (fsum(a**k / factorial(k) for k in range(c)) + top)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mmc_mean_wait_matches_erlang_c(seed):
    c, lam, mu = 4, 3200.0, 1000.0  # rho = 0.8 over four servers
    expected = erlang_c(c, lam / mu) / (c * mu - lam)  # about 1.5 ms
    p = _preset(
        {"rate": lam, "service": "exp", "service_mean": 1 / mu}, [{"policy": "fifo", "servers": c}], duration=65.0
    )
    _within(_batch_means(p, seed, 20, 5.0), expected, 0.08)


def test_erlang_c_itself():
    assert erlang_c(1, 0.8) == pytest.approx(0.8)  # M/M/1: P(wait) = rho
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3)  # textbook value


def test_littles_law_is_measured_not_assumed():
    p = _preset({"rate": 900.0, "service_mean": 0.001}, [{"policy": "fifo"}, {"policy": "lifo"}], duration=120.0)
    sc = Scenario(p).run()
    for name, panel in sc.panels.items():
        m = sc.metrics()[name]
        lam = m["arrivals"] / sc.duration
        # L (time average of the number in the system) against lambda x W over completed requests
        assert m["mean_in_system"] == pytest.approx(lam * m["sojourn_mean_completed"], rel=0.03), name
        # and the integral itself: sum of every request's time in the system up to now
        waiting = [sc.duration - j.arrival for g in panel.groups for j in g.disc.waiting() + g.busy]
        area = fsum(panel.sojourns.v) + fsum(waiting)
        assert m["mean_in_system"] * sc.duration == pytest.approx(area, rel=1e-9), name


def _at_stop(name: str) -> dict:
    """The preset's metrics when its arrivals stop (its last seconds only drain the queues)."""
    p = presets.load(name)
    sc = Scenario(p)
    sc.advance(p.workload["stop_at"])
    return sc.metrics()


def test_utilization_is_offered_load_and_pooling_matches_its_closed_forms():
    m = _at_stop("queues-pooling")
    lam, mu = 1600.0, 500.0
    for name in m:
        assert m[name]["utilization"] == pytest.approx(lam / (4 * mu), abs=0.01)
    assert m["pooled"]["wait_mean"] == pytest.approx(erlang_c(4, lam / mu) / (4 * mu - lam), rel=0.2)
    assert m["split"]["wait_mean"] == pytest.approx((lam / 4 / mu) / (mu - lam / 4), rel=0.2)


# -- the disciplines ---------------------------------------------------------------------------------
def _drain(panel, events):
    panel.feed(events, 0, len(events), events[-1]["t"])
    while (nt := panel.next_time()) is not None:
        panel.advance(nt)
    panel.check_invariants()


def _events(*rows):
    return [{"t": t, "kind": "request", "id": i, "size": s, "cls": c} for i, (t, s, c) in enumerate(rows)]


def test_order_of_service_per_discipline():
    # one long job holds the server while three wait: which of them goes next?
    rows = [(0.0, 1.0, 0), (0.1, 0.3, 1), (0.2, 0.2, 0), (0.3, 0.1, 1)]
    starts = {}
    for policy in ("fifo", "lifo", "priority", "srpt"):
        res = replay(policy, 1, _events(*rows))
        starts[policy] = sorted(range(4), key=lambda i: rows[i][0] + res["waits"][i])
    assert starts["fifo"] == [0, 1, 2, 3]
    assert starts["lifo"] == [0, 3, 2, 1]
    assert starts["priority"] == [0, 2, 1, 3]
    # SRPT: job 1 (0.3 s) preempts job 0 (0.9 s left) at 0.1; jobs 2 and 3 do not beat job 1's
    # remaining 0.2 and 0.1 s (a tie keeps the server), so they go next, shortest first
    assert starts["srpt"] == [0, 1, 3, 2]


def test_srpt_preempts_and_resumes_with_what_is_left():
    panel = _panel("srpt")
    _drain(panel, _events((0.0, 10.0, 0), (1.0, 1.0, 0)))
    assert panel.preemptions == 1
    assert sorted(panel.sojourns.values()) == [1.0, 11.0]  # the short one done at 2, the long one at 11
    assert panel.busy_s == pytest.approx(11.0)


def test_priority_aging_lets_an_old_low_request_overtake_new_high_ones():
    rows = [(0.0, 1.0, 0), (0.1, 0.1, 1)] + [(0.2 + 0.1 * k, 0.1, 0) for k in range(8)]
    strict = replay("priority", 1, _events(*rows))
    assert strict["waits"][1] == pytest.approx(1.7)  # after every high request
    panel = _panel("priority", aging=0.5)
    _drain(panel, _events(*rows))
    # at t = 1.0 the low one (key 1 + 0.1/0.5 = 1.2) beats every high arriving after 0.6
    assert panel.low_waits.values() == [pytest.approx(0.9 + 0.1 * 4)]


def test_drop_tail_drops_arrivals_that_find_the_buffer_full():
    res = replay("drop_tail", 1, _events(*[(0.0, 1.0, 0)] * 60))
    assert res["dropped"] == list(range(51, 60))  # one in service, 50 waiting


def test_adaptive_lifo_switches_once_the_head_is_old():
    disc = get_policy("queues", "adaptive_lifo")(lifo_after=0.05)
    jobs = [Job(i, i, 0, 0.01 * i, 1.0, 0) for i in range(3)]
    for j in jobs:
        disc.push(j, j.arrival)
    assert disc.pop(0.04) is jobs[0]  # the head waited 40 ms: FIFO
    assert disc.pop(0.08) is jobs[2]  # the head waited 70 ms: LIFO
    assert disc.state() == {"mode": "lifo"}


def _codel(**params):
    return get_policy("queues", "codel")(**params)


def test_codel_server_mode_drops_only_old_requests_while_overloaded():
    disc = _codel()
    jobs = [Job(i, i, 0, a, 1.0, 0) for i, a in enumerate([0.0, 0.0, 0.0, 0.0, 0.135, 0.136])]
    for j in jobs:
        disc.push(j, j.arrival)
    # delays above target from the start, but the first interval (to 0.12) only measures
    assert disc.pop(0.02) is jobs[0] and not disc.shed
    assert disc.pop(0.05) is jobs[1] and not disc.overloaded
    # the first dequeue after the interval: its minimum delay was 20 ms > 5 ms, so overloaded;
    # the new interval's first request is kept all the same
    assert disc.pop(0.13) is jobs[2] and disc.overloaded and not disc.shed
    # job 3 waited 140 ms > 2 x target: dropped; job 4 waited 5 ms: served
    assert disc.pop(0.14) is jobs[4] and disc.shed == [jobs[3]]


def test_codel_server_mode_calms_down_when_delays_fall():
    disc = _codel()
    disc.overloaded, disc.interval_end, disc.fresh, disc.min_delay = True, 1.0, False, 0.2
    disc.push(Job(0, 0, 0, 0.999, 1.0, 0), 0.999)
    assert disc.pop(1.0) is not None  # 1 ms of delay: not above 2 x target
    disc.push(Job(1, 1, 0, 1.0, 1.0, 0), 1.0)
    disc.pop(1.2)  # a new interval: its minimum was 1 ms
    assert not disc.overloaded


def test_codel_rfc_mode_first_drop_after_an_interval_above_target_then_faster():
    disc = _codel(mode="rfc")
    jobs = [Job(i, i, 0, 0.0, 1.0, 0) for i in range(100)]
    for j in jobs:
        disc.push(j, 0.0)
    assert disc.pop(0.01) is jobs[0] and disc.first_above == pytest.approx(0.11)
    assert disc.pop(0.10) is jobs[1] and not disc.shed  # above target, but not for an interval yet
    assert disc.pop(0.11) is jobs[3] and disc.shed == [jobs[2]] and disc.dropping
    assert disc.drop_next == pytest.approx(0.21)  # interval / sqrt(1)
    disc.shed.clear()
    assert disc.pop(0.22) is jobs[5] and disc.shed == [jobs[4]]
    assert disc.count == 2 and disc.drop_next == pytest.approx(0.21 + 0.1 / sqrt(2))  # sooner each time


def test_unknown_names_and_bad_params_raise_value_errors():
    with pytest.raises(ValueError, match="valid: .*fifo"):
        get_policy("queues", "random_early")
    for bad in ({"servers": 3, "queues": 2}, {"split": "hash"}, {"timeout": -1.0}, {"speed": 0.0}):
        with pytest.raises(ValueError):
            _panel("fifo", **bad)
    with pytest.raises(ValueError, match="mode"):
        _codel(mode="fast")
    for bad, field in (
        ({"arrival": "weekly"}, "arrival"),
        ({"service": "weibull"}, "service"),
        ({"classes": []}, "classes"),
    ):
        with pytest.raises(ValueError, match=f"workload.{field}"):
            Scenario(_preset(bad, [{"policy": "fifo"}]))


# -- the fast loop is the plain loop -----------------------------------------------------------------
CONFIGS = [
    {},
    {"servers": 3},
    {"timeout": 0.05},
    {"timeout": 0.05, "retries": 2},
    {"timeout": 0.05, "retries": 3, "backoff": 0.02},
    {"timeout": 0.05, "retries": 3, "backoff": 0.02, "retry_budget": 0.2},
    {"servers": 4, "queues": 4},
    {"servers": 4, "queues": 2, "split": "shortest", "timeout": 0.05, "retries": 1},
    {"servers": 3, "queues": 3, "split": "round_robin", "timeout": 0.05, "retries": 2, "backoff": 0.02},
]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("config", range(len(CONFIGS)))
def test_fast_loop_matches_the_plain_loop_exactly(policy, config):
    wl = {"rate": 700.0, "surge_at": 3.0, "surge_for": 1.0, "surge_rate": 2500.0, "classes": [0.7, 0.3]}
    p = _preset(wl, [{"policy": policy, **CONFIGS[config]}], duration=8.0)
    fast = Scenario(p)
    plain = Scenario(p, events=fast.events)
    (panel,) = plain.panels.values()
    panel.feed = panel.feed_plain
    for t in (1.0, 3.5, 4.25, 8.0):  # several calls, so state carries across feeds
        fast.advance(t)
        plain.advance(t)
        assert fast.metrics() == plain.metrics()
        assert fast.views() == plain.views()
    fast.check_invariants()


# -- invariants under random traffic -----------------------------------------------------------------
_rows = st.lists(
    st.tuples(st.integers(0, 50), st.sampled_from([0.0, 0.5, 1.0, 2.5, 7.0]), st.integers(0, 2)),
    min_size=1,
    max_size=40,
)


@settings(max_examples=examples(60), deadline=None)
@given(
    policy=st.sampled_from(POLICIES),
    rows=_rows,
    servers=st.integers(1, 3),
    timeout=st.sampled_from([0.0, 1.0, 4.0]),
    retries=st.integers(0, 2),
    backoff=st.sampled_from([0.0, 0.5]),
)
def test_invariants_hold_after_every_event(policy, rows, servers, timeout, retries, backoff):
    times = sorted(r[0] * 0.25 for r in rows)
    events = _events(*[(t, s, c) for t, (_, s, c) in zip(times, rows, strict=True)])
    panel = _panel(policy, events, servers=servers, timeout=timeout, retries=retries, backoff=backoff)
    for ev in events:
        panel.advance(ev["t"])
        panel.on_event(ev)
        panel.check_invariants()
    while (nt := panel.next_time()) is not None:
        panel.advance(nt)
        panel.check_invariants()
    m = panel.metrics()
    assert m["in_system"] == 0 and m["served"] + m["dropped"] == m["arrivals"]
    assert m["served"] == len(panel.sojourns) - m["dropped"]
    assert 0.0 <= m["utilization"] <= 1.0 + 1e-12 and 0.0 <= m["goodput"] <= 1.0


# -- every arrival counts ------------------------------------------------------------------------------
def test_percentiles_count_requests_still_waiting_and_say_so():
    panel = _panel("fifo")
    events = _events((0.0, 100.0, 0), *[(0.1 * k, 0.01, 0) for k in range(1, 11)])
    panel.feed(events, 0, len(events), 10.0)
    m = panel.metrics()
    # only the first request got a server (wait 0); ten have waited 9.0 .. 9.9 s so far
    assert m["served"] == 0 and m["wait_p99"] > 9.8 and m["wait_p99_censored"] == 1
    assert m["wait_p50"] == pytest.approx(9.4) and m["wait_p50_censored"] == 1
    assert m["sojourn_p99"] > 9.9 and m["sojourn_p99_censored"] == 1
    assert m["mean_in_system"] == pytest.approx(fsum(10.0 - e["t"] for e in events) / 10.0)
    done = _panel("fifo")
    _drain(done, _events((0.0, 0.1, 0), (0.05, 0.1, 0)))
    assert done.metrics()["wait_p99_censored"] == 0


# -- the presets' stories (the claims themselves are checked over five seeds by test_claims) ------------
def test_bufferbloat_fifo_wastes_its_time_on_abandoned_requests():
    sc = Scenario("queues-bufferbloat")
    sc.advance(14.0)  # two seconds after the burst: FIFO answers no one in time, the others do
    now = sc.metrics()
    assert now["fifo"]["goodput_1s"] == 0.0
    for name in ("codel", "adaptive_lifo", "drop_tail"):
        assert now[name]["goodput_1s"] > 600.0, name
    m = sc.run().metrics()
    assert m["fifo"]["wasted"] > 5000 and m["fifo"]["dropped"] == 0
    for name in ("codel", "adaptive_lifo", "drop_tail"):
        assert m[name]["goodput"] > m["fifo"]["goodput"] + 0.2, name
    assert m["codel"]["wait_p99"] < 0.1 and m["codel"]["wasted"] == 0
    assert m["codel_rfc"]["goodput"] < m["codel"]["goodput"] - 0.1  # packet CoDel sheds too slowly here


def test_retry_storm_outlives_the_overload_and_a_budget_ends_it():
    sc = Scenario("queues-retry-storm")
    sc.advance(20.0)  # the overload ended at 13 s
    before = sc.metrics()
    sc.run()
    m = sc.metrics()
    good_after = {n: m[n]["goodput_rps"] * 60.0 - before[n]["goodput_rps"] * 20.0 for n in m}
    assert good_after["retry_now"] < 0.1 * good_after["no_retries"]
    assert good_after["retry_backoff"] < 0.1 * good_after["no_retries"]  # backoff only delays them
    assert good_after["retry_budget"] > 0.5 * good_after["no_retries"]  # recovers, if more slowly
    assert m["retry_budget"]["queue_len"] < 20 and m["retry_now"]["queue_len"] > 5000
    budget = m["retry_budget"]
    assert budget["retries"] <= 0.1 * budget["requests"] + 10  # what the budget allows
    # in the last second: nothing answered in time by the collapsed panels, all of it by the others
    assert m["retry_now"]["goodput_1s"] == m["retry_backoff"]["goodput_1s"] == 0.0
    assert m["no_retries"]["goodput_1s"] > 60.0 and m["retry_budget"]["goodput_1s"] > 60.0


def test_strict_priority_serves_the_high_class_first_and_starves_the_low():
    m = api.run("queues-priority-starvation")["panels"]
    assert m["priority"]["high_wait_p99"] < 0.5 * m["fifo"]["high_wait_p99"]
    assert m["priority"]["low_wait_p99"] > 2 * m["fifo"]["low_wait_p99"]
    assert m["priority_aging"]["high_wait_p99"] < m["fifo"]["high_wait_p99"]


def test_hockey_stick_wait_grows_as_one_over_one_minus_rho():
    # the numbers docs/queues.md puts beside the closed form; at the preset's seed only, so the
    # tolerance is loose (the batch-means tests above are the fidelity tests)
    m = _at_stop("queues-hockey-stick")
    lam = 475.0
    for name, rho in (("rho_50", 0.5), ("rho_70", 0.7), ("rho_80", 0.8), ("rho_90", 0.9)):
        mu = lam / rho  # speed 0.95 / rho serves 500 x speed per second
        assert m[name]["utilization"] == pytest.approx(rho, abs=0.02)
        assert m[name]["wait_mean"] == pytest.approx(rho / (mu - lam), rel=0.25), name


def test_hockey_stick_text_quotes_the_wait_in_queue_and_this_seeds_measurement():
    """watch_for's closed-form figures are W_q = rho / (mu - lambda), not the time in system, and
    the waits it says this seed measures are the run's own."""
    p = presets.load("queues-hockey-stick")
    formula = re.search(r"([\d.]+) ms at 0.5, ([\d.]+) ms at 0.8, ([\d.]+) ms at 0.95", p.watch_for)
    measured = re.search(r"measures ([\d.]+), ([\d.]+) and ([\d.]+) ms", p.watch_for)
    assert formula and measured, p.watch_for
    m = api.run("queues-hockey-stick")["panels"]
    for k, (name, rho) in enumerate((("rho_50", 0.5), ("rho_80", 0.8), ("rho_95", 0.95))):
        wq = rho / (475.0 / rho - 475.0)
        assert float(formula.group(k + 1)) == pytest.approx(wq * 1000, rel=0.01), name
        assert float(measured.group(k + 1)) == pytest.approx(m[name]["wait_mean"] * 1000, abs=0.05), name


# -- contention trace queues ---------------------------------------------------------------------------
def _fifo_reference(rows, c):
    """DESIGN.md: FIFO with C servers starts a request at max(its arrival, the earliest free server)."""
    free = [0.0] * c
    waits = []
    for t, s in rows:
        k = free.index(min(free))
        start = max(t, free[k])
        waits.append(start - t)
        free[k] = start + s
    return waits


@settings(max_examples=examples(40), deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 12)), min_size=1, max_size=50),
    c=st.integers(1, 4),
)
def test_trace_fifo_matches_the_reference(rows, c):
    rows = [(t * 0.25, s * 0.125) for t, s in sorted(rows)]  # binary fractions: exact arithmetic
    res = replay("fifo", c, [{"t": t, "kind": "request", "id": i, "size": s} for i, (t, s) in enumerate(rows)])
    assert res["waits"] == _fifo_reference(rows, c)


def cli(*args):
    return subprocess.run([sys.executable, "-m", "sims", *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_trace_cli_output_shape(tmp_path):
    f = tmp_path / "q.txt"
    f.write_text("# arrival service class\n0 1.0\n0.5 1.0 1\n0.5 0.25 0\n\n3 0.5\n")
    out = cli("trace", "queues", "--policy", "fifo", "--servers", "1", "--trace", str(f), "--json")
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    assert list(obj) == ["policy", "servers", "waits", "sojourn_p50", "sojourn_p99", "dropped"]
    assert obj["waits"] == [0.0, 0.5, 1.5, 0.0] and obj["dropped"] == []
    assert obj["servers"] == 1 and obj["sojourn_p50"] == pytest.approx(1.25)  # of 0.5, 1.0, 1.5, 1.75
    out = cli("trace", "queues", "--policy", "priority", "--servers", "1", "--trace", str(f), "--json")
    assert json.loads(out.stdout)["waits"] == [0.0, 0.75, 0.5, 0.0]


@pytest.mark.parametrize(
    "text, line",
    [
        ("0 1\nsoon 1\n", 2),
        ("0 1\n1 -2\n", 2),
        ("1 1\n0.5 1\n", 2),
        ("0 1 high\n", 1),
        ("0 1 0 9\n", 1),
        ("0 inf\n", 1),
    ],
)
def test_trace_cli_bad_lines_name_file_and_line(tmp_path, text, line):
    f = tmp_path / "bad.txt"
    f.write_text(text)
    out = cli("trace", "queues", "--policy", "fifo", "--servers", "2", "--trace", str(f))
    assert out.returncode == 2 and f"{f}:{line}:" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_trace_cli_bad_flags_exit_2(tmp_path):
    f = tmp_path / "q.txt"
    f.write_text("0 1\n")
    for args in (["--policy", "nope", "--servers", "1"], ["--policy", "fifo", "--servers", "0"]):
        out = cli("trace", "queues", *args, "--trace", str(f))
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", ["queues-bufferbloat", "queues-pooling", "queues-priority-starvation"])
def test_seeking_back_through_checkpoints_replays_the_same_run(name):
    p = presets.load(name)
    sc = Scenario(p, duration=16.0, checkpoint_every=2.0)
    sc.advance(16.0)
    end = sc.metrics()
    sc.seek(11.3)  # restores the checkpoint at 10 s and replays: the copies share nothing live
    fresh = Scenario(p, duration=16.0)
    fresh.advance(11.3)
    assert sc.metrics() == fresh.metrics() and sc.views() == fresh.views()
    sc.advance(16.0)
    assert sc.metrics() == end
    sc.check_invariants()


# -- the workload ---------------------------------------------------------------------------------------
def _stream(**wl):
    return Scenario(_preset(wl, [{"policy": "fifo"}], duration=60.0)).events


def test_surge_diurnal_and_bursty_arrivals_have_their_rates():
    ev = _stream(rate=100.0, surge_at=20.0, surge_for=10.0, surge_rate=1000.0)
    inside = sum(1 for e in ev if 20.0 <= e["t"] < 30.0)
    assert inside == pytest.approx(10_000, rel=0.05) and len(ev) - inside == pytest.approx(5000, rel=0.06)
    ev = _stream(arrival="diurnal", rate=50.0, peak_rate=1000.0, period=60.0)
    night = sum(1 for e in ev if e["t"] < 5.0 or e["t"] >= 55.0)
    noon = sum(1 for e in ev if 25.0 <= e["t"] < 35.0)
    assert noon > 10 * night  # rate 50/s at t = 0 and 60, 1000/s at t = 30
    ev = _stream(arrival="bursty", rate_on=2000.0, rate_off=10.0, mean_on=1.0, mean_off=4.0)
    per_s = [0] * 60
    for e in ev:
        per_s[int(e["t"])] += 1
    assert max(per_s) > 1000 and min(per_s) < 50
    assert [e["t"] for e in _stream(stop_at=30.0)][-1] <= 30.0


def test_service_distributions_keep_their_mean_and_classes_their_weights():
    for service in ("exp", "fixed", "pareto", "lognormal"):
        ev = _stream(rate=500.0, service=service, service_mean=0.002, classes=[3.0, 1.0])
        sizes = [e["size"] for e in ev]
        assert fsum(sizes) / len(sizes) == pytest.approx(0.002, rel=0.15 if service == "pareto" else 0.03), service
        assert sum(e["cls"] for e in ev) / len(ev) == pytest.approx(0.25, abs=0.02)
    assert max(e["size"] for e in _stream(service="pareto", alpha=1.5)) > 100 * 0.001  # a heavy tail


def test_srpt_beats_fifo_on_mean_response_time_with_heavy_tails():
    p = _preset(
        {"rate": 700.0, "service": "pareto", "alpha": 1.5, "service_mean": 0.001, "stop_at": 50.0},
        [{"policy": "fifo"}, {"policy": "srpt"}],
        duration=60.0,
    )
    m = Scenario(p).run().metrics()
    assert m["srpt"]["sojourn_mean_completed"] < 0.5 * m["fifo"]["sojourn_mean_completed"]
    assert m["srpt"]["preemptions"] > 0 and m["srpt"]["served"] == m["fifo"]["served"] == m["fifo"]["arrivals"]
