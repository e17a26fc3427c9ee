"""The calibration fit recovers known constants, and writing a profile edits only its own table."""

from __future__ import annotations

import dataclasses
import random
import tomllib

import pytest

from gpu_backend import calibrate
from sims.engine import cost
from sims.hw import step


def _synthetic_steps(model: cost.CostModel, n: int = 300, seed: int = 0) -> list[calibrate.StepFeatures]:
    rng = random.Random(seed)
    steps = []
    for _ in range(n):
        seqs = [(1, rng.randrange(10, 4000)) for _ in range(rng.randrange(0, 64))]
        if rng.random() < 0.3:
            new = rng.randrange(16, 2048)
            seqs.append((new, new + rng.randrange(0, 500)))
        if not seqs:
            continue
        f = calibrate.features(seqs, 0.0)
        steps.append(dataclasses.replace(f, measured_s=model.step_time(*f.args())))
    return steps


def test_features_match_the_engine_counting():
    f = calibrate.features([(1, 11), (1, 5), (4, 10)], 0.01)
    assert (f.n_decode, f.decode_ctx) == (2, 10 + 4)
    assert (f.prefill_tokens, f.prefill_kv_read, f.prefill_pairs) == (4, 6, 4 * 6 + 10)


def test_fit_recovers_known_step_times():
    """Five constants trade off (GEMM and attention bandwidth both price a decode step), so the
    fit is judged by the step times it predicts on steps it did not see, not by the constants."""
    base = cost.cost_model("H200", "Llama-3-8B")
    truth = base.with_constants(gemm_mfu=0.55, gemm_bw=0.7, attn_bw=0.6, step_overhead_s=0.0021)
    fitted, report = calibrate.fit(base, _synthetic_steps(truth))
    assert report["mean_abs_rel_err_after"] < 0.01 < report["mean_abs_rel_err_before"]
    errs = calibrate.rel_errors(fitted, _synthetic_steps(truth, seed=1))
    assert max(abs(e) for e in errs) < 0.03


def test_fit_needs_steps():
    with pytest.raises(ValueError, match="at least 3"):
        calibrate.fit(cost.cost_model("H200", "Llama-3-8B"), [])


def test_write_profile_touches_only_its_table(tmp_path):
    out = tmp_path / "efficiency.toml"
    calibrate.write_profile({"gemm_bw": 0.7, "gemm_mfu": 0.5, "step_overhead_s": 0.003}, "H200", out)
    calibrate.write_profile({"gemm_bw": 0.8, "gemm_mfu": 0.45, "step_overhead_s": 0.002, "attn_bw": 0.64}, "H200", out)
    text = out.read_text()
    assert sum(line.startswith("[H200]") for line in text.splitlines()) == 1
    original = tomllib.loads(step.EFFICIENCY_PATH.read_text())
    edited = tomllib.loads(text)
    assert edited["H200"] == {"gemm_mfu": 0.45, "gemm_bw": 0.8, "attn_bw": 0.64, "step_overhead_s": 0.002}
    assert {k: v for k, v in edited.items() if k != "H200"} == {k: v for k, v in original.items() if k != "H200"}
    m = cost.cost_model("H200", "Llama-3-8B", consts=step.constants("H200", efficiency=edited))
    assert (m.consts["gemm_bw"], m.consts["gemm_mfu"], m.consts["attn_bw"]) == (0.8, 0.45, 0.64)
    assert (
        cost.cost_model("A100-40GB", "OPT-13B", consts=step.constants("A100-40GB", efficiency=edited)).consts["gemm_bw"]
        == step.load(step.FIT_PATH)["gemm"]["bw"]
    )


def test_write_profile_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="unknown efficiency"):
        calibrate.write_profile({"speed": 1.0}, "H200", tmp_path / "p.toml")
    with pytest.raises(ValueError, match="gpu name"):
        calibrate.write_profile({"gemm_mfu": 0.5}, "H200]\nx", tmp_path / "p.toml")


def test_profile_gpu_name():
    assert calibrate.profile_gpu_name("NVIDIA H200") == "H200"
    assert calibrate.profile_gpu_name("NVIDIA H100 80GB HBM3") == "H100-80GB"
    assert calibrate.profile_gpu_name("cpu (Triton interpreter)") is None
