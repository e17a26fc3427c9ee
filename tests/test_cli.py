"""The CLI contract: run --json, list, trace, bench, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, input=None, entry=("-m", "sims")):
    return subprocess.run(
        [sys.executable, *entry, *args], capture_output=True, text=True, cwd=ROOT, timeout=600, input=input
    )


def test_run_json_contract():
    out = cli("run", "ratelimit-burst", "--json")
    assert out.returncode == 0, out.stderr
    obj = json.loads(out.stdout)
    assert list(obj) == ["preset", "topic", "seed", "duration", "stream_sha256", "panels"]
    assert obj["preset"] == "ratelimit-burst" and obj["topic"] == "ratelimit" and obj["seed"] == 7
    assert obj["duration"] == 30.0 and len(obj["stream_sha256"]) == 64
    for m in obj["panels"].values():
        assert {"requests", "accepted", "rejected", "max_in_any_window"} <= set(m)
    assert out.stderr == ""


def test_run_options_seed_duration_panels_trace_out(tmp_path):
    trace = tmp_path / "s.jsonl"
    out = cli(
        "run",
        "ratelimit-burst",
        "--seed",
        "3",
        "--duration",
        "5",
        "--panels",
        "sliding_log,fixed_window",
        "--json",
        "--trace-out",
        str(trace),
    )
    obj = json.loads(out.stdout)
    assert obj["seed"] == 3 and obj["duration"] == 5.0 and list(obj["panels"]) == ["sliding_log", "fixed_window"]
    import hashlib

    assert hashlib.sha256(trace.read_bytes().rstrip(b"\n")).hexdigest() == obj["stream_sha256"]
    again = cli(
        "run",
        "ratelimit-burst",
        "--duration",
        "5",
        "--panels",
        "sliding_log,fixed_window",
        "--json",
        "--trace-in",
        str(trace),
    )
    assert json.loads(again.stdout)["panels"] == obj["panels"]


def test_run_table_is_readable():
    out = cli("run", "ratelimit-burst", "--duration", "3")
    assert out.returncode == 0
    assert "max_in_any_window" in out.stdout and "fixed_window" in out.stdout


def test_console_script_and_module_agree():
    exe = ROOT / ".venv" / "bin" / "contention"
    if not exe.exists():
        pytest.skip("console script not installed")
    a = subprocess.run([str(exe), "run", "ratelimit-burst", "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(a.stdout) == json.loads(cli("run", "ratelimit-burst", "--json").stdout)


def test_list_json():
    items = json.loads(cli("list", "--json").stdout)
    assert any(i["name"] == "ratelimit-burst" for i in items)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "nope"], "unknown preset 'nope'"),
        (["run", "ratelimit-burst", "--seed", "x"], "--seed: expected an integer seed"),
        (["run", "ratelimit-burst", "--duration", "-5"], "--duration: expected seconds > 0"),
        (["run", "ratelimit-burst", "--panels", "zzz"], "unknown panel 'zzz'"),
        (["run", "ratelimit-burst", "--trace-in", "/nonexistent/x"], "/nonexistent/x"),
        (["bogus"], "invalid choice: 'bogus'"),
        (
            ["trace", "ratelimit", "--policy", "nope", "--rate", "1", "--burst", "1", "--trace", "/dev/null"],
            "unknown ratelimit policy 'nope'",
        ),
        (
            ["trace", "ratelimit", "--policy", "token_bucket", "--limit", "3", "--window", "1", "--trace", "/dev/null"],
            "needs --rate and --burst",
        ),
        (["bench", "nope"], "unknown preset 'nope'"),
        ([], "required"),
    ],
)
def test_errors_are_one_line_exit_2(args, needle):
    out = cli(*args)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert needle in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr


def test_trace_ratelimit_semantics(tmp_path):
    f = tmp_path / "arrivals.txt"
    f.write_text("0\n0\n0\n0\n0.25\n0.5\n0.5\n2.0\n2.0\n2.0\n2.0\n")
    out = cli(
        "trace", "ratelimit", "--policy", "token_bucket", "--rate", "2", "--burst", "3", "--trace", str(f), "--json"
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"policy": "token_bucket", "accepted": [0, 1, 2, 5, 7, 8, 9], "accepted_count": 7}
    out = cli(
        "trace", "ratelimit", "--policy", "sliding_log", "--limit", "2", "--window", "1", "--trace", str(f), "--json"
    )
    assert json.loads(out.stdout)["accepted"] == [0, 1, 7, 8]
    out = cli(
        "trace", "ratelimit", "--policy", "fixed_window", "--limit", "2", "--window", "1", "--trace", str(f), "--json"
    )
    assert json.loads(out.stdout)["accepted"] == [0, 1, 7, 8]


def test_trace_malformed_line_names_file_and_line(tmp_path):
    f = tmp_path / "bad.txt"
    f.write_text("0.1\n0.2\nsoon\n")
    out = cli("trace", "ratelimit", "--policy", "token_bucket", "--rate", "2", "--burst", "3", "--trace", str(f))
    assert out.returncode == 2 and f"{f}:3:" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    f.write_text("1.0\n0.5\n")
    out = cli("trace", "ratelimit", "--policy", "token_bucket", "--rate", "2", "--burst", "3", "--trace", str(f))
    assert out.returncode == 2 and f"{f}:2:" in out.stderr


def test_bench_json_reports_throughput():
    out = cli("bench", "ratelimit-burst", "--runs", "1", "--json")
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    e = rep["presets"]["ratelimit-burst"]
    assert e["events"] > 0 and e["events_per_s"] > 0 and e["virtual_s_per_wall_s"] > 0
    assert set(e["panels"]) == {"fixed_window", "sliding_log", "sliding_counter", "token_bucket", "leaky_bucket"}


def test_progress_bar_only_on_a_terminal():
    import io

    from contention_harness import Progress

    buf = io.StringIO()
    real = sys.stderr
    sys.stderr = buf
    try:
        p = Progress("x", enabled=True)
        p.start -= 2.0  # pretend the run has taken 2 s
        p.update(0.5)
        p.close()
        q = Progress("y", enabled=False)
        q.update(0.5)
    finally:
        sys.stderr = real
    assert "50.0%" in buf.getvalue() and "y" not in buf.getvalue()
