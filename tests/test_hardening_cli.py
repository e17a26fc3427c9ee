"""The CLI contract: bad input exits 2 with one line naming the problem, never a
traceback; what should be refused is refused; SIGTERM during --trace-out leaves no ``.part``.

Most cases call ``sims.cli.main`` in-process (fast); the ones about the process itself (stdout
on a full disk, a port in use, signals) run ``python -m sims``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sims import cli as cli_mod
from sims.cli import output as cli_output
from sims.cli import run as cli_run
from sims.core import limits, stream

ROOT = Path(__file__).resolve().parents[1]
NUL = "/dev/null"


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    rc = cli_mod.main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def refused(capsys, *args: str, needle: str = "") -> str:
    rc, _, err = run_main(capsys, *args)
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert needle in err, err
    return err


def proc(*args: str, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "sims", *args], capture_output=True, text=True, env=env, **kw)


# -- accepted when they should be refused -------------------------------------------------------
@pytest.mark.parametrize("value", ["inf", "1e308", "nan", "-5", "0", "86401"])
def test_duration_is_bounded(capsys, value):
    refused(capsys, "run", "cache-scan", "--duration", value, needle="--duration")


def test_duration_limit_is_the_documented_one(capsys):
    assert limits.MAX_DURATION == 86_400.0
    refused(capsys, "run", "cache-scan", "--duration", str(limits.MAX_DURATION + 1), needle="86400")


@pytest.mark.parametrize("value", ["-1", "1e38", str(2**53), str(2**53 + 1), "٣", "1_000", " 7", "+7", "x", "9" * 5000])
def test_seeds_the_api_refuses_are_refused(capsys, value):
    err = refused(capsys, "run", "ratelimit-burst", "--seed", value, needle="--seed")
    assert len(err) < 200  # the 5,000-digit seed is not echoed whole


@pytest.mark.parametrize("value", [0, 7, 2**53 - 1])
def test_seed_rule_is_shared(value):
    """One rule for the CLI (text) and the API (JSON): the same bounds, in sims.core.limits."""
    assert limits.parse_seed(str(value)) == limits.check_seed(value) == value


@pytest.mark.parametrize("value", [-1, 2**53, 1.5, True, "7", None])
def test_check_seed_refuses(value):
    with pytest.raises(ValueError):
        limits.check_seed(value)


def test_duplicate_panels_are_refused(capsys):
    refused(capsys, "run", "cache-scan", "--panels", "lru,lru", needle="twice")


def test_empty_trace_out_is_refused(capsys):
    refused(capsys, "run", "cache-scan", "--trace-out", "", needle="--trace-out")


@pytest.mark.parametrize(
    "flags, flag",
    [
        (["--policy", "token_bucket", "--rate", "nan", "--burst", "1"], "--rate"),
        (["--policy", "token_bucket", "--rate", "inf", "--burst", "1"], "--rate"),
        (["--policy", "token_bucket", "--rate", "1", "--burst", "-inf"], "--burst"),
        (["--policy", "token_bucket", "--rate", "1", "--burst", "0"], "--burst"),
        (["--policy", "fixed_window", "--limit", "3", "--window", "nan"], "--window"),
        (["--policy", "fixed_window", "--limit", "0", "--window", "1"], "--limit"),
    ],
)
def test_trace_ratelimit_refuses_non_finite_flags(capsys, tmp_path, flags, flag):
    f = tmp_path / "t.txt"
    f.write_text("0.1\n0.2\n")
    refused(capsys, "trace", "ratelimit", *flags, "--trace", str(f), needle=f"argument {flag}")


@pytest.mark.parametrize("flag", ["--align", "--page-size", "--slab-size"])
@pytest.mark.parametrize("value", ["0", "-16"])
def test_trace_alloc_refuses_zero_sizes(capsys, tmp_path, flag, value):
    f = tmp_path / "t.txt"
    f.write_text("a 1 10\nf 1\n")
    refused(
        capsys, "trace", "alloc", "--policy", "first_fit", "--heap", "1024", flag, value, "--trace", str(f), needle=flag
    )


@pytest.mark.parametrize("port", ["70000", "-1", "0", "65536", "http", "9" * 5000])
def test_serve_port_range(capsys, port):
    err = refused(capsys, "serve", "--port", port, needle="--port")
    assert len(err) < 200


@pytest.mark.parametrize("host", ["256.1.1.1", "1.2.3", "bad host", "-x", ""])
def test_serve_host_is_an_address(capsys, host):
    refused(capsys, "serve", "--host", host, needle="--host")


def test_serve_port_in_use_is_one_line_before_any_worker():
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = proc("serve", "--port", str(port), "--dist", "/nonexistent-dist", timeout=60)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert f"127.0.0.1:{port}" in out.stderr and "in use" in out.stderr


# -- tracebacks seen ----------------------------------------------------------------------------
def test_trace_out_into_a_directory(capsys, tmp_path):
    refused(capsys, "run", "cache-scan", "--duration", "1", "--trace-out", str(tmp_path), needle="is a directory")


def test_trace_out_into_a_missing_folder_names_the_file_not_the_part(capsys):
    err = refused(
        capsys, "run", "cache-scan", "--duration", "1", "--trace-out", "/nonexistent/x", needle="/nonexistent/x"
    )
    assert ".part" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_trace_out_into_a_read_only_folder(capsys, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        err = refused(
            capsys, "run", "cache-scan", "--duration", "1", "--trace-out", str(ro / "x"), needle="cannot write"
        )
        assert str(ro / "x") in err and ".part" not in err
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_trace_out_onto_a_full_disk(capsys):
    # a folder on a full disk cannot be made here: the write fails with ENOSPC instead
    def events():
        yield {"t": 0.0, "kind": "ref", "key": 1}
        raise OSError(28, "No space left on device")

    with pytest.raises(cli_mod.UsageError, match="No space left"):
        cli_run.write_trace(events(), "/tmp/contention-full-test.jsonl")
    assert not Path("/tmp/contention-full-test.jsonl.part").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["run", "cache-scan", "--duration", "1"], ["list", "--json"]])
def test_stdout_on_a_full_disk(args):
    with open("/dev/full", "w") as full:
        out = subprocess.run(
            [sys.executable, "-m", "sims", *args],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            timeout=120,
        )
    assert out.returncode == 2
    assert out.stderr.strip() == "error: standard output: No space left on device", out.stderr


def test_build_out_file(capsys, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    refused(capsys, "build", "--out", str(f), needle="is a file")


def test_serve_dist_file(capsys, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    refused(capsys, "serve", "--dist", str(f), "--port", "1", needle="is a file")


def test_sigterm_during_trace_out_removes_the_part(tmp_path):
    target = tmp_path / "x.jsonl"

    def events():
        for i in range(1000):
            if i == 500:
                os.kill(os.getpid(), signal.SIGTERM)  # arrives while the file is half written
            yield {"t": float(i), "kind": "ref", "key": i}

    with pytest.raises(cli_mod.Terminated):
        cli_run.write_trace(events(), str(target))
    assert not target.exists() and not (tmp_path / "x.jsonl.part").exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is put back


@pytest.mark.slow
def test_sigterm_of_the_process_during_trace_out(tmp_path):
    """The whole process: SIGTERM while it writes a long trace; exit 143, no x.part left."""
    target = tmp_path / "x.jsonl"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sims",
            "run",
            "cache-scan",
            "--duration",
            "2000",  # the longest cache-scan run within the stream budget is about 2,200 s
            "--panels",
            "lru",
            "--trace-out",
            str(target),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    part = tmp_path / "x.jsonl.part"
    import time

    deadline = time.monotonic() + 300
    while not part.exists() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert part.exists(), "the run ended before its trace was being written"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert err.strip() == "terminated"
    assert not part.exists() and not target.exists()


# -- --trace-in ---------------------------------------------------------------------------------
def _trace(tmp_path, text: str | bytes) -> str:
    f = tmp_path / "in.jsonl"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(f)


@pytest.mark.parametrize(
    "text, needle",
    [
        ('{"t":0,"kind":"ref","key":' + "[" * 100_000 + "]" * 100_000 + "}\n", ":1: JSON nested too deeply"),
        ('{"t":0.5,"kind":"ref"}\n', ":1: field 'key': missing"),
        ('{"t":0.5,"kind":"ref","key":[1]}\n', ":1: field 'key': expected a number"),
        ('{"t":0.5,"kind":"ref","key":{"a":1}}\n', ":1: field 'key': expected a number"),
        ("", ": no events"),
        ("\n\n", ": no events"),
        ('{"t":Infinity,"kind":"ref","key":1}\n', ":1: field 't': expected a finite number"),
        ('{"t":NaN,"kind":"ref","key":1}\n', ":1: field 't': expected a finite number"),
        ('{"t":1e308,"kind":"ref","key":1}\n', ":1: field 't': expected seconds in [0, 86400]"),
        ('{"t":-1,"kind":"ref","key":1}\n', ":1: field 't': expected seconds in [0, 86400]"),
        ('{"t":1,"kind":"ref","key":1}\n{"t":0.5,"kind":"ref","key":1}\n', ":2: time 0.5 goes backwards"),
        ('{"t":1,"kind":"zap","key":1}\n', ":1: field 'kind': expected one of ref, scan"),
        ('{"t":1,"kind":"alloc","id":1,"size":8}\n', ":1: field 'kind': expected one of ref, scan"),
        ('{"t":1,"kind":"ref","key":' + "9" * 5000 + "}\n", ":1: field 'key': an integer of 5000 digits"),
        ('{"t":1,"kind":"ref","key":1,"x":NaN}\n', ":1: field 'x': expected a finite number"),
        ("[1, 2]\n", ":1: expected a JSON object"),
        ("not json\n", ":1: not a JSON object"),
        (b"\xff\xfe\x00binary", ":1: not UTF-8 text"),
        ('{"t":1,"kind":"ref","key":1}\n' + "x" * (2 << 20) + "\n", ":2: line longer than"),
    ],
)
def test_trace_in_refusals(capsys, tmp_path, text, needle):
    path = _trace(tmp_path, text)
    err = refused(capsys, "run", "cache-scan", "--trace-in", path, needle=path + needle)
    assert len(err) < 400


def test_trace_in_of_another_topic_is_refused(capsys, tmp_path):
    other = tmp_path / "alloc.jsonl"
    assert cli_mod.main(["run", "alloc-shred", "--duration", "1", "--trace-out", str(other)]) == 0
    capsys.readouterr()
    refused(capsys, "run", "cache-scan", "--trace-in", str(other), needle="field 'kind': expected one of ref, scan")


def test_trace_in_round_trip(capsys, tmp_path):
    f = tmp_path / "s.jsonl"
    rc, out, _ = run_main(capsys, "run", "cache-scan", "--json", "--trace-out", str(f))
    assert rc == 0
    rc, again, _ = run_main(capsys, "run", "cache-scan", "--json", "--trace-in", str(f))
    assert rc == 0 and json.loads(again) == json.loads(out)


def test_trace_in_missing_file(capsys):
    refused(capsys, "run", "cache-scan", "--trace-in", "/nonexistent/x", needle="/nonexistent/x: cannot read")


def test_trace_in_directory(capsys, tmp_path):
    refused(capsys, "run", "cache-scan", "--trace-in", str(tmp_path), needle="cannot read")


# -- messages name the file, the line and the field ---------------------------------------------
def test_binary_preset_file_names_the_file(capsys, tmp_path):
    f = tmp_path / "bin.toml"
    f.write_bytes(b'name = "bin"\n\xff\xfe\n')
    refused(capsys, "run", str(f), needle=f"{f}:2: not UTF-8 text")


def test_preset_nested_5000_levels(capsys, tmp_path):
    f = tmp_path / "deep.toml"
    f.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    refused(capsys, "run", str(f), needle=f"{f}: not valid TOML: nested too deeply")


def test_window_nan_names_the_flag(capsys, tmp_path):
    f = _trace(tmp_path, "0.1\n")
    refused(
        capsys,
        "trace",
        "ratelimit",
        "--policy",
        "fixed_window",
        "--limit",
        "1",
        "--window",
        "nan",
        "--trace",
        f,
        needle="--window",
    )


def test_workload_error_names_the_field(capsys, tmp_path):
    """hot_n = 0 once said "zipf n"; now it names workload.hot_n, at load."""
    src = (ROOT / "sims" / "presets" / "cache-scan.toml").read_text()
    f = tmp_path / "cache-scan.toml"
    f.write_text(src.replace("hot_n = 95", "hot_n = 0"))
    refused(capsys, "run", str(f), needle="workload.hot_n: expected >= 1")


def test_over_long_error_lines_are_capped(capsys):
    err = refused(capsys, "run", "x" * 100_000, needle="unknown preset")
    assert len(err) <= cli_mod.MAX_MESSAGE + 10


def test_no_traceback_for_any_case_here_via_the_process():
    """A spot check that the process, not only main(), keeps the contract."""
    out = proc("run", "cache-scan", "--trace-in", "/dev/zero", timeout=60)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert "/dev/zero:1: line longer than" in out.stderr


# -- the shared stream bound --------------------------------------------------------------------
def test_a_stream_past_the_event_bound_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(stream, "MAX_STREAM_EVENTS", 1000)
    refused(capsys, "run", "cache-scan", "--duration", "5", needle="the stream passes 1000 events")


def test_user_preset_file_runs(capsys, tmp_path):
    f = tmp_path / "cache-scan.toml"
    f.write_text((ROOT / "sims" / "presets" / "cache-scan.toml").read_text())
    rc, out, _ = run_main(capsys, "run", str(f), "--json", "--duration", "5")
    rc2, out2, _ = run_main(capsys, "run", "cache-scan", "--json", "--duration", "5")
    assert rc == rc2 == 0 and json.loads(out) == json.loads(out2)


def test_user_preset_file_name_must_match(capsys, tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text((ROOT / "sims" / "presets" / "cache-scan.toml").read_text())
    refused(capsys, "run", str(f), needle="must equal the file name 'mine'")


def test_progress_bar_skipped_without_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(cli_output, "harness", lambda: pytest.fail("harness asked for without a terminal"))
    rc, out, err = run_main(capsys, "run", "ratelimit-burst", "--json")
    assert rc == 0 and err == ""


def test_cli_runs_without_the_harness(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "contention_harness", None)  # import fails as if absent
    monkeypatch.setattr(cli_output, "interactive", lambda: True)
    assert cli_output.harness() is None
    rc, out, _ = run_main(capsys, "run", "ratelimit-burst", "--json")
    assert rc == 0 and json.loads(out)["preset"] == "ratelimit-burst"
    refused(capsys, "bench", "ratelimit-burst", needle="needs the wall-clock harness")


@pytest.mark.parametrize("text", ["0", "7", "0007", str(2**53 - 1), "0" * 19 + "1"])
def test_seed_text_the_api_accepts_is_accepted(text):
    """The API's query rule (ASCII digits, at most 20, then 0..2^53-1) is the CLI's."""
    assert limits.parse_seed(text) == int(text)


@pytest.mark.parametrize("text", ["0" * 20 + "1", str(2**53), "-0", "1.0", "1e3", ""])
def test_seed_text_the_api_refuses_is_refused(text):
    with pytest.raises(ValueError):
        limits.parse_seed(text)


SEED_TEXTS = ["0", "7", "0007", str(2**53 - 1), str(2**53), "-1", "1e38", "٣", "1_000", " 7", "+7", "x", "", "9" * 21]


def test_cli_and_api_accept_the_same_seeds():
    pytest.importorskip("starlette")
    from web.server.api import validate
    from web.server.api.errors import ApiError

    for text in SEED_TEXTS:
        try:
            api = validate.query_seed(text)
        except ApiError:
            api = None
        try:
            mine = limits.parse_seed(text)
        except ValueError:
            mine = None
        assert api == mine, text


def test_trace_out_to_a_device_writes_in_place_and_never_replaces_it(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    out = proc("run", "ratelimit-burst", "--duration", "1", "--trace-out", str(fifo), timeout=120)
    got = reader.communicate(timeout=60)[0]
    assert out.returncode == 0, out.stderr
    assert got.startswith('{"id":0,"kind":"request"') and fifo.is_fifo()
    assert not (tmp_path / "fifo.part").exists()


def test_trace_out_that_cannot_be_created_names_the_file_even_as_root(capsys, tmp_path):
    """Root writes into read-only folders, so an unwritable temp file is made here by putting a
    folder where x.part would go: the error names x, and the folder is left alone."""
    (tmp_path / "x.part").mkdir()
    err = refused(capsys, "run", "ratelimit-burst", "--duration", "1", "--trace-out", str(tmp_path / "x"))
    assert f"cannot write '{tmp_path / 'x'}'" in err and "x.part" not in err
    assert (tmp_path / "x.part").is_dir() and not (tmp_path / "x").exists()
