"""Faults a reader draws (web/pyodide/ops_faults.py): keys injected through the bridge behave like
the preset's own fault events, a link's replay of them rebuilds the same run, and a key naming a
node the panels lack is a one-line error."""

from __future__ import annotations

import json

import pytest

from web.pyodide import bridge


def _call(op: str, **args) -> dict:
    return json.loads(bridge.call(op, json.dumps(args)))


def test_drawn_partition_crash_and_heal_change_the_run_and_a_link_replays_them():
    bridge.call("create", json.dumps({"id": "f1", "preset": "consensus-leader-partition"}))
    _call("advance", id="f1", t=1.0)
    r = _call("inject", id="f1", action="p0.1-2.3.4")
    assert r["ok"], r
    frame = _call("advance", id="f1", t=1.5)["result"]
    for p in frame["panels"].values():
        assert p["view"]["partitioned"]
        assert [nd["group"] for nd in p["view"]["nodes"]] == [0, 0, 1, 1, 1]
    assert _call("inject", id="f1", action="c3")["ok"]
    frame = _call("advance", id="f1", t=2.0)["result"]
    assert all(not p["view"]["nodes"][3]["up"] for p in frame["panels"].values())
    assert _call("inject", id="f1", action="r3")["ok"] and _call("inject", id="f1", action="h")["ok"]
    r = _call("advance", id="f1", t=2.5)["result"]
    assert all(not p["view"]["partitioned"] and p["view"]["nodes"][3]["up"] for p in r["panels"].values())
    actions = _call("inject", id="f1", action=0)["result"]["actions"]
    assert [a for a, _ in actions] == ["p0.1-2.3.4", "c3", "r3", "h", 0]
    want = _call("advance", id="f1", t=6.0)["result"]["panels"]
    # a fresh session from the link's actions is the same run
    replay = _call("create", id="f2", preset="consensus-leader-partition", actions=actions, t=6.0)["result"]
    assert {k: v["metrics"] for k, v in replay["frame"]["panels"].items()} == {k: v["metrics"] for k, v in want.items()}
    plain = _call("create", id="f3", preset="consensus-leader-partition", t=6.0)["result"]
    assert plain["frame"]["panels"]["raft"]["metrics"] != want["raft"]["metrics"]
    for sid in ("f1", "f2", "f3"):
        _call("drop", id=sid)


def test_drawn_faults_work_on_replication_too():
    assert _call("create", id="g1", preset="replication-partition")["ok"]
    assert _call("inject", id="g1", action="p0.4-1.2.3")["ok"]
    view = _call("advance", id="g1", t=1.0)["result"]["panels"]["quorum"]["view"]
    assert [nd["group"] for nd in view["nodes"]] == [0, 1, 1, 1, 0]
    _call("drop", id="g1")


@pytest.mark.parametrize(
    ("key", "says"),
    [
        ("c9", "node 9 does not exist; the nodes are 0..4"),
        ("p0.1-1.2", "each node in one"),
        ("p0.1.2.3.4", "two or more groups"),
        ("px-1", "'x' is not a node number"),
        ("z1", "expected an action number or a drawn fault"),
    ],
)
def test_a_bad_key_is_a_one_line_error(key, says):
    r = _call("create", id="bad", preset="consensus-leader-partition", actions=[[key, 1.0]])
    assert not r["ok"] and says in r["error"] and "\n" not in r["error"], r
    assert _call("create", id="bad", preset="consensus-leader-partition")["ok"]
    r = _call("inject", id="bad", action=key)
    assert not r["ok"] and says in r["error"], r
    _call("drop", id="bad")


def test_a_topic_without_nodes_refuses_drawn_faults():
    assert _call("create", id="q", preset="queues-hockey-stick")["ok"]
    r = _call("inject", id="q", action="c1")
    assert not r["ok"] and "need panels with nodes" in r["error"], r
    _call("drop", id="q")


def test_the_front_end_hit_tests_and_links_drawn_keys():
    """web/static/js/faults.js (the line's sides, a click on a server, labels) and link.js's codec
    of drawn keys, under Node."""
    import shutil
    import subprocess
    from pathlib import Path

    node = shutil.which("node")
    if not node:
        pytest.fail("node is not installed (make test installs the npm dependencies with it)")
    js = Path(__file__).resolve().parents[1] / "web" / "static" / "js"
    script = f"""
import assert from "node:assert/strict";
import {{ partitionKey, hitNode, crashKey, actionLabel }} from "{(js / "faults.js").as_uri()}";
import {{ parseActions, formatActions }} from "{(js / "link.js").as_uri()}";
const ring = [0, 1, 2, 3, 4].map((id) => {{
  const a = -Math.PI / 2 + (2 * Math.PI * id) / 5;
  return {{ id, up: id !== 3, x: 100 + 50 * Math.cos(a), y: 100 + 50 * Math.sin(a) }};
}});
// a vertical line just right of the centre: S0 (top) and the left ones vs the right ones
assert.equal(partitionKey(ring, {{ x: 110, y: 0 }}, {{ x: 110, y: 200 }}), "p0.3.4-1.2");
assert.equal(partitionKey(ring, {{ x: 110, y: 200 }}, {{ x: 110, y: 0 }}), "p0.3.4-1.2");
assert.equal(partitionKey(ring, {{ x: 190, y: 0 }}, {{ x: 190, y: 200 }}), null);
assert.equal(hitNode(ring, 10, {{ x: 101, y: 52 }}), 0);
assert.equal(hitNode(ring, 10, {{ x: 100, y: 100 }}), -1);
assert.equal(crashKey(3, ring[3].up), "r3");
assert.equal(actionLabel({{ actions: [{{ label: "Crash" }}] }}, 0), "Crash");
assert.equal(actionLabel({{ topic: "replication" }}, "p0.1-2.3.4"), "partition {{n0, n1}} | {{n2, n3, n4}}");
assert.equal(actionLabel({{ topic: "consensus" }}, "c2"), "crash S3");
const acts = [[0, 1.5], ["p0.1-2.3.4", 2.25], ["c2", 3], ["h", 4]];
assert.deepEqual(parseActions(formatActions(acts)), acts);
assert.deepEqual(parseActions("0@1,X@2,c2@x,p0.1-2@3"), [[0, 1], ["p0.1-2", 3]]);
"""
    r = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-3000:]
