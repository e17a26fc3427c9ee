"""The hardware library's command line: ``contention step`` (the JSON contract the outside check
reads, the same function as the engine's step time, bad input as one line with exit 2), and a
model given as a config.json path in a preset (``run``) and in ``plan --model``."""

from __future__ import annotations

import json
import shutil

import pytest

from sims import cli
from sims.engine.cost import cost_model

ROOT_MODELS = "sims/hw/models"


def step(capsys, *args: str) -> tuple[int, str, str]:
    rc = cli.main(["step", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def step_json(capsys, *args: str) -> dict:
    rc, out, err = step(capsys, *args, "--json")
    assert rc == 0 and err == "", err
    return json.loads(out)


def test_json_contract_and_the_engines_own_step_time(capsys):
    obj = step_json(capsys, "--gpu", "H100-80GB", "--model", "Llama-3-70B", "--tp", "4", "--tokens", "32",
                    "--context", "32000", "--decode")  # fmt: skip
    assert list(obj) == ["gpu", "model", "tp", "tokens", "context", "seconds", "parts"]
    assert list(obj["parts"]) == ["linear", "attention", "communication", "overhead"]
    assert (obj["gpu"], obj["model"], obj["tp"], obj["tokens"], obj["context"]) == (
        "H100-80GB",
        "Llama-3-70B",
        4,
        32,
        32000,
    )
    p = obj["parts"]
    assert min(p.values()) > 0
    assert obj["seconds"] == p["linear"] + p["communication"] + p["overhead"] + p["attention"]
    engine = cost_model("H100-80GB", "Llama-3-70B", 4)
    assert obj["seconds"] == engine.step_time(0, 0, 0, 32, 32000)  # the engine's decode step, bit for bit
    pre = step_json(capsys, "--gpu", "A100-80GB", "--model", "Llama-3-8B", "--tokens", "512", "--context", "1024")
    assert pre["tp"] == 1 and pre["parts"]["communication"] == 0.0  # the model's default TP
    n, c = 512, 1024
    assert pre["seconds"] == cost_model("A100-80GB", "Llama-3-8B").step_time(n, n * c + n * (n + 1) // 2, c, 0, 0)


def test_text_output_names_the_fit_and_says_attention_is_modelled(capsys):
    rc, out, _ = step(capsys, "--gpu", "H200", "--model", "Qwen3-32B", "--tokens", "2048")
    assert rc == 0 and "Qwen3-32B on 2x H200" in out
    assert "median" in out and "p90" in out and "not measured" in out


def test_a_config_json_path_is_the_same_model_and_dtypes_override_it(capsys, tmp_path):
    folder = tmp_path / "my-mixtral"
    folder.mkdir()
    shutil.copy(f"{ROOT_MODELS}/Mixtral-8x7B.json", folder / "config.json")
    args = ("--gpu", "H100-80GB", "--tp", "2", "--tokens", "16", "--context", "16000", "--decode")
    by_name = step_json(capsys, "--model", "Mixtral-8x7B", *args)
    by_path = step_json(capsys, "--model", str(folder / "config.json"), *args)
    assert by_path["model"] == "my-mixtral" and by_path["seconds"] == by_name["seconds"]
    fp8 = step_json(capsys, "--model", "Mixtral-8x7B", "--kv-dtype", "fp8", "--dtype", "fp8", *args)
    assert fp8["parts"]["attention"] < by_name["parts"]["attention"]  # half the KV bytes to read
    assert fp8["parts"]["linear"] < 0.7 * by_name["parts"]["linear"]  # half the weight bytes


@pytest.mark.parametrize(
    "args,needle",
    [
        (("--gpu", "V100", "--model", "Llama-3-8B", "--tokens", "8"), "unknown gpu 'V100'"),
        (("--gpu", "H200", "--model", "Llama-9", "--tokens", "8"), "unknown model 'Llama-9'"),
        (("--gpu", "H200", "--model", "Llama-3-8B", "--tp", "3", "--tokens", "8"), "tp 3"),
        (("--gpu", "H200", "--model", "Llama-3-8B", "--tokens", "0"), "--tokens"),
        (("--gpu", "H200", "--model", "Llama-3-8B", "--tokens", "-4"), "--tokens"),
        (("--gpu", "H200", "--model", "Llama-3-8B", "--tokens", "8", "--context", "1e3"), "--context"),
        (("--gpu", "H200", "--model", "/nonexistent/config.json", "--tokens", "8"), "cannot read"),
        (("--gpu", "H200", "--tokens", "8"), "--model"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args, needle):
    rc, out, err = step(capsys, *args)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and needle in err, err


def test_a_broken_config_names_its_field(capsys, tmp_path):
    cfg = json.loads(open(f"{ROOT_MODELS}/Llama-3-8B.json").read())
    del cfg["vocab_size"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    rc, _, err = step(capsys, "--gpu", "H200", "--model", str(tmp_path / "config.json"), "--tokens", "8")
    assert rc == 2 and "'vocab_size' is missing" in err
    (tmp_path / "config.json").write_text("{not json")
    rc, _, err = step(capsys, "--gpu", "H200", "--model", str(tmp_path / "config.json"), "--tokens", "8")
    assert rc == 2 and "not JSON" in err and len(err.strip().splitlines()) == 1


PRESET = """
name = "NAME"
topic = "engine"
title = "a model from a config.json"
watch_for = "-"
seed = 7
duration = 10.0
[workload]
kind = "llm"
rate = 2.0
[defaults]
gpu = "H100-80GB"
[[panels]]
name = "mine"
policy = "engine"
model = MODEL
"""


def _config(tmp_path, **fields) -> str:
    cfg = json.loads(open(f"{ROOT_MODELS}/Llama-3-8B.json").read()) | fields
    folder = tmp_path / "half-llama"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(cfg))
    return str(folder / "config.json")


def test_a_preset_runs_a_model_from_a_path_or_a_table(capsys, tmp_path):
    path = _config(tmp_path, num_hidden_layers=16)
    results = {}
    for name, model in (("by-path", json.dumps(path)), ("by-table", '{ config = "Llama-3-8B", num_hidden_layers = 16 }'),
                        ("full", '"Llama-3-8B"')):  # fmt: skip
        f = tmp_path / f"{name}.toml"
        f.write_text(PRESET.replace("NAME", name).replace("MODEL", model))
        assert cli.main(["run", str(f), "--json"]) == 0
        results[name] = json.loads(capsys.readouterr().out)["panels"]["mine"]
    assert results["by-path"] == results["by-table"]  # the same 16-layer model, read two ways
    assert results["by-path"]["tpot_p50"] < 0.75 * results["full"]["tpot_p50"]  # half the layers
    bad = tmp_path / "bad.toml"
    bad.write_text(PRESET.replace("NAME", "bad").replace("MODEL", json.dumps(str(tmp_path / "none.json"))))
    assert cli.main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.toml" in err and "panel 'mine': model: cannot read" in err and len(err.strip().splitlines()) == 1


def test_plan_takes_a_model(capsys, tmp_path, monkeypatch):
    f = tmp_path / "plan-me.toml"
    f.write_text(PRESET.replace("NAME", "plan-me").replace("MODEL", '"OPT-13B"'))
    args = ["plan", str(f), "--vary", "workload.rate=1:2", "--target", "ttft_p90<10", "--seeds", "2", "--panel", "mine",
            "--workers", "1", "--json"]  # fmt: skip
    path = _config(tmp_path, num_hidden_layers=16)
    monkeypatch.chdir(tmp_path)  # a relative path, made absolute for the worker processes
    assert cli.main([*args, "--model", "half-llama/config.json"]) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["feasible"]
    from sweep.cli import load_preset, with_model

    assert [p.params["model"] for p in with_model(load_preset(str(f)), "half-llama/config.json").panels] == [path]
    assert cli.main([*args, "--model", "Llama-9"]) == 2
    assert "unknown model 'Llama-9'" in capsys.readouterr().err
    assert (
        cli.main(["plan", "cache-scan", "--vary", "defaults.size=1:2", "--panel", "lru", "--model", "Llama-3-8B"]) == 2
    )
    assert "has panels without a model" in capsys.readouterr().err
