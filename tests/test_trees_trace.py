"""``contention trace trees``: its output (the metrics and one answer a line), its refusals (one
line naming the file and line, exit 2) and random lines that never give a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import registry
from sims.trees.trace import RESULT

ROOT = Path(__file__).resolve().parents[1]
STRUCTURES = sorted(registry.policies("trees"))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sims", "trace", "trees", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_trace_command_shape(tmp_path):
    f = tmp_path / "ops.txt"
    f.write_text(
        "# a few keys\ninsert 5\ninsert 3\n\ninsert 9\nsearch 3\nsearch 4\nrange 2 6\ndelete 5\ndelete 5\npop\n"
    )
    out = json.loads(_cli("--structure", "red_black", "--trace", str(f), "--json").stdout)
    assert set(out) == {"structure", *RESULT, "answers"}
    assert out["answers"] == [True, True, True, True, False, 2, True, False, 3]
    assert out["ops"] == 9 and out["size"] == 1 and out["found"] == 1
    f.write_text("insert 3\ninsert 7\nadd 7 4\nprefix 7\nrange 0 3\nsearch 5\n")
    for name in ("fenwick", "segment_tree"):
        out = json.loads(_cli("--structure", name, "--trace", str(f), "--json").stdout)
        assert out["answers"] == [True, True, 5, 6, 1, False], name
    f.write_text("insert 30\ninsert 10\ninsert 20\npop\npop\n")
    assert json.loads(_cli("--structure", "binary_heap", "--trace", str(f), "--json").stdout)["answers"] == [
        True,
        True,
        True,
        10,
        20,
    ]
    f.write_text("insert car\ninsert cart\nsearch car\ndelete cart\nsearch cart\n")
    out = json.loads(_cli("--structure", "trie", "--trace", str(f), "--json").stdout)
    assert out["answers"] == [True, True, True, True, False] and out["nodes"] == 4
    f.write_text("".join(f"insert {k}\n" for k in range(40)) + "range 10 30\n")
    small = json.loads(_cli("--structure", "b_plus_tree", "--page-bytes", "96", "--trace", str(f), "--json").stdout)
    big = json.loads(_cli("--structure", "b_plus_tree", "--page-bytes", "1024", "--trace", str(f), "--json").stdout)
    assert small["answers"][-1] == big["answers"][-1] == 21 and small["height"] == 3 > big["height"] == 1
    plain = _cli("--structure", "avl", "--trace", str(f)).stdout
    assert "height: 6" in plain and "answers: [True" in plain


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ("insert 1\nfly 2\n", ("--structure", "bst"), "ops.txt:2: expected one of insert K"),
        ("insert 1\ninsert\n", ("--structure", "bst"), "ops.txt:2: expected one of insert K"),
        ("insert 1\nrange 3\n", ("--structure", "avl"), "ops.txt:2: expected one of"),
        ("insert 1\nsearch 1\n", ("--structure", "binary_heap"), "ops.txt:2: binary_heap does not take search"),
        ("insert 1\nrange 1 2\n", ("--structure", "trie"), "ops.txt:2: trie does not take range"),
        ("insert 1\nadd 1 x\n", ("--structure", "fenwick"), "ops.txt:2: expected integers: add I D"),
        ("insert 1\ninsert -4\n", ("--structure", "fenwick"), "ops.txt:2: fenwick takes keys 0"),
        ("insert 1\ninsert 1000000\n", ("--structure", "segment_tree"), "ops.txt:2: segment_tree takes keys 0"),
        ("insert 1\ninsert abc\n", ("--structure", "fenwick"), "ops.txt:1: fenwick takes integer keys"),
        ("insert 1\n", ("--structure", "bst", "--page-bytes", "256"), "--page-bytes applies to --structure b_tree"),
        ("insert 1\n", ("--structure", "b_tree", "--page-bytes", "50"), "page_bytes"),
        ("insert 1\n", ("--structure", "b_tree", "--page-bytes", "96", "--key-bytes", "64"), "page_bytes = 96"),
        ("insert 1\n", ("--structure", "oak"), "oak"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, text, args, message):
    f = tmp_path / "ops.txt"
    f.write_text(text)
    res = _cli(*args, "--trace", str(f))
    assert res.returncode == 2, res.stderr
    assert message in res.stderr and "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_the_trace_refuses_more_lines_than_its_bound(tmp_path, monkeypatch):
    from sims.core.trace import TraceError
    from sims.trees import trace

    monkeypatch.setattr(trace, "MAX_OPS", 3)
    f = tmp_path / "ops.txt"
    f.write_text("insert 1\ninsert 2\ninsert 3\ninsert 4\n")
    with pytest.raises(TraceError, match="ops.txt:4: more than 3 operations"):
        trace.read(f, registry.get_policy("trees", "bst"))


LINES = st.lists(
    st.one_of(
        st.sampled_from(["insert", "delete", "search", "range", "pop", "add", "prefix", "x"]).flatmap(
            lambda op: st.lists(st.sampled_from(["1", "2", "-1", "a", "999999", "1e3", ""]), max_size=3).map(
                lambda ws: " ".join([op, *ws])
            )
        ),
        st.text(max_size=12),
    ),
    max_size=8,
)


@settings(max_examples=examples(40), deadline=None)
@given(LINES, st.sampled_from(STRUCTURES))
def test_random_lines_give_a_result_or_one_line_never_a_traceback(tmp_path_factory, lines, name):
    from sims.core.limits import InputError
    from sims.trees.trace import TRACE

    f = tmp_path_factory.mktemp("t") / "ops.txt"
    f.write_text("\n".join(lines), encoding="utf-8", errors="replace")
    try:
        out = TRACE.run(name, {"page_bytes": None, "key_bytes": None}, f)
    except InputError as exc:
        assert "\n" not in str(exc)
    else:
        assert len(out["answers"]) == out["ops"]
