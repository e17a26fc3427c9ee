"""The CLI tells the user's mistakes from our own bugs.

A ``sims.core.limits.InputError`` (a bad flag, preset, trace, policy file) is one line and exit
status 2; any other exception is a bug of ours and shows its traceback, exit status 1. A flag that
takes one value may be given once; a policy file that is not text names itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sims import cli as cli_mod
from sims.cli.args import UsageError
from sims.core.limits import InputError
from sims.core.presets import PresetError
from sims.core.trace import TraceError
from sims.core.userpolicy import PolicyError

ROOT = Path(__file__).resolve().parents[1]


def python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def refused(capsys, *args: str) -> str:
    rc = cli_mod.main(list(args))
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_every_refusal_class_is_an_input_error():
    for cls in (UsageError, PresetError, TraceError, PolicyError):
        assert issubclass(cls, InputError) and issubclass(cls, ValueError)


@pytest.mark.parametrize(
    "bug",
    ["[].remove(1)", "{}['missing']", "int('x')", "1 / 0"],
    ids=["ValueError", "KeyError", "int", "ZeroDivisionError"],
)
def test_a_bug_in_a_command_shows_its_traceback_and_exits_1(bug):
    """A ValueError of ours (``list.remove`` of a missing item) is no longer shown as bad input."""
    out = python(
        "import sys\n"
        "from sims.cli import run, main\n"
        "def broken(args):\n"
        f"    {bug}\n"
        "run.cmd_list = broken\n"
        "sys.exit(main(['list']))\n"
    )
    assert out.returncode == 1, out.stderr
    assert "Traceback (most recent call last)" in out.stderr and "in broken" in out.stderr
    assert "error:" not in out.stderr


def test_input_errors_raised_in_a_command_stay_one_line(monkeypatch, capsys):
    from sims.cli import run

    def refuses(args):
        raise InputError("workload.rate: expected <= 1e+06, got 1e+09")

    monkeypatch.setattr(run, "cmd_list", refuses)
    assert refused(capsys, "list") == "error: workload.rate: expected <= 1e+06, got 1e+09\n"


@pytest.mark.parametrize(
    "args, flag",
    [
        (["run", "cache-scan", "--seed", "1", "--seed", "2"], "--seed"),
        (["run", "cache-scan", "--seed=1", "--seed=1"], "--seed"),
        (["run", "cache-scan", "--duration", "5", "--duration", "6"], "--duration"),
        (["run", "cache-scan", "--panels", "lru", "--panels", "arc"], "--panels"),
        (["run", "cache-scan", "--trace-format", "keys", "--trace-format", "pages"], "--trace-format"),
        (["diff", "cache-scan", "--panels", "lru,arc", "--limit", "1", "--limit", "2"], "--limit"),
        (["trace", "cache", "--policy", "lru", "--policy", "arc", "--size", "3", "--trace", "x"], "--policy"),
        (["trace", "cache", "--policy", "lru", "--size", "3", "--size", "4", "--trace", "x"], "--size"),
    ],
)
def test_a_single_valued_flag_given_twice_is_refused(capsys, args, flag):
    err = refused(capsys, *args)
    assert f"argument {flag}: given twice" in err


def test_the_last_of_two_seeds_no_longer_wins_silently(capsys):
    err = refused(capsys, "run", "cache-scan", "--seed", "1", "--seed", "2", "--duration", "1")
    assert "(1, then 2)" in err


def test_switches_and_repeatable_flags_still_repeat(capsys):
    assert cli_mod.main(["run", "ratelimit-burst", "--json", "--json", "--duration", "1"]) == 0
    capsys.readouterr()


def test_a_binary_policy_file_names_the_file(tmp_path, capsys):
    f = tmp_path / "policy.py"
    f.write_bytes(b"\xff\xfe\x00\x01 binary")
    err = refused(capsys, "run", "cache-scan", "--duration", "1", "--policy-file", str(f))
    assert err.startswith(f"error: {f}: not UTF-8 text") and "codec" not in err


def test_a_huge_policy_file_is_refused_unread(tmp_path, capsys):
    f = tmp_path / "policy.py"
    f.write_text("#" * 300_000 + "\n")
    err = refused(capsys, "run", "cache-scan", "--duration", "1", "--policy-file", str(f))
    assert f"{f}: over 200,000 characters" in err


def test_a_constructor_refusing_trace_flags_is_one_line(tmp_path, capsys):
    t = tmp_path / "a.txt"
    t.write_text("a x 10\n")
    err = refused(
        capsys, "trace", "alloc", "--policy", "paged", "--heap", "100", "--page-size", "1000", "--trace", str(t)
    )
    assert "multiple of page_size" in err
