"""The step-time model against the measurements it was fitted to (tests/data/vidur_a100): the
errors docs/engine.md publishes, recomputed from the committed data through the engine's own
function (``StepModel.linear_s``, ``AllReduce.seconds``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from sims.hw.step import FIT_PATH, load

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("fit_hardware", ROOT / "scripts" / "fit_hardware.py")
fit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fit)


@pytest.fixture(scope="module")
def linear():
    return fit.linear_rows()


def test_the_data_covers_eight_models_tp_1_to_8_and_1_to_16k_tokens(linear):
    assert {m for m, *_ in linear} == {
        "Llama-2-7B", "Llama-2-70B", "Llama-3-8B", "Llama-3-70B", "CodeLlama-34B", "Qwen-72B", "InternLM-20B", "Phi-2"
    }  # fmt: skip
    assert {tp for _, tp, *_ in linear} == {1, 2, 4, 8}
    tokens = {t for _, _, t, *_ in linear}
    assert min(tokens) == 1 and max(tokens) == 16384 and len(linear) > 8000


def test_linear_part_error_on_the_a100_data(linear):
    errs = fit.abs_errors((m, p) for *_, m, p in linear)
    median, p90 = fit.quantile(errs, 0.5), fit.quantile(errs, 0.9)
    assert median <= 0.05 and p90 <= 0.12, (median, p90)
    published = load(FIT_PATH)["errors"]  # what the pages and `contention step` quote
    assert (round(median, 4), round(p90, 4), len(errs)) == (
        published["linear_median"],
        published["linear_p90"],
        published["shapes"],
    )


def test_no_model_or_tp_is_far_off(linear):
    for m in {m for m, *_ in linear}:
        for tp in (1, 2, 4, 8):
            errs = fit.abs_errors((y, p) for mm, t2, _, y, p in linear if (mm, t2) == (m, tp))
            if errs:
                assert fit.quantile(errs, 0.5) < 0.07, (m, tp)


def test_all_reduce_error_on_the_a100_curve():
    rows = fit.allreduce_rows()
    assert {n for n, *_ in rows} == {2, 4, 8}
    errs = fit.abs_errors((y, p) for _, _, y, p in rows)
    assert fit.quantile(errs, 0.5) <= 0.10
    assert round(fit.quantile(errs, 0.5), 4) == load(FIT_PATH)["errors"]["allreduce_median"]
    big = fit.abs_errors((y, p) for _, b, y, p in rows if b >= 8 << 20)
    assert fit.quantile(big, 0.5) < 0.06  # where the bandwidth term dominates


def test_a_worse_model_fails_the_bound():
    """The bound can fail: GEMMs 20% slower to compute move the median error past 5%."""
    from sims.hw.step import constants

    c = constants(fit.GPU)
    errs = fit.abs_errors((m, p) for *_, m, p in fit.linear_rows(c | {"gemm_mfu": c["gemm_mfu"] * 0.8}))
    assert fit.quantile(errs, 0.5) > 0.05
