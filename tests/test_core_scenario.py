"""The virtual clock, exact percentiles, streams, presets and scenarios."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sims.core import metrics, presets, rng, stream
from sims.core.clock import Clock
from sims.core.presets import PresetError, load_file
from sims.core.scenario import Scenario


def test_clock_orders_by_time_then_insertion():
    c = Clock()
    seen = []
    for t, name in [(2.0, "b"), (1.0, "a"), (2.0, "c"), (1.0, "a2"), (3.0, "d")]:
        c.schedule(t, name)
    c.advance(2.0, lambda t, item: seen.append((t, item)))
    assert seen == [(1.0, "a"), (1.0, "a2"), (2.0, "b"), (2.0, "c")]
    assert c.now == 2.0 and c.peek() == 3.0


def test_clock_items_scheduled_during_advance_run_in_order():
    c = Clock()
    seen = []

    def first(t):
        seen.append(("first", t))
        c.schedule(t, lambda t2: seen.append(("same-time", t2)))
        c.schedule(t + 0.5, lambda t2: seen.append(("later", t2)))

    c.schedule(1.0, first)
    c.schedule(1.0, lambda t: seen.append(("tie", t)))
    assert c.advance(10.0) == 4
    assert seen == [("first", 1.0), ("tie", 1.0), ("same-time", 1.0), ("later", 1.5)]
    assert c.now == 10.0


def test_clock_rejects_the_past():
    c = Clock(5.0)
    with pytest.raises(ValueError, match="before now"):
        c.schedule(4.0, "x")


@given(
    st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=200),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_percentile_is_exact_linear_interpolation(values, q):
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    assert metrics.percentile(values, q) == v[lo] + (v[hi] - v[lo]) * (pos - lo)


def test_percentile_known_values():
    assert metrics.percentile([1, 2, 3, 4], 0.5) == 2.5
    assert metrics.percentile([5.0], 0.99) == 5.0
    assert metrics.percentile([], 0.9) == 0.0
    assert metrics.percentile(list(range(101)), 0.9) == 90.0


def test_censored_percentile_flags_a_figure_a_lower_bound_reaches():
    # 1, 2, 3 finished; a request still waiting is 10 s old
    assert metrics.censored_percentile([1.0, 2.0, 3.0], [10.0], 0.5) == (2.5, 0)  # ranks 1, 2: exact
    assert metrics.censored_percentile([1.0, 2.0, 3.0], [10.0], 0.99) == (3.0 + 7.0 * 0.97, 1)  # reads the 10
    assert metrics.censored_percentile([1.0, 2.0, 3.0], [10.0], 2 / 3) == (3.0, 0)  # exactly rank 2
    assert metrics.censored_percentile([1.0, 5.0], [2.0], 0.5) == (2.0, 1)  # the median is the age
    assert metrics.censored_percentile([2.0, 5.0], [2.0], 0.0) == (2.0, 1)  # a tie with an age counts
    assert metrics.censored_percentile([4.0], [], 0.99) == (4.0, 0)
    assert metrics.censored_percentile([], [], 0.5) == (0.0, 0)
    assert metrics.censored_percentile([], [3.0], 0.5) == (3.0, 1)


@given(
    st.lists(st.floats(0.0, 100.0), min_size=1, max_size=40, unique=True),
    st.lists(st.booleans(), min_size=40, max_size=40),
    st.sampled_from([0.0, 0.5, 0.9, 0.99, 1.0]),
)
def test_censored_percentile_is_the_plain_percentile_and_flags_what_an_age_could_raise(values, marks, q):
    exact = sorted(x for x, m in zip(values, marks, strict=False) if not m)
    cens = sorted(x for x, m in zip(values, marks, strict=False) if m)
    value, flag = metrics.censored_percentile(exact, cens, q)
    assert value == metrics.percentile(values, q)
    raised = metrics.percentile(exact + [x + 1000.0 for x in cens], q)  # each lower bound grows
    assert flag == int(raised != value)


def test_sliding_max_counts_half_open_windows():
    w = metrics.SlidingMax(1.0)
    for t in [0.0, 0.5, 0.99, 1.0, 1.5]:
        w.add(t)
    assert w.best == 3  # (0.0, 1.0] holds 0.5, 0.99, 1.0


def test_derived_rngs_are_independent_and_stable():
    a = rng.derive(7, "stream").random()
    assert a == rng.derive(7, "stream").random()
    assert a != rng.derive(7, "panel:lru:noise").random()
    assert rng.stable_hash64("abc") == 0xE71FA2190541574B


def test_stream_hash_is_canonical():
    evs = [{"t": 1.0, "kind": "request", "id": 0}, {"kind": "ref", "t": 2.5, "key": 3}]
    lines = [stream.canonical_line(e) for e in evs]
    assert lines[0] == '{"id":0,"kind":"request","t":1.0}'
    import hashlib

    assert stream.sha256(evs) == hashlib.sha256("\n".join(lines).encode()).hexdigest()


def test_trace_round_trip(tmp_path):
    sc = Scenario("ratelimit-burst", duration=5.0)
    path = tmp_path / "s.jsonl"
    stream.write(sc.events[: sc._end], path)
    back = stream.read(path)
    assert stream.sha256(back) == sc.stream_sha256()
    replay = Scenario("ratelimit-burst", duration=5.0, events=back).run()
    assert replay.metrics() == Scenario("ratelimit-burst", duration=5.0).run().metrics()


def test_trace_read_errors_name_the_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"t": 1.0, "kind": "x"}\n{"t": 0.5, "kind": "x"}\n')
    with pytest.raises(stream.TraceError, match=r"bad.jsonl:2: time 0.5 goes backwards"):
        stream.read(p)
    p.write_text("not json\n")
    with pytest.raises(stream.TraceError, match=r"bad.jsonl:1: not a JSON object"):
        stream.read(p)


def test_shorter_run_is_a_prefix_of_a_longer_one():
    full = Scenario("ratelimit-burst")
    full.advance(12.5)
    short = Scenario("ratelimit-burst", duration=12.5).run()
    assert full.metrics() == short.metrics()
    assert [json.dumps(e) for e in short.events[: short._end]] == [json.dumps(e) for e in full.events[: short._end]]


def test_seek_backwards_then_forwards_is_identical():
    sc = Scenario("ratelimit-burst", checkpoint_every=5.0, sample_dt=1.0)
    sc.advance(23.0)
    at23 = sc.metrics()
    sc.seek(7.25)
    assert sc.t == 7.25
    assert sc.metrics() == Scenario("ratelimit-burst", duration=7.25).run().metrics()
    sc.advance(23.0)
    assert sc.metrics() == at23
    assert [s["t"] for s in sc.series] == sorted({s["t"] for s in sc.series})


def test_step_moves_to_the_next_event():
    sc = Scenario("ratelimit-burst")
    t1 = sc.step()
    assert t1 == sc.events[0]["t"] and sc.events_done == 1


def _write(tmp_path, name, text):
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return p


GOOD = """
name = "{name}"
topic = "ratelimit"
title = "t"
watch_for = "w"
seed = 1
duration = 10.0
[workload]
kind = "poisson"
rate = 5.0
[[panels]]
policy = "token_bucket"
"""


def test_valid_preset_loads_with_defaults(tmp_path):
    p = load_file(_write(tmp_path, "ok", GOOD.format(name="ok")))
    assert p.panels[0].params == {"rate": 10.0, "burst": 10.0, "measure_window": 1.0}


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda s: s.replace('name = "bad"', 'name = "other"'), "must equal the file name"),
        (lambda s: s.replace('topic = "ratelimit"', 'topic = "nope"'), "field 'topic': expected one of"),
        (lambda s: s.replace("seed = 1", 'seed = "x"'), "field 'seed': expected int"),
        (lambda s: s.replace("duration = 10.0", "duration = -1.0"), "field 'duration': expected a positive"),
        (lambda s: s.replace('kind = "poisson"', 'kind = "nope"'), "unknown workload kind 'nope'"),
        (lambda s: s.replace("rate = 5.0", 'rate = "fast"'), r"workload.rate: expected float"),
        (lambda s: s.replace("rate = 5.0", "speed = 5.0"), r"workload.speed: unknown parameter"),
        (lambda s: s.replace('policy = "token_bucket"', 'policy = "lru"'), "unknown ratelimit policy 'lru'; valid:"),
        (lambda s: s + "burst = -3\n", "panel.burst: expected >= 0"),
        (lambda s: s + "colour = 1\n", r"panel.colour: unknown parameter"),
        (lambda s: s.replace("seed = 1", "seed = 1\nbogus = 2"), "unknown field 'bogus'"),
        (lambda s: s.replace("[[panels]]", "[[nopanels]]"), "unknown field 'nopanels'"),
        (lambda s: s + "[[\n", "not valid TOML"),
    ],
)
def test_bad_presets_name_file_and_field(tmp_path, mutate, message):
    path = _write(tmp_path, "bad", mutate(GOOD.format(name="bad")))
    with pytest.raises(PresetError) as err:
        p = load_file(path)
        Scenario(p)  # some checks (limiter arguments) happen when the panel is built
    assert message in str(err.value) or pytest.fail(f"{err.value!s} lacks {message!r}")
    if "bad.toml" not in str(err.value):
        pytest.fail(f"error does not name the file: {err.value}")


def test_unknown_preset_lists_valid_names():
    with pytest.raises(PresetError, match="unknown preset 'nope'; valid: .*ratelimit-burst"):
        presets.load("nope")


def test_every_preset_loads_and_has_text():
    for p in presets.all_presets():
        assert p.title and p.watch_for and p.panels
        assert len(set(p.panel_names())) == len(p.panels)


def test_overrides_revalidate():
    p = presets.load("ratelimit-burst").with_overrides({"workload.burst_count": 40})
    assert p.workload["burst_count"] == 40
    p = presets.load("ratelimit-burst").with_overrides({"workload.burst_count": 40.0, "seed": 3.0})
    assert p.workload["burst_count"] == 40 and isinstance(p.workload["burst_count"], int) and p.seed == 3
    with pytest.raises(PresetError, match="workload.burst_count: expected int"):
        presets.load("ratelimit-burst").with_overrides({"workload.burst_count": 40.5})
    with pytest.raises(PresetError, match="workload.burst_count: expected int"):
        presets.load("ratelimit-burst").with_overrides({"workload.burst_count": "many"})


def test_random_module_functions_unused_by_streams():
    state = random.getstate()
    Scenario("ratelimit-burst").run()
    assert random.getstate() == state
