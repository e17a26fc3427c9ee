"""The calibration fit recovers known constants, and writing a profile edits only its own table."""

from __future__ import annotations

import dataclasses
import random
import tomllib

import pytest

from gpu_backend import calibrate
from sims.engine import cost


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


def test_fit_recovers_known_constants():
    base = cost.cost_model("H200", "Llama-3-8B")
    truth = dataclasses.replace(
        base, prefill_mfu=0.41, mfu_half_tokens=32.0, decode_bw_eff=0.62, step_overhead_s=0.0021
    )
    steps = _synthetic_steps(truth)
    memory_bound = [s for s in steps if calibrate._parts(truth, s)[1] / 0.62 > calibrate._parts(truth, s)[0] / 0.41]
    assert 20 < len(memory_bound) < len(steps)  # both sides of the roofline are exercised
    fitted, report = calibrate.fit(base, steps)
    assert report["mean_abs_rel_err_after"] < 0.01 < report["mean_abs_rel_err_before"]
    assert fitted.mfu_half_tokens == pytest.approx(32.0, rel=0.15)
    assert fitted.decode_bw_eff == pytest.approx(0.62, rel=0.03)
    assert fitted.prefill_mfu == pytest.approx(0.41, rel=0.05)
    assert fitted.step_overhead_s == pytest.approx(0.0021, rel=0.1)


def test_fit_needs_steps():
    with pytest.raises(ValueError, match="at least 3"):
        calibrate.fit(cost.cost_model("H200", "Llama-3-8B"), [])


def test_write_profile_touches_only_its_table(tmp_path):
    out = tmp_path / "profiles.toml"
    calibrate.write_profile({"decode_bw_eff": 0.7, "prefill_mfu": 0.5, "step_overhead_s": 0.003}, "H200", out)
    calibrate.write_profile(
        {"decode_bw_eff": 0.8, "prefill_mfu": 0.45, "step_overhead_s": 0.002, "mfu_half_tokens": 64.0}, "H200", out
    )
    text = out.read_text()
    assert sum(line.startswith("[efficiency.H200]") for line in text.splitlines()) == 1
    original = tomllib.loads(cost.PROFILES_PATH.read_text())
    edited = tomllib.loads(text)
    assert edited["efficiency"]["H200"] == {
        "prefill_mfu": 0.45,
        "mfu_half_tokens": 64.0,
        "decode_bw_eff": 0.8,
        "step_overhead_s": 0.002,
    }
    assert edited["gpus"] == original["gpus"] and edited["models"] == original["models"]
    m = cost.cost_model("H200", "Llama-3-8B", profiles=edited)
    assert (m.decode_bw_eff, m.prefill_mfu, m.mfu_half_tokens) == (0.8, 0.45, 64.0)
    assert (
        cost.cost_model("A100-40GB", "OPT-13B", profiles=edited).decode_bw_eff
        == original["efficiency"]["decode_bw_eff"]
    )


def test_write_profile_rejects_bad_input(tmp_path):
    with pytest.raises(ValueError, match="unknown efficiency"):
        calibrate.write_profile({"speed": 1.0}, "H200", tmp_path / "p.toml")
    with pytest.raises(ValueError, match="gpu name"):
        calibrate.write_profile({"prefill_mfu": 0.5}, "H200]\nx", tmp_path / "p.toml")


def test_profile_gpu_name():
    assert calibrate.profile_gpu_name("NVIDIA H200") == "H200"
    assert calibrate.profile_gpu_name("NVIDIA H100 80GB HBM3") == "H100-80GB"
    assert calibrate.profile_gpu_name("cpu (Triton interpreter)") is None
