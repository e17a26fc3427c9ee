"""The replay loop end to end with tiny shapes (the Triton interpreter on CPU, the GPU when present):
the engine's decisions drive real kernels over real block tables and per-request tensors."""

from __future__ import annotations

import random

import pytest
import torch

from gpu_backend import replay
from gpu_backend.model import SeqStep
from gpu_backend.spec import TINY
from sims.core import api
from sims.engine import Engine, EngineConfig
from sims.engine.engine import StepRecord, StepSeq

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _engine_replay(allocator: str, max_steps: int = 12) -> replay.Replayer:
    cfg = EngineConfig(
        gpu="H200",
        model="Llama-3-8B",
        allocator=allocator,
        kv_tokens=1024,
        max_model_len=128,
        block_size=4,
        max_num_batched_tokens=48,
        max_num_seqs=8,
    )
    eng = Engine(cfg, random.Random(1))
    rep = replay.Replayer(TINY, torch.device(DEVICE), torch.float32, paged=allocator == "paged", max_steps=max_steps)
    eng.step_listener = rep
    rng = random.Random(3)
    for i in range(5):
        eng.submit({"id": i, "prompt_len": rng.randrange(3, 30), "output_len": rng.randrange(4, 12)}, i * 0.001)
    eng.advance(5.0)
    return rep


def test_paged_replay_runs_every_step_and_reports_memory():
    rep = _engine_replay("paged")
    assert len(rep.steps) == 12 and rep.skipped > 0
    s = replay.summarize(rep.steps)
    assert s["tokens"] == sum(st["tokens"] for st in rep.steps) > 0
    assert all(st["measured_s"] > 0 and st["sim_s"] > 0 for st in rep.steps)
    assert any(st["decode"] == st["batch"] for st in rep.steps)  # decode-only steps happen
    assert any(st["decode"] < st["batch"] for st in rep.steps)  # and prefill/extend steps
    # paged: held memory is whole blocks, so the token share is high but below 1 (partial last blocks)
    assert 0.3 < s["kv_mean_token_share"] <= 1.0
    assert s["kv_peak_allocated_bytes"] >= s["kv_peak_held_bytes"] > 0
    assert len(rep.features) == 12


def test_contiguous_baseline_allocates_real_per_request_tensors():
    rep = _engine_replay("contiguous_max")
    s = replay.summarize(rep.steps)
    assert rep.stores  # live requests hold their own tensors
    per_token = TINY.kv_bytes_per_token(4)
    assert all(t.shape[2] * replay.CONTIG_BLOCK >= 128 for t in rep.stores.values())  # max_model_len each
    # each running request reserves max_model_len = 128 slots: most of that memory holds no token
    assert s["kv_mean_token_share"] < 0.5
    assert s["kv_peak_allocated_bytes"] >= 128 * per_token


def test_seq_steps_reads_engine_records():
    rec = StepRecord(1.0, 0.01, 4, 10, (StepSeq(3, 5, 9, (7, 2, 4)), StepSeq(4, 1, 2, (0,))))
    assert replay.seq_steps(rec) == [SeqStep(3, 5, 9, (7, 2, 4)), SeqStep(4, 1, 2, (0,))]


def test_replay_keeps_the_simulation_result():
    """The replay's simulation is ``contention run``'s: same stream, same decisions, same metrics."""
    result = replay.run("kv-fragmentation", duration=0.6, panel="paged", device=DEVICE, shape="tiny", dtype="fp32")
    assert not result["truncated"] and result["gpu"]["steps"] > 0
    assert result["sim"]["metrics"] == api.run("kv-fragmentation", duration=0.6, panels=["paged"])["panels"]["paged"]


def test_run_preset_end_to_end():
    result = replay.run(
        "kv-fragmentation",
        duration=5.0,
        panel="paged",
        device=DEVICE,
        shape="tiny",
        dtype="fp32",
        max_steps=6,
        keep_steps=True,
    )
    assert result["gpu"]["steps"] == 6 and result["truncated"]
    assert set(result["sim"]["metrics"]) >= {"completed", "kv_utilization", "avg_batch_size"}
    assert len(result["features"]) == 6 and len(result["series"]) == 6
    model, report = replay.calibrate_runs([result], gpu="H200", model="Llama-3-8B")
    assert report["steps"] == 6 and model.gpu == "H200"


def test_run_rejects_bad_input():
    with pytest.raises(ValueError, match="engine preset"):
        replay.run("cache-scan", device=DEVICE, shape="tiny")
    with pytest.raises(ValueError, match="unknown panel"):
        replay.run("kv-fragmentation", panel="nope", device=DEVICE, shape="tiny")
    with pytest.raises(ValueError, match="unknown model shape"):
        replay.run("kv-fragmentation", device=DEVICE, shape="gpt-9")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA path")
def test_server_entry_needs_cuda():
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        replay.replay_preset("kv-fragmentation", 1, 1.0)


def test_full_synthetic_model_step():
    rep = _engine_replay("paged", max_steps=3)
    full = replay.Replayer(TINY, torch.device(DEVICE), torch.float32, paged=True, full_model=True, max_steps=3)
    cfg = EngineConfig(
        gpu="H200",
        model="Llama-3-8B",
        kv_tokens=1024,
        max_model_len=128,
        block_size=4,
        max_num_batched_tokens=48,
        max_num_seqs=8,
    )
    eng = Engine(cfg, random.Random(1))
    eng.step_listener = full
    rng = random.Random(3)
    for i in range(5):
        eng.submit({"id": i, "prompt_len": rng.randrange(3, 30), "output_len": rng.randrange(4, 12)}, i * 0.001)
    eng.advance(5.0)
    assert full.model.weights is not None and len(full.steps) == 3
    # the same engine decisions as the attention-only replay: same batches, same simulated times
    assert [(s["batch"], s["tokens"], s["sim_s"]) for s in full.steps] == [
        (s["batch"], s["tokens"], s["sim_s"]) for s in rep.steps
    ]


def test_bench_report_shape():
    from gpu_backend import bench

    report = bench.run(
        [2],
        [24],
        shape=TINY,
        block_size=4,
        dtype=torch.float16,
        device=torch.device(DEVICE),
        reps=1,
        read_sizes_mib=(1,),
    )
    (row,) = report["rows"]
    assert row["bytes"] == 2 * 2 * 24 * TINY.kv_heads * TINY.head_dim * 2 + 2 * 2 * TINY.q_heads * TINY.head_dim * 2
    assert row["paged_s"] > 0 and row["contiguous_s"] > 0 and row["sdpa_s"] > 0
    assert report["hbm"]["read_bytes_s"] > 0
    assert "paged us" in bench.table(report)
