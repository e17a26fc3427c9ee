"""Token-per-minute limits: the presets' claims in numbers, and the accounting properties."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import api, presets
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, resolve_params
from sims.core.scenario import Scenario
from sims.ratelimit import make_panel
from sims.ratelimit.tpm import CLIENTS
from sims.ratelimit.tpm_window import TokenLog

TPM_POLICIES = ("tpm_reserve", "tpm_estimate", "tpm_post_debit", "tpm_shared")


def _panel(policy: str, **params):
    cls = get_policy("ratelimit", policy)
    specs = dict(load_topic("ratelimit").panel_params) | dict(cls.PARAMS)
    full = resolve_params(specs, params, "panel")
    return make_panel(policy, policy, full, PanelContext(1, 100.0, [], policy))


# -- the presets' claims -------------------------------------------------------------------------
def test_429_under_limit_reserving_throttles_while_usage_stays_under_half():
    m = api.run("tpm-429-under-limit")["panels"]
    for name in ("tpm_estimate", "tpm_reserve"):
        assert m[name]["throttled"] >= 50, (name, m[name])
        assert m[name]["false_rejects"] == m[name]["throttled"], "every 429 here would have fit"
    assert m["tpm_estimate"]["throttled"] > 3 * m["tpm_reserve"]["throttled"]  # no reconcile
    assert m["tpm_post_debit"]["throttled"] == 0
    for name, v in m.items():
        assert v["usage_ratio"] < 0.5, (name, v["usage_ratio"])  # actual usage under half
        assert v["overshoot"] == 0


def test_post_debit_overshoots_and_reserving_never_does():
    m = api.run("tpm-overshoot")["panels"]
    assert m["tpm_post_debit"]["overshoot"] > 100_000  # more than twice the limit in a window
    assert m["tpm_reserve"]["overshoot"] == 0 and m["tpm_estimate"]["overshoot"] == 0
    assert m["tpm_reserve"]["peak_counter"] <= 100_000


def test_shared_budget_over_admission_grows_with_sync_interval():
    m = api.run("tpm-shared-budget")["panels"]
    over = [m[n]["over_admission"] for n in ("exact", "sync_1s", "sync_5s", "sync_15s")]
    assert over[0] == 0
    assert 0 < over[1] < over[2] < over[3], over
    assert over[3] > 0.15 * 100_000


def test_retry_storm_immediate_retries_amplify_429s():
    m = api.run("tpm-retry-storm")["panels"]
    imm, back, ra, none = m["immediate"], m["backoff"], m["retry_after"], m["give_up"]
    assert imm["amplification"] > 5.0
    assert imm["throttled"] > 2 * back["throttled"]
    assert back["amplification"] < 0.6 * imm["amplification"]
    assert back["rejected"] == 0 and imm["rejected"] > 50
    assert ra["amplification"] > back["amplification"]  # synchronized retry-after collides
    assert none["amplification"] == 1.0 and none["retries"] == 0
    for v in m.values():  # RPM is enforced alongside TPM: never more than 120 in a minute
        assert v["max_in_any_window"] <= 120


def test_count_rejected_lets_immediate_retries_lock_the_limiter():
    p = presets.load("tpm-retry-storm").with_overrides({"defaults.count_rejected": True})
    m = Scenario(p, panels=["immediate", "give_up"]).run().metrics()
    assert m["immediate"]["accepted"] < 0.6 * m["give_up"]["accepted"]
    assert m["immediate"]["amplification"] > 10


# -- properties ----------------------------------------------------------------------------------
_REQ = st.tuples(
    st.floats(0.0, 3.0),  # gap to the previous request
    st.integers(1, 3000),  # prompt tokens
    st.integers(1, 3000),  # output tokens
    st.integers(0, 2000),  # max_tokens slack above the output
)


def _stream(reqs):
    t, events = 0.0, []
    for i, (gap, prompt, out, slack) in enumerate(reqs):
        t += gap
        events.append(
            {
                "t": t,
                "kind": "request",
                "id": i,
                "prompt_len": prompt,
                "output_len": out,
                "max_tokens": out + slack,
                "prompt_chars": 4 * prompt,
            }
        )
    return events


@settings(max_examples=25, deadline=None)
@given(
    reqs=st.lists(_REQ, min_size=1, max_size=60),
    client=st.sampled_from(CLIENTS),
    rpm=st.sampled_from([0, 5, 20]),
    count_rejected=st.booleans(),
)
def test_every_attempt_is_admitted_rejected_or_retried_exactly_once(reqs, client, rpm, count_rejected):
    events = _stream(reqs)
    for policy in TPM_POLICIES:
        params = {
            "tpm": 8000,
            "rpm": rpm,
            "window": 10.0,
            "client": client,
            "max_retries": 4,
            "count_rejected": count_rejected,
            "decode_tps": 100.0,
        }
        if policy == "tpm_shared":
            params |= {"workers": 3, "sync": 2.0}
        panel = _panel(policy, **params)
        for ev in events:
            panel.advance(ev["t"])
            panel.on_event(ev)
            panel.check_invariants()
        panel.advance(events[-1]["t"] + 10_000.0)  # every retry and response finishes
        panel.check_invariants()
        m = panel.metrics()
        assert m["requests"] == len(events) == m["accepted"] + m["rejected"]
        assert m["attempts"] == m["accepted"] + m["rejected"] + m["retries"]
        assert m["in_flight"] == 0 and m["waiting"] == 0
        assert m["tokens_used"] == m["tokens_admitted"]
        if policy in ("tpm_reserve", "tpm_estimate"):
            assert m["peak_counter"] <= 8000
        if policy == "tpm_reserve":
            assert m["overshoot"] == 0  # a reservation covers the actual usage
        json.dumps(panel.view())


def test_snapshot_at_t_equals_a_run_to_t():
    sc = Scenario("tpm-overshoot", checkpoint_every=0.0)
    for t in (17.3, 61.0, 133.7):
        sc.advance(t)
        assert sc.metrics() == Scenario("tpm-overshoot", duration=t).run().metrics()


def test_seeking_back_through_checkpoints_replays_exactly():
    sc = Scenario("tpm-retry-storm", duration=150.0, checkpoint_every=20.0)
    sc.advance(140.0)
    late = sc.metrics()
    for t in (75.0, 12.5, 101.0):
        sc.seek(t)
        assert sc.metrics() == Scenario("tpm-retry-storm", duration=t).run().metrics()
    sc.advance(140.0)
    assert sc.metrics() == late


def test_token_log_window_settle_and_wait():
    log = TokenLog(60.0)
    a = log.add(0.0, 500)
    b = log.add(10.0, 300)
    log.settle(b, 100)  # reconcile while still in the window
    assert log.total == 600
    assert log.wait(30.0, 200) == 30.0  # a's 500 leaves at t = 60
    log.expire(60.0)  # (t - 60, t]: the entry at 0 is out
    assert log.total == 100 and not a[2]
    log.settle(a, 50)  # settling an expired entry changes nothing
    assert log.total == 100
    log.check_invariants()


def test_bad_parameters_are_value_errors():
    with pytest.raises(ValueError, match="client"):
        _panel("tpm_reserve", client="sometimes")
    with pytest.raises(ValueError, match="workers"):
        _panel("tpm_shared", workers=0)


def test_window_edges_are_exact_decimals():
    """(t - 0.2, t] at t = 0.3 excludes a charge at 0.1: in floats 0.3 - 0.2 = 0.09999999999999998."""
    from sims.ratelimit.exact import ticks
    from sims.ratelimit.tpm_window import RequestLog

    log = TokenLog(0.2)
    log.add(0.1, 500)
    assert log.wait(0.2, 0) == 0.1
    log.expire(0.3)
    assert log.total == 0
    reqs = RequestLog(0.2)
    reqs.times.append(ticks(0.1))
    assert reqs.wait(0.2, 1) == 0.1
    reqs.expire(0.3)
    assert not reqs.times


@pytest.mark.parametrize("policy", ["tpm_reserve", "tpm_estimate", "tpm_shared"])
def test_a_charge_leaves_the_window_at_its_decimal_edge(policy):
    """A request at 0.1 s fills the 1,000-token window of 0.2 s; one at 0.3 s fits only if the
    first has left (t - 0.2, t], which it has exactly (in floats 0.3 - 0.2 < 0.1, so it would not)."""
    p = _panel(policy, tpm=1000, window=0.2, **({"sync": 0.0} if policy == "tpm_shared" else {}))

    def req(t):
        return {"t": t, "kind": "request", "prompt_len": 100, "output_len": 10, "max_tokens": 900, "prompt_chars": 400}

    p.feed([req(0.1), req(0.2), req(0.3)], 0, 3, 0.3)
    p.check_invariants()
    assert [r[1] for r in p.recent] == ["ok", "429", "ok"]
