"""A model from its Hugging Face ``config.json``, read with the standard library.

``model_shape(spec)`` takes a model as the presets and the CLI name it: a shipped name
(``models.toml``), a path to a ``config.json``, or a table (a preset's inline ``model = {...}``):
the config's fields, optionally on top of ``config = NAME|PATH``, plus our own ``name``,
``kv_cache_dtype`` ("auto" | "fp8") and ``weight_dtype`` ("bf16" | "fp8" | "int4") overrides.
``model_type`` picks the reader; each knows its architecture's fields (DeepSeek's MLA and shared
experts, Gemma 2's four norms and alternating windows, Phi's parallel block, OPT's learned
positions, Qwen v1's halved intermediate size). Bad input raises ``InputError`` naming the field.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from sims.core.limits import InputError, show
from sims.hw.shape import DTYPE_BYTES, ModelShape

MODELS_DIR = Path(__file__).with_name("models")
_INDEX: dict[str, dict] = {}
_SHAPES: dict[str, ModelShape] = {}

LLAMA_LIKE = ("llama", "mistral", "qwen2", "qwen3", "internlm", "internlm2", "qwen")
MOE = ("mixtral", "qwen2_moe", "qwen3_moe")
TYPES = (*LLAMA_LIKE, "phi", "gemma2", "opt", *MOE, "deepseek_v2", "deepseek_v3")
_TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "bf16", "half": "fp16"}  # fp32: served in 16 bits


def index() -> dict[str, dict]:
    """The shipped models: name -> {file, source, tp, max_model_len}."""
    if not _INDEX:
        with open(MODELS_DIR / "models.toml", "rb") as f:
            _INDEX.update(tomllib.load(f))
    return _INDEX


def model_names() -> list[str]:
    return sorted(index())


def default_tp(name: str) -> int:
    return int(index().get(name, {}).get("tp", 1))


def _read_json(path: Path, where: str) -> dict:
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"{where}: cannot read {show(str(path), 120)}: {exc.strerror or exc}") from None
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InputError(f"{show(str(path), 120)}: not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise InputError(f"{show(str(path), 120)}: expected a JSON object")
    return raw


def _base(spec: str, where: str) -> tuple[str, dict]:
    """(name, config fields) of a shipped name or a config.json path."""
    entry = index().get(spec)
    if entry is not None:
        return spec, _read_json(MODELS_DIR / entry["file"], where)
    if spec.endswith(".json") or "/" in spec or "\\" in spec:
        path = Path(spec)
        if path.is_dir():
            path = path / "config.json"
        name = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
        return name, _read_json(path, where)
    raise InputError(f"{where}: unknown model {spec!r}; valid: {', '.join(model_names())}, or a path to a config.json")


def resolve(spec, where: str = "model") -> tuple[str, dict]:
    """(name, merged config fields) of a model as presets and flags give it."""
    if isinstance(spec, str):
        return _base(spec, where)
    if not isinstance(spec, dict):
        raise InputError(f"{where}: expected a model name, a config.json path or a table, got {show(spec)}")
    fields = dict(spec)
    base = fields.pop("config", None)
    name = fields.pop("name", None)
    if base is not None:
        if not isinstance(base, str):
            raise InputError(f"{where}.config: expected a model name or a config.json path, got {show(base)}")
        base_name, raw = _base(base, f"{where}.config")
        raw = raw | fields
    else:
        base_name, raw = "custom", fields
    return str(name or base_name), raw


def model_shape(spec, where: str = "model") -> ModelShape:
    """The shape of ``spec`` (cached for names and paths; tables are read each time)."""
    key = spec if isinstance(spec, str) else None
    if key is not None and key in _SHAPES:
        return _SHAPES[key]
    name, raw = resolve(spec, where)
    shape = read_config(raw, name, where)
    if key is not None:
        _SHAPES[key] = shape
    return shape


class _Fields:
    """Typed reads of one config, each error naming the field."""

    def __init__(self, raw: dict, where: str) -> None:
        self.raw, self.where = raw, where

    def int(self, *names: str, default: int | None = None) -> int:
        for n in names:
            value = self.raw.get(n)
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise InputError(f"{self.where}: field {n!r}: expected a non-negative integer, got {show(value)}")
                return value
        if default is None:
            raise InputError(f"{self.where}: field {names[0]!r} is missing")
        return default

    def get(self, name: str, default=None):
        value = self.raw.get(name)
        return default if value is None else value


def _dtypes(f: _Fields) -> tuple[str, str]:
    """(weight dtype, KV-cache dtype): ``weight_dtype`` or ``quantization_config`` or
    ``torch_dtype``; ``kv_cache_dtype`` "fp8"/"fp8_e4m3"/"fp8_e5m2", else 16 bits."""
    act = _TORCH_DTYPES.get(str(f.get("torch_dtype", f.get("dtype", "bfloat16"))), "bf16")
    weight = f.get("weight_dtype")
    if weight is None:
        q = f.get("quantization_config", {})
        if not isinstance(q, dict):
            raise InputError(f"{f.where}: field 'quantization_config': expected a table")
        method = str(q.get("quant_method", "")).lower()
        bits = q.get("bits", q.get("w_bit", q.get("num_bits")))
        if "fp8" in method:
            weight = "fp8"
        elif bits in (4, 8):
            weight = "int4" if bits == 4 else "int8"
        elif method:
            raise InputError(
                f"{f.where}: quantization_config: cannot tell the weight bytes of {show(method)}; set weight_dtype"
            )
        else:
            weight = act
    if weight not in DTYPE_BYTES:
        raise InputError(
            f"{f.where}: field 'weight_dtype': expected one of {', '.join(DTYPE_BYTES)}, got {show(weight)}"
        )
    kv = str(f.get("kv_cache_dtype", "auto"))
    if kv.startswith("fp8"):
        kv = "fp8"
    elif kv in ("auto", "bf16", "bfloat16", "fp16", "float16"):
        kv = "bf16" if act == "bf16" else "fp16"
    else:
        raise InputError(f"{f.where}: field 'kv_cache_dtype': expected auto or fp8, got {show(kv)}")
    return weight, kv


def read_config(raw: dict, name: str, where: str = "model") -> ModelShape:
    """A ``ModelShape`` from config.json fields."""
    f = _Fields(raw, f"{where} {name}")
    mt = raw.get("model_type")
    if mt not in TYPES:
        raise InputError(f"{f.where}: field 'model_type': expected one of {', '.join(TYPES)}, got {show(mt)}")
    h = f.int("hidden_size", "d_model", "n_embd")
    heads = f.int("num_attention_heads", "n_head")
    layers = f.int("num_hidden_layers", "n_layer")
    if heads == 0 or layers == 0 or h == 0:
        raise InputError(f"{f.where}: hidden_size, num_attention_heads and num_hidden_layers must be positive")
    head_dim = f.int("head_dim", "kv_channels", default=h // heads)
    kv_heads = f.int("num_key_value_heads", default=heads)
    ff = f.int("intermediate_size", "ffn_dim", default=4 * h)
    act = str(f.get("hidden_act", f.get("hidden_activation", f.get("activation_function", "silu"))))
    weight, kv = _dtypes(f)
    window = f.int("sliding_window", default=0)
    if f.get("use_sliding_window") is False:
        window = 0
    common = dict(
        name=name,
        model_type=mt,
        hidden=h,
        layers=layers,
        vocab=f.int("vocab_size"),
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=head_dim,
        rope_dim=head_dim,
        ff=ff,
        gated=True,
        norm="rms",
        norms_per_layer=2,
        parallel_block=False,
        tied_embeddings=bool(f.get("tie_word_embeddings", False)),
        learned_positions=False,
        max_position=f.int("max_position_embeddings", "seq_length", "n_positions", default=2048),
        window=window,
        sliding_layers=layers if window else 0,
        weight_dtype=weight,
        kv_dtype=kv,
    )
    if mt == "qwen":  # Qwen v1: intermediate_size counts both halves of the gated MLP
        common.update(ff=ff // 2)
    elif mt == "phi":
        common.update(gated=False, norm="layer", norms_per_layer=1, parallel_block=True)
    elif mt == "gemma2":  # pre/post norms around attention and MLP; every other layer windowed
        common.update(norms_per_layer=4, tied_embeddings=bool(f.get("tie_word_embeddings", True)))
        common.update(sliding_layers=(layers + 1) // 2 if window else 0)
    elif mt == "opt":
        common.update(
            gated=False,
            norm="layer",
            rope_dim=0,
            tied_embeddings=bool(f.get("tie_word_embeddings", True)),
            learned_positions=True,
        )
    if act.startswith("relu") or (mt in ("phi", "opt") and "glu" not in act):
        common.update(gated=False)
    if mt in MOE:
        experts = f.int("num_local_experts", "num_experts")
        step = f.int("decoder_sparse_step", default=1) or 1
        dense_only = f.get("mlp_only_layers", []) or []
        moe_layers = sum(1 for i in range(layers) if i not in dense_only and (i + 1) % step == 0)
        moe_ff = f.int("moe_intermediate_size", default=ff)
        common.update(
            experts=experts,
            top_k=f.int("num_experts_per_tok"),
            moe_ff=moe_ff,
            shared_ff=f.int("shared_expert_intermediate_size", default=0),
            moe_layers=moe_layers,
        )
    elif mt in ("deepseek_v2", "deepseek_v3"):
        nope, rope = f.int("qk_nope_head_dim"), f.int("qk_rope_head_dim")
        experts = f.int("n_routed_experts", default=0)
        first_dense = f.int("first_k_dense_replace", default=0)
        freq = f.int("moe_layer_freq", default=1) or 1
        moe_ff = f.int("moe_intermediate_size", default=0)
        moe_layers = sum(1 for i in range(first_dense, layers) if i % freq == 0) if experts else 0
        common.update(
            kv_heads=1,
            head_dim=nope + rope,
            v_head_dim=f.int("v_head_dim"),
            rope_dim=rope,
            q_lora_rank=f.int("q_lora_rank", default=0),
            kv_lora_rank=f.int("kv_lora_rank"),
            experts=experts,
            top_k=f.int("num_experts_per_tok", default=0),
            moe_ff=moe_ff,
            shared_ff=f.int("n_shared_experts", default=0) * moe_ff,
            moe_layers=moe_layers,
        )
    shape = ModelShape(**common)
    if not shape.mla and (shape.kv_heads == 0 or heads % shape.kv_heads):
        raise InputError(
            f"{f.where}: num_attention_heads ({heads}) is not a multiple of num_key_value_heads ({kv_heads})"
        )
    if shape.experts and not 0 < shape.top_k <= shape.experts:
        raise InputError(f"{f.where}: num_experts_per_tok must lie in 1..{shape.experts}, got {shape.top_k}")
    return shape
