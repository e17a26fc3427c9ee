"""``contention trace sorting``: its output, its refusals (one line, file:line, exit 2), its
bounds (numbers per algorithm, steps per run) and random lines that never give a traceback."""

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
from sims.sorting.trace import replay

ROOT = Path(__file__).resolve().parents[1]
ALGOS = sorted(registry.policies("sorting"))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sims", "trace", "sorting", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_trace_command_shape(tmp_path):
    f = tmp_path / "n.txt"
    f.write_text("# keys\n3\n1\n2\n\n1\n")
    out = json.loads(_cli("--algorithm", "heap", "--trace", str(f), "--json").stdout)
    assert set(out) == {"algorithm", "n", "comparisons", "writes", "swaps", "extra", "stable", "sorted"}
    assert out["algorithm"] == "heap" and out["n"] == 4 and out["sorted"] == 1
    merge = json.loads(_cli("--algorithm", "merge", "--trace", str(f), "--json").stdout)
    assert merge["stable"] == 1 and merge["extra"] == 2
    f.write_text("5\n4\n3\n2\n1\n")
    first = json.loads(_cli("--algorithm", "quick", "--pivot", "first", "--trace", str(f), "--json").stdout)
    assert (
        first["comparisons"]
        > json.loads(_cli("--algorithm", "quick", "--trace", str(f), "--json").stdout)["comparisons"]
    )
    f.write_text("2.5\n-1\n0.25\n")
    assert json.loads(_cli("--algorithm", "bucket", "--trace", str(f), "--json").stdout)["sorted"] == 1
    plain = _cli("--algorithm", "timsort", "--trace", str(f)).stdout
    assert "comparisons: " in plain and "sorted: 1" in plain


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ("1\nx\n", ("--algorithm", "merge"), "n.txt:2: expected one number"),
        ("1\n2 3\n", ("--algorithm", "merge"), "n.txt:2: expected one number"),
        ("1\ninf\n", ("--algorithm", "merge"), "n.txt:2: expected one number"),
        ("1\n2.5\n", ("--algorithm", "counting"), "n.txt:2: counting sorts integers"),
        ("1\n2.5\n", ("--algorithm", "radix"), "n.txt:2: radix sorts integers"),
        ("1\n" + "9" * 30 + "\n", ("--algorithm", "radix"), "n.txt:2: expected one number"),
        ("1\n2\n" * 1001, ("--algorithm", "bubble"), "n.txt:2001: more than 2000 numbers"),
        ("0\n2000000\n", ("--algorithm", "counting"), "at most 1000000"),
        ("1\n", ("--algorithm", "merge", "--pivot", "first"), "--pivot applies to --algorithm quick"),
        ("1\n", ("--algorithm", "quick", "--pivot", "last"), "trace.pivot: expected one of"),
        ("1\n", ("--algorithm", "radix", "--base", "1"), "trace.base: expected >= 2"),
        ("1\n", ("--algorithm", "nope"), "unknown sorting policy 'nope'"),
    ],
)
def test_trace_command_refuses_bad_input_in_one_line(tmp_path, text, args, message):
    f = tmp_path / "n.txt"
    f.write_text(text)
    res = _cli(*args, "--trace", str(f))
    assert res.returncode == 2, res
    assert message in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.text(alphabet="0123456789.-+e x#_", max_size=8), max_size=8), st.sampled_from(ALGOS))
def test_random_lines_exit_0_or_2_in_one_line(rows, algo):
    import contextlib
    import io
    import tempfile

    from sims import cli as cli_mod

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "n.txt"
        f.write_text("\n".join(rows))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = cli_mod.main(["trace", "sorting", "--algorithm", algo, "--trace", str(f)])
        assert rc in (0, 2)
        if rc == 2:
            assert len(err.getvalue().strip().splitlines()) == 1 and "Traceback" not in err.getvalue()


def test_a_worst_case_stops_at_the_step_limit(monkeypatch):
    from sims.core.limits import InputError
    from sims.sorting import trace

    monkeypatch.setattr(trace, "MAX_STEPS", 5000)
    assert replay("quick", list(range(200)), {"pivot": "median3"})["sorted"] == 1  # about 1,500 steps
    with pytest.raises(InputError, match="more than 5,000 steps"):
        replay("quick", list(range(200)), {"pivot": "first"})  # about 20,000


def test_an_empty_file_is_sorted():
    assert replay("timsort", []) == {
        "algorithm": "timsort",
        "n": 0,
        "comparisons": 0,
        "writes": 0,
        "swaps": 0,
        "extra": 0,
        "stable": 1,
        "sorted": 1,
    }
