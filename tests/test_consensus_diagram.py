"""The space-time diagram (sims/consensus/diagram.py) and the trace it draws (sims/net/trace.py)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from random import Random

import pytest

from sims.cli import main
from sims.consensus.diagram import _CHAR, svg
from sims.consensus.trials import leader_relative_schedule, run_events

SEARCH = (
    "search consensus --policies raft_broken_commit --objective violations --shrink --budget 20000 --seed 2".split()
)


def _svg(text: str) -> ET.Element:
    return ET.fromstring(text)  # raises on malformed XML


def _count(root: ET.Element, attr: str) -> int:
    return sum(1 for e in root.iter() if attr in e.attrib)


def test_the_shrunk_schedule_draws_every_message_and_marks_the_violation(tmp_path, capsys):
    out = tmp_path / "fig8.svg"
    assert main([*SEARCH, "--svg", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["found"] and result["svg"] == str(out)
    m = result["panels"]["raft_broken_commit-5"]
    root = _svg(out.read_text())
    assert _count(root, "data-msg") == m["messages"] > 0  # no duplication here: one copy per send
    assert _count(root, "data-violation") == m["safety_violations"] > 0
    fates = Counter(e.get("class") for e in root.iter() if "data-msg" in e.attrib)
    assert (m["messages"], fates["msg partition"]) == (469, 155)  # the numbers docs/search.md gives
    texts = " ".join(e.text or "" for e in root.iter("{http://www.w3.org/2000/svg}text"))
    for line in result["why"]:  # the sentence the search prints, without its panel's name
        assert line.split(": ", 1)[1] in texts


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_run_without_violations_marks_none_and_lists_every_copy(seed):
    events, duration = leader_relative_schedule(Random(seed))
    panel = run_events("raft", events, duration, seed, record=True, loss=0.05, duplicate=0.05)
    assert not panel.checker.violations
    trace = panel.net.trace
    root = _svg(svg(panel))
    assert _count(root, "data-violation") == 0
    assert _count(root, "data-msg") == len(trace.messages) == panel.net.sent + panel.net.duplicated
    fates = Counter(m[6] for m in trace.messages)
    assert fates["delivered"] == panel.net.delivered
    assert fates["loss"] + fates["partition"] + fates["crash"] == panel.net.dropped
    assert trace.faults and trace.states


@pytest.mark.parametrize("policy", ["raft", "raft_broken_commit", "multi_paxos", "paxos"])
def test_recording_changes_no_metric(policy):
    for seed in (1, 2):
        events, duration = leader_relative_schedule(Random(seed))
        params = {"loss": 0.05, "duplicate": 0.05, "reorder": 0.1}
        plain = run_events(policy, events, duration, seed, **params)
        recorded = run_events(policy, events, duration, seed, record=True, **params)
        assert plain.net.trace is None
        assert recorded.metrics() == plain.metrics()


def test_labels_on_one_line_do_not_overlap():
    events, duration = leader_relative_schedule(Random(4))
    root = _svg(svg(run_events("raft_broken_commit", events, duration, 4, record=True)))
    rows: dict[str, list[tuple[float, float]]] = {}
    for e in root.iter("{http://www.w3.org/2000/svg}text"):
        if e.get("text-anchor") == "start" and float(e.get("x")) > 20:  # node names and headings sit at x=10
            x = float(e.get("x"))
            rows.setdefault(e.get("y"), []).append((x, x + len(e.text) * _CHAR))
    assert rows
    for spans in rows.values():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            assert start >= end


def test_an_unrecorded_panel_is_refused():
    events, duration = leader_relative_schedule(Random(1))
    with pytest.raises(ValueError, match="record"):
        svg(run_events("raft", events, duration))


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "consensus", "--policies", "raft", "--svg", "x.png"],
        ["search", "consensus", "--policies", "raft", "--svg", "no/such/folder/x.svg"],
        ["search", "paging", "--policies", "fifo,lru", "--svg", "x.svg"],
    ],
)
def test_bad_svg_flags_exit_2(argv):
    assert main(argv) == 2
