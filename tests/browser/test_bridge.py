"""The worker's Python side in CPython (no browser): frames, chart rows, "break it" injections and
the poster/live equality the page checks at handover, for every preset."""

from __future__ import annotations

import json
import random

import pytest

from sims.core import api, presets
from web.pyodide import bridge


def call(op: str, **args) -> dict:
    reply = json.loads(bridge.call(op, json.dumps(args)))
    assert reply["ok"], reply
    return reply["result"]


def test_frames_series_and_snapshot_agree_with_run():
    created = call("create", id="t1", preset="ratelimit-burst")
    info = created["info"]
    assert [r[0] for r in created["frame"]["series"]["rows"]] == [0.0]  # the sample at t=0
    assert info["panels"][0]["name"] == "fixed_window" and info["charts"]
    f = call("advance", id="t1", t=12.0)
    assert f["t"] == 12.0 and set(f["panels"]) == {p["name"] for p in info["panels"]}
    rows = f["series"]["rows"]
    assert f["series"]["from"] == 1 and rows and all(0 < r[0] <= 12.0 for r in rows)
    back = call("seek", id="t1", t=3.0)
    assert back["series"]["from"] <= len(rows) and all(r[0] <= 3.0 for r in back["series"]["rows"])
    snap = call("snapshot", id="t1")
    assert snap == {"t": 3.0, "panels": json.loads(json.dumps(api.run("ratelimit-burst", 7, 3.0)["panels"]))}
    call("drop", id="t1")


def test_bad_requests_are_one_line_errors():
    bad = json.loads(bridge.call("create", json.dumps({"id": "x", "preset": "nope"})))
    assert not bad["ok"] and "unknown preset 'nope'" in bad["error"]
    bad = json.loads(bridge.call("advance", json.dumps({"id": "missing", "t": 1})))
    assert not bad["ok"] and "create it first" in bad["error"]
    bad = json.loads(bridge.call("frobnicate", "{}"))
    assert not bad["ok"] and "unknown operation" in bad["error"]


def test_an_injected_action_is_reproduced_by_its_link():
    call("create", id="live", preset="ratelimit-burst", seed=3)
    call("advance", id="live", t=7.25)
    injected = call("inject", id="live", action=0)["actions"]
    assert injected == [[0, 7.25]]
    call("advance", id="live", t=20.0)
    live = call("snapshot", id="live")
    call("create", id="link", preset="ratelimit-burst", seed=3, actions=injected, t=20.0)
    assert call("snapshot", id="link") == live
    plain = api.run("ratelimit-burst", 3, 20.0)["panels"]["fixed_window"]["requests"]
    assert live["panels"]["fixed_window"]["requests"] == plain + 30  # the burst of 30 went in


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", presets.preset_names())
def test_frames_do_not_depend_on_how_time_was_chunked(name):
    """What the page checks at handover: a frame reached in many small advances (the poster, a
    playing page) equals the frame reached in one (a worker that catches up), however the advances
    fall: even, or irregular, as a slow machine's frames and its fewer checkpoints cut them."""
    p = presets.load(name)
    end = p.duration / 4
    rng = random.Random(1)
    cuts = [end * k / 8 for k in range(1, 8)] + sorted(rng.uniform(0, end) for _ in range(120))
    once = bridge.Session(name)
    once.sc.tune_checkpoints(0)
    once.sc.advance(end)
    b = json.loads(bridge.dumps(once.frame()))
    for chunks in (cuts[:7], sorted(cuts[7:])):
        steps = bridge.Session(name)
        for t in [*chunks, end]:
            steps.sc.advance(t)
        a = json.loads(bridge.dumps(steps.frame()))
        for panel in a["panels"]:
            assert a["panels"][panel]["metrics"] == b["panels"][panel]["metrics"], f"{panel}: metrics"
            assert a["panels"][panel]["view"] == b["panels"][panel]["view"], f"{panel}: view"
