"""The edited-policy worker's session (web/pyodide/ops_editor.py, driven by web/static/js/edited.js):
the edited panels alone on the page's stream give the numbers and the chart rows they would give
beside the preset's own panels in one scenario (the CLI's `--policy-file`), whatever steps the
catch-up takes, with the page's injected actions, numbered and drawn, given at creation or later."""

from __future__ import annotations

import json

import pytest

from sims.core import editpanel, presets, userpolicy
from sims.core.policysource import policy_source
from sims.core.scenario import Scenario
from web.pyodide import bridge, ops_faults

SEEDS = [7, 11, 23, 101, 977]


def _call(op: str, **args):
    reply = json.loads(bridge.call(op, json.dumps(args)))
    assert reply["ok"], reply["error"]
    return reply["result"]


def _reference(preset: str, seed: int, base: str, source: str, until: float, actions=()) -> dict:
    """One scenario with every panel, the edit added at half-way (as the page's worker once did)."""
    p = presets.load(preset)
    sc = Scenario(p, seed, sample_dt=p.sample_dt or p.duration / 100)
    s = bridge.Session.__new__(bridge.Session)  # only for its action events
    s.base, s.sc = p, sc
    sc.advance(until / 2)
    name = editpanel.add_edited(sc, userpolicy.load(source, p.topic), p, base)
    for index, t in actions:
        sc.insert(s._action_event(index, t))
    sc.advance(until)
    return {"metrics": sc.metrics()[name], "rows": [(r["t"], r["panels"][name]) for r in sc.series]}


def _edited(preset: str, seed: int, base: str, source: str, stops: list[float], actions=(), inject=()) -> dict:
    page = _call("create", id="page", preset=preset, seed=seed)
    _call("edited_create", id="edited", preset=preset, seed=seed)
    made = _call(
        "edited_apply", id="edited", actions=[list(a) for a in actions], edits=[{"base": base, "source": source}]
    )
    name = f"{base} (edited)"
    assert made["names"] == [name] and not made["errors"], made["errors"]
    assert set(made["frame"]["panels"]) == {name}  # none of the preset's own panels run here
    columns = made["frame"]["series"]["columns"]
    assert set(page["info"]["series"]) <= set(columns)  # the page finds every column it charts
    rows = made["frame"]["series"]["rows"]
    for t in stops:
        for index, at in inject:
            if at <= t and [index, at] not in [list(a) for a in actions]:
                _call("edited_inject", id="edited", action=index, t=at)
                actions = [*actions, (index, at)]
        frame = _call("seek", id="edited", t=t)
        series = frame["series"]
        assert series["columns"] == columns
        rows = rows[: series["from"]] + series["rows"]
    snap = _call("snapshot", id="edited")
    for sid in ("page", "edited"):
        _call("drop", id=sid)
    assert snap["t"] == stops[-1]
    return {"metrics": snap["panels"][name], "rows": rows, "columns": columns, "name": name}


def _same_rows(got: dict, want: dict) -> None:
    assert [t for t, _ in got["rows"]] == [t for t, _ in want["rows"]]
    for (_, by_panel), (_, metrics) in zip(got["rows"], want["rows"], strict=True):
        assert by_panel[got["name"]] == [metrics.get(c) for c in got["columns"]]


@pytest.mark.every_seed("seed")
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    ("preset", "base"), [("cache-scan", "lru"), ("paging-locality", "clock"), ("ratelimit-burst", "token_bucket")]
)
def test_the_edited_panel_alone_gives_its_numbers_beside_the_others(preset, base, seed):
    p = presets.load(preset)
    source = policy_source(p.topic, next(s.policy for s in p.panels if s.name == base))
    end = min(p.duration, 12.0)
    got = _edited(preset, seed, base, source, [end / 5, end / 10, end / 2, end])
    want = _reference(preset, seed, base, source, end)
    assert got["metrics"] == json.loads(json.dumps(want["metrics"]))
    _same_rows(got, json.loads(json.dumps(want)))


@pytest.mark.parametrize(
    ("preset", "base", "actions"),
    [("balance-herd", "lc_live", [(0, 3.0), (1, 6.5)]), ("replication-failover", "async", [("c1", 4.0), ("r1", 9.0)])],
)
def test_actions_reach_the_edited_stream_at_creation_or_later(preset, base, actions):
    p = presets.load(preset)
    source = policy_source(p.topic, next(s.policy for s in p.panels if s.name == base))
    want = _reference(preset, p.seed, base, source, 12.0, actions)
    at_once = _edited(preset, p.seed, base, source, [2.0, 12.0], actions=actions)
    later = _edited(preset, p.seed, base, source, [2.0, 5.0, 12.0], inject=actions)
    plain = _edited(preset, p.seed, base, source, [12.0])
    assert at_once["metrics"] == later["metrics"] == json.loads(json.dumps(want["metrics"]))
    assert plain["metrics"] != at_once["metrics"]  # the actions changed the run


def test_drawn_faults_count_the_nodes_of_an_edited_panel():
    p = presets.load("replication-failover")
    sc = Scenario(presets.select_panels(p, ["async"]), p.seed)
    editpanel.add_edited(sc, userpolicy.load(policy_source(p.topic, "async"), p.topic), p, "async")
    del sc.panels["async"]
    assert ops_faults.node_count(sc) == sc.panels["async (edited)"].inner.net.n > 0


def test_an_edit_that_does_not_load_is_reported_and_nothing_runs():
    _call("edited_create", id="bad", preset="replication-failover")
    made = _call("edited_apply", id="bad", actions=[["c1", 1.0]], edits=[{"base": "async", "source": "class X(:\n"}])
    assert made["names"] == ["async (edited)"] and made["frame"]["panels"] == {}
    assert made["errors"]["async (edited)"]["line"] == 1
    _call("drop", id="bad")
