"""The Jupyter widget (web/notebook.py): built, advanced and sought in the kernel's Python, its
state equals ``sims.core.api.run`` at the same time; the front end's worker protocol is answered
by the bridge; the shipped element modules link among themselves. No Jupyter server needed."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("anywidget")

from sims.core import api, registry  # noqa: E402
from web.notebook import Sim, element_modules  # noqa: E402


def test_sim_builds_advances_and_matches_the_cli():
    sim = Sim("cache-scan", seed=7)
    assert sim.preset == "cache-scan" and sim.seed == 7 and sim.t == 0.0
    assert sim.panels == [p["name"] for p in sim.meta["panels"]]
    sim.advance(12.5)
    assert sim.t == 12.5
    assert sim.metrics == api.run("cache-scan", 7, 12.5)["panels"]
    sim.advance(30)
    assert sim.metrics == api.run("cache-scan", 7, 30.0)["panels"]
    sim.seek(5.0)  # backwards: a checkpoint and a replay give the same state
    assert sim.metrics == api.run("cache-scan", 7, 5.0)["panels"]
    assert sim.snapshot() == {"t": 5.0, "panels": sim.metrics}
    with pytest.raises(ValueError, match="forward"):
        sim.advance(1.0)


def test_panels_seed_and_bad_input():
    sim = Sim("ratelimit-burst", seed=3, panels="fixed_window,sliding_log")
    assert sim.panels == ["fixed_window", "sliding_log"]
    sim.run()
    assert sim.t == sim.duration
    assert sim.metrics == api.run("ratelimit-burst", 3, None, ["fixed_window", "sliding_log"])["panels"]
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        Sim("nope")
    with pytest.raises(ValueError, match="theme"):
        Sim("cache-scan", theme="blue")


def test_front_end_requests_run_in_the_kernel():
    sim = Sim("cache-scan", seed=7, panels=["lru", "arc"])
    sent = []
    sim.send = sent.append  # what the front end would receive
    create = {"id": "nb-1", "preset": "cache-scan", "seed": 7, "panels": ["lru", "arc"], "t": 0}
    sim._on_msg(sim, {"type": "request", "id": 1, "op": "create", "args": create}, [])
    sim._on_msg(sim, {"type": "request", "id": 2, "op": "advance", "args": {"id": "nb-1", "t": 8.0}}, [])
    sim._on_msg(sim, {"type": "request", "id": 3, "op": "snapshot", "args": {"id": "nb-1"}}, [])
    sim._on_msg(sim, {"type": "request", "id": 4, "op": "advance", "args": {"id": "missing", "t": 1}}, [])
    assert [m["id"] for m in sent] == [1, 2, 3, 4]
    assert sent[0]["ok"] and sent[1]["result"]["t"] == 8.0
    assert sent[2]["result"]["panels"] == api.run("cache-scan", 7, 8.0, ["lru", "arc"])["panels"]
    assert not sent[3]["ok"] and "create it first" in sent[3]["error"]
    sim._on_msg(sim, {"type": "request", "id": 5, "op": "drop", "args": {"id": "nb-1"}}, [])


def test_element_modules_link_only_among_themselves():
    mods = element_modules()
    names = [rel for rel, _ in mods]
    assert "js/embed.js" in names and "js/sim-element.js" in names
    assert {f"js/topics/{t}.js" for t in registry.topic_names()} <= set(names)  # loaded by name
    seen = set()
    for rel, src in mods:
        assert "import.meta.url" not in src
        for dep in __import__("re").findall(r"""["']contention:([^"']+)["']""", src):
            assert dep in seen, (rel, dep)  # dependencies come first
        assert 'from "./' not in src and 'import "./' not in src and 'import "../' not in src
        seen.add(rel)
    json.dumps(mods)  # travels as a synced trait
