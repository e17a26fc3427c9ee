"""The space-time diagram of replication and election runs (sims/net/diagram.py, diagram_rows.py)
and their recordings (sims/replication/record.py, ElectionPanel.record): every message drawn,
stale reads, lost writes and split brain marked, recording changing no number, and a drawing cut
at an earlier time equal to a run that stopped there (what the page's scrubbing relies on)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from bisect import bisect_right
from collections import Counter

import pytest

from sims.cli import main
from sims.core import registry
from sims.core.panel import PanelContext
from sims.core.scenario import Scenario
from sims.net.diagram import svg

SVG = "{http://www.w3.org/2000/svg}"


def _replay(preset: str, name: str, t: float, record: bool = True, seed: int | None = None):
    """Panel ``name`` of ``preset`` fed its stream up to ``t``, as the page's worker replays it."""
    sc = Scenario(preset, seed)
    spec = {p.name: p for p in sc.preset.panels}[name]
    ctx = PanelContext(sc.seed, sc.duration, sc.events, name, sc.preset)
    panel = registry.load_topic(sc.preset.topic).make_panel(spec.policy, name, dict(spec.params), ctx)
    if record:
        panel.record()
    panel.feed(sc.events, 0, bisect_right([ev["t"] for ev in sc.events], t), t)
    return panel


def _root(text: str) -> ET.Element:
    return ET.fromstring(text)  # raises on malformed XML


def _with(root: ET.Element, attr: str) -> list[ET.Element]:
    return [e for e in root.iter() if attr in e.attrib]


def _classes(root: ET.Element, word: str) -> list[ET.Element]:
    return [e for e in root.iter() if word in (e.get("class") or "").split()]


@pytest.mark.parametrize(
    ("preset", "name"),
    [
        ("replication-failover", "async"),
        ("replication-failover", "chain"),
        ("replication-quorum-overlap", None),
        ("election-partition", "raft_election"),
        ("election-gc-pause", "zookeeper"),
        ("election-lease-drift", "lease_guard_5"),
    ],
)
def test_every_message_of_the_run_is_an_arrow(preset, name):
    sc = Scenario(preset)
    name = name or sc.preset.panels[0].name
    t = min(sc.duration, 12.0)
    panel = _replay(preset, name, t)
    net, trace = panel.net, panel.net.trace
    root = _root(svg(panel))
    sc.advance(t)
    assert len(_with(root, "data-msg")) == len(trace.messages) == net.sent + net.duplicated > 0
    assert net.sent == sc.metrics()[name]["messages"]
    fates = Counter(m[6] for m in trace.messages)
    assert fates["delivered"] == net.delivered
    assert fates["loss"] + fates["partition"] + fates["crash"] == net.dropped
    assert trace.states and len(_with(root, "data-now")) == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_oracles_stale_reads_are_marked_and_explained(seed):
    panel = _replay("replication-partition", "async", 12.0, seed=seed)  # reads at the cut-off old leader
    stale = panel.metrics()["stale_reads"]
    root = _root(svg(panel))
    marked = [e for e in _classes(root, "stale") if e.tag == f"{SVG}line"]
    assert len(marked) == stale
    assert len(_with(root, "data-violation")) == stale + panel.metrics()["lost_acked_writes"]
    texts = [e.text or "" for e in root.iter(f"{SVG}text")]
    said = [s for s in texts if ", stale: write " in s and "was acknowledged at t = " in s]
    assert len(said) == stale > 0


def test_lost_acknowledged_writes_are_marked(tmp_path, capsys):
    out = tmp_path / "async.svg"
    argv = "search replication --policies async --objective violations --shrink --budget 4000 --seed 1 --json"
    assert main([*argv.split(), "--svg", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    m = result["panels"]["async-3"]
    root = _root(out.read_text())
    assert len(_with(root, "data-violation")) == m["lost_acked_writes"] + m["stale_reads"] > 0
    assert len(_with(root, "data-msg")) == m["messages"]
    texts = " ".join(e.text or "" for e in root.iter(f"{SVG}text"))
    assert texts.count("(an acknowledged write lost)") == m["lost_acked_writes"]


@pytest.mark.parametrize(
    ("preset", "name"), [("election-lease-drift", "lease_guard_5"), ("election-partition", "bully")]
)
def test_split_brain_windows_are_marked_and_add_up(preset, name):
    sc = Scenario(preset)
    panel = _replay(preset, name, sc.duration)
    split = panel.metrics()["split_brain_s"]
    root = _root(svg(panel))
    bands = _classes(root, "split")
    assert split > 0 and len(bands) == len(_with(root, "data-violation"))
    scale = (float(root.get("width")) - 90 - 240) / panel.t  # px per second
    assert sum(float(b.get("width")) for b in bands) / scale == pytest.approx(split, abs=0.01 * len(bands))


def test_an_election_without_split_brain_marks_none():
    panel = _replay("election-lease-drift", "lease_guard_25", 20.0)
    assert panel.metrics()["split_brain_s"] == 0
    root = _root(svg(panel))
    assert not _classes(root, "split") and not _with(root, "data-violation")


@pytest.mark.parametrize(
    ("preset", "name"),
    [
        ("replication-failover", "async"),
        ("replication-partition", "sloppy_quorum"),
        ("election-gc-pause", "bully"),
        ("election-lease-drift", "lease_guard_5"),
    ],
)
def test_recording_changes_no_metric(preset, name):
    for seed in (1, 2):
        plain = _replay(preset, name, 8.0, record=False, seed=seed)
        recorded = _replay(preset, name, 8.0, seed=seed)
        assert plain.net.trace is None
        assert recorded.metrics() == plain.metrics()


@pytest.mark.parametrize(
    ("preset", "name", "cut"),
    [
        ("replication-failover", "async", 11.0),
        ("election-lease-drift", "lease_guard_5", 6.0),
        ("consensus-figure8", "raft_broken_commit", 3.0),
    ],
)
def test_a_drawing_cut_at_t_is_the_run_that_stopped_there(preset, name, cut):
    further = _replay(preset, name, cut + 4.0)
    there = _replay(preset, name, cut)
    assert svg(further, "x", until=cut) == svg(there, "x")
    assert svg(further, "x", until=cut) != svg(further, "x")


@pytest.mark.parametrize("topic", ["replication", "election"])
def test_search_writes_a_diagram_for_the_protocol_topics(tmp_path, capsys, topic):
    out = tmp_path / f"{topic}.svg"
    policy = "async" if topic == "replication" else "lease"
    argv = f"search {topic} --policies {policy} --objective violations --shrink --budget 2000 --seed 1 --json"
    assert main([*argv.split(), "--svg", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["found"] and result["svg"] == str(out)
    root = _root(out.read_text())
    assert len(_with(root, "data-violation")) > 0
    assert len(_with(root, "data-msg")) == next(iter(result["panels"].values()))["messages"]
