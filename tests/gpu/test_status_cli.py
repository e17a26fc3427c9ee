"""status() without CUDA (and without torch), and ``contention gpu`` bad input -> exit 2, one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gpu_backend
from gpu_backend import cli

ROOT = Path(__file__).resolve().parents[2]


def test_status_without_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    st = gpu_backend.status()
    assert st == {"available": False, "device": None, "reason": st["reason"]}
    assert "CUDA" in st["reason"]


def test_package_imports_and_reports_without_torch():
    code = "import sys; sys.modules['torch'] = None\nimport gpu_backend, json; print(json.dumps(gpu_backend.status()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    st = json.loads(out.stdout)
    assert st["available"] is False and "torch" in st["reason"]


@pytest.mark.parametrize(
    "argv, needle",
    [
        ([], "required"),
        (["frobnicate"], "invalid choice"),
        (["replay"], "required"),
        (["bench", "--batches", "x,2"], "comma-separated integers"),
        (["bench", "--contexts", "0"], "positive"),
        (["replay", "kv-fragmentation", "--max-steps", "-1", "--device", "cpu"], "--max-steps"),
        (["replay", "no-such-preset", "--device", "cpu"], "no-such-preset"),
        (["replay", "cache-scan", "--device", "cpu", "--shape", "tiny"], "engine preset"),
        (["replay", "kv-fragmentation", "--device", "cpu", "--shape", "gpt-9"], "unknown model shape"),
        (["calibrate", "--device", "cpu"], "give presets"),
        (["calibrate", "--from", "/nonexistent/replay.json"], "file not found"),
    ],
)
def test_bad_input_exits_2_with_one_line(argv, needle, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA path")
@pytest.mark.parametrize("argv", [["status"], ["bench"], ["replay", "kv-fragmentation"]])
def test_gpu_only_commands_fail_clearly_without_cuda(argv, capsys):
    assert cli.main(argv) == 1
    cap = capsys.readouterr()
    assert "CUDA" in cap.err + cap.out
    assert cap.err.count("\n") <= 1


def test_contention_cli_dispatches_to_gpu():
    out = subprocess.run(
        [sys.executable, "-m", "sims", "gpu", "bench", "--batches", "nope"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "--batches" in out.stderr


def test_calibrate_from_a_replay_file_writes_a_profile_copy(tmp_path, capsys):
    from gpu_backend import replay

    run = replay.run(
        "kv-fragmentation",
        duration=5.0,
        panel="paged",
        device="cuda" if torch.cuda.is_available() else "cpu",
        shape="tiny",
        dtype="fp32",
        max_steps=5,
        keep_steps=True,
    )
    f = tmp_path / "replay.json"
    f.write_text(json.dumps(run))
    out = tmp_path / "efficiency.toml"
    rc = cli.main(
        [
            "calibrate",
            "--from",
            str(f),
            "--gpu-name",
            "H200",
            "--model-name",
            "Llama-3-8B",
            "--profile-out",
            str(out),
            "--json",
        ]
    )
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["written"] == str(out) and "[H200]" in out.read_text()
