"""The hardware library (sims/hw): models read from config.json (parameters, KV bytes per
architecture, mixtures of experts, dtypes), GPUs from datasheets, the step-time model's parts."""

from __future__ import annotations

import json

import pytest

from sims.core.limits import InputError
from sims.hw import ops
from sims.hw.config import model_names, model_shape
from sims.hw.gpus import gpu, gpu_names
from sims.hw.step import StepModel

# KV bytes, derived by hand from each model card's config.json (bf16 KV: 2 bytes an element):
# GQA: 2 (K and V) x layers x kv_heads x head_dim x 2; MLA: (kv_lora_rank + qk_rope_head_dim) x layers x 2
KV_PER_TOKEN = {
    "Llama-3-8B": 2 * 32 * 8 * 128 * 2,  # 131,072
    "Llama-3-70B": 2 * 80 * 8 * 128 * 2,  # 327,680
    "Mistral-7B": 2 * 32 * 8 * 128 * 2,  # 131,072 while within its 4096-token window
    "Gemma-2-9B": 2 * 42 * 8 * 256 * 2,  # 344,064: head_dim 256, not hidden / heads = 224
    "Qwen3-32B": 2 * 64 * 8 * 128 * 2,  # 262,144
    "Mixtral-8x7B": 2 * 32 * 8 * 128 * 2,  # 131,072: experts add no KV
    "DeepSeek-V3": (512 + 64) * 61 * 2,  # 70,272: one latent vector a layer, not 128 heads
}


@pytest.mark.parametrize("name", sorted(KV_PER_TOKEN))
def test_kv_bytes_per_token_are_exact_per_architecture(name):
    assert model_shape(name).kv_bytes_per_token() == KV_PER_TOKEN[name]


def test_sliding_windows_bound_the_kv_of_long_sequences():
    mistral, gemma = model_shape("Mistral-7B"), model_shape("Gemma-2-9B")
    assert mistral.kv_bytes(4096) == 4096 * 131_072 == mistral.kv_bytes(32_000)  # every layer windowed
    per_layer = 2 * 8 * 256 * 2
    assert gemma.sliding_layers == 21  # every other layer of 42
    assert gemma.kv_bytes(8192) == (21 * 8192 + 21 * 4096) * per_layer
    assert model_shape("Llama-3-8B").kv_bytes(8192) == 8192 * 131_072  # no window


def test_fp8_kv_halves_the_bytes_and_tp_shards_or_replicates_them():
    fp8 = model_shape({"config": "DeepSeek-V3", "kv_cache_dtype": "fp8"})
    assert fp8.kv_bytes_per_token() == (512 + 64) * 61 * 1
    assert model_shape({"config": "Llama-3-8B", "kv_cache_dtype": "fp8_e4m3"}).kv_bytes_per_token() == 65_536
    llama70 = model_shape("Llama-3-70B")
    assert llama70.kv_layer_bytes(tp=4) == 2 * 2 * 128 * 2  # 8 KV heads over 4 GPUs: 2 each
    assert llama70.kv_layer_bytes(tp=16) == 2 * 1 * 128 * 2  # 16 GPUs: each still holds one head
    ds = model_shape("DeepSeek-V3")
    assert ds.kv_layer_bytes(tp=8) == ds.kv_layer_bytes(tp=1)  # MLA's latent is replicated on every GPU


# published totals (model cards; DeepSeek-V3's 671B excludes its multi-token-prediction module)
PARAMS = {
    "Llama-3-8B": (8.03e9, None),
    "Llama-3-70B": (70.6e9, None),
    "Qwen3-32B": (32.8e9, None),
    "Mistral-7B": (7.24e9, None),
    "Gemma-2-9B": (9.24e9, None),
    "OPT-13B": (12.85e9, None),
    "Mixtral-8x7B": (46.7e9, 12.9e9),
    "Qwen3-30B-A3B": (30.5e9, 3.3e9),
    "DeepSeek-V3": (671e9, 37e9),
}


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_parameters_and_active_parameters_match_the_model_cards(name):
    total, active = PARAMS[name]
    s = model_shape(name)
    assert s.params() == pytest.approx(total, rel=0.01)
    assert s.params(active=True) == pytest.approx(active or total, rel=0.02)
    assert s.flops_per_token() < 2 * s.params(active=True)  # lookups cost no FLOPs


def test_weight_dtype_comes_from_the_config_or_a_field():
    assert model_shape("DeepSeek-V3").weight_dtype == "fp8"  # quantization_config: fp8
    assert model_shape("OPT-13B").weight_dtype == "fp16"
    assert model_shape("Gemma-2-9B").weight_dtype == "bf16"  # float32 on the hub, served in 16 bits
    awq = model_shape({"config": "Llama-3-8B", "quantization_config": {"quant_method": "awq", "bits": 4}})
    assert awq.weight_dtype == "int4"
    assert awq.weight_bytes() < 0.35 * model_shape("Llama-3-8B").weight_bytes()


def test_moe_decode_reads_the_experts_the_batch_touches():
    assert ops.expected_experts(8, 2, 1) == 2.0
    assert 7.9 < ops.expected_experts(8, 2, 32) < 8.0  # (1 - 1/4)^32 of the experts stay cold
    assert ops.expected_experts(256, 8, 1) == pytest.approx(8.0)
    h100 = gpu("H100-80GB")
    mixtral = StepModel(h100, model_shape("Mixtral-8x7B"), 2)
    mistral = StepModel(h100, model_shape("Mistral-7B"), 2)  # the same layers with one dense MLP
    grow_moe = mixtral.linear_s(32) / mixtral.linear_s(1)
    grow_dense = mistral.linear_s(32) / mistral.linear_s(1)
    assert grow_moe > 1.5 > 1.1 > grow_dense  # batch 1 reads 2 experts of 8, batch 32 nearly all
    full = StepModel(h100, model_shape("Mixtral-8x7B"), 2).weight_bytes_per_gpu()
    assert full == pytest.approx(model_shape("Mixtral-8x7B").weight_bytes() / 2, rel=0.01)


def test_models_come_from_paths_and_tables(tmp_path):
    cfg = json.loads(open("sims/hw/models/Llama-3-8B.json").read())
    folder = tmp_path / "my-llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg | {"num_hidden_layers": 16}))
    s = model_shape(str(folder / "config.json"))
    assert (s.name, s.layers) == ("my-llama", 16)
    assert model_shape(str(folder)).layers == 16  # a folder holding config.json
    t = model_shape({"config": "Llama-3-8B", "name": "wide", "intermediate_size": 28672})
    assert (t.name, t.ff, t.layers) == ("wide", 28672, 32)
    assert model_shape(cfg | {"name": "inline"}).params() == model_shape("Llama-3-8B").params()


@pytest.mark.parametrize(
    "spec,match",
    [
        ({"config": "Llama-3-8B", "model_type": "bert"}, "model_type"),
        ({"config": "Llama-3-8B", "num_hidden_layers": -1}, "num_hidden_layers"),
        ({"config": "Llama-3-8B", "num_key_value_heads": 5}, "multiple"),
        ({"config": "Llama-3-8B", "quantization_config": {"quant_method": "magic"}}, "quantization_config"),
        ({"config": "Mixtral-8x7B", "num_experts_per_tok": 9}, "num_experts_per_tok"),
        ({"model_type": "llama"}, "hidden_size"),
        ("nope", "unknown model 'nope'"),
        (3, "expected a model name"),
    ],
)
def test_bad_configs_are_refused_naming_the_field(spec, match):
    with pytest.raises(InputError, match=match):
        model_shape(spec)


def test_every_shipped_model_reads_and_prices_a_step_on_every_gpu():
    assert set(gpu_names()) >= {"A100-40GB", "A100-80GB", "H100-80GB", "H200", "A40", "L40S", "B200", "MI300X"}
    for g in gpu_names():
        d = gpu(g)
        assert d.peak_fp8 >= d.peak_bf16 > 0 and d.hbm_bytes_s > 0 and d.memory_bytes > 0
        for name in model_names():
            s = model_shape(name)
            tp = 8 if s.params() > 100e9 else 1
            m = StepModel(d, s, tp)
            p = m.parts(512, 512 * 513 // 2, 0, 16, 16 * 1000)
            assert (
                p.linear > 0
                and p.attention > 0
                and p.overhead > 0
                and p.seconds == m.step_time(512, 512 * 513 // 2, 0, 16, 16_000)
            )
            assert (p.communication > 0) == (tp > 1)


def test_faster_gpus_take_less_time_and_fp8_weights_help_decode():
    llama = model_shape("Llama-3-8B")
    times = {
        g: StepModel(gpu(g), llama, 1).step_time(0, 0, 0, 8, 8000)
        for g in ("A40", "A100-80GB", "H100-80GB", "H200", "B200")
    }
    assert times["A40"] > times["A100-80GB"] > times["H100-80GB"] > times["H200"] > times["B200"]
    fp8 = model_shape({"config": "Llama-3-8B", "weight_dtype": "fp8"})
    assert StepModel(gpu("H100-80GB"), fp8, 1).linear_s(8) < 0.7 * StepModel(gpu("H100-80GB"), llama, 1).linear_s(8)


def test_tensor_parallelism_must_split_the_heads():
    with pytest.raises(InputError, match="tp 3"):
        StepModel(gpu("H200"), model_shape("Llama-3-8B"), 3)


def test_sliding_window_layers_read_at_most_the_window():
    g = gpu("H100-80GB")
    mistral = StepModel(g, model_shape("Mistral-7B"), 1)
    llama = StepModel(g, model_shape({"config": "Mistral-7B", "sliding_window": None}), 1)
    assert mistral.decode_attention_s(8, 8 * 3000) == llama.decode_attention_s(8, 8 * 3000)  # within the window
    assert mistral.decode_attention_s(8, 8 * 30_000) < 0.3 * llama.decode_attention_s(8, 8 * 30_000)


@pytest.mark.parametrize("name", ["Llama-3-8B", "Mistral-7B", "Gemma-2-9B", "DeepSeek-V3"])
def test_decode_attention_is_the_attention_kernel_written_out(name):
    """``decode_attention_s`` inlines ``_attn_kernel`` for the engine's hot loop: the same bits."""
    import random

    s = model_shape(name)
    m = StepModel(gpu("H200"), s, 8 if s.mla else 1)
    rng = random.Random(5)
    for _ in range(300):
        seqs = rng.randrange(1, 300)
        ctx = seqs * rng.randrange(0, 20_000)
        want = 0.0
        for count, window in m.attn_layers:
            c = min(ctx, seqs * window) if window else ctx
            want += count * m._attn_kernel(
                m.pair_flops * (c + seqs), c * m.kv_layer_bytes + seqs * (m.kv_layer_bytes + m.q_bytes)
            )
        assert m.decode_attention_s(seqs, ctx) == want, (seqs, ctx)
