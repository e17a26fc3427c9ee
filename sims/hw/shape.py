"""``ModelShape``: what the step-time model needs to know about a model, read from its Hugging Face
``config.json`` (``sims/hw/config.py``): the shapes of its layers, its parameter and KV-cache
bytes, its mixture of experts, its dtypes. Integer arithmetic throughout (parameter and byte counts
are exact); the few floats (bytes per parameter) are exact binary fractions."""

from __future__ import annotations

from dataclasses import dataclass

DTYPE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}


@dataclass(frozen=True)
class ModelShape:
    name: str
    model_type: str
    hidden: int
    layers: int
    vocab: int
    heads: int  # query heads
    kv_heads: int  # GQA key/value heads (MLA: 1 latent "head" shared by every query head)
    head_dim: int  # query/key dims per head (MLA: nope + rope)
    v_head_dim: int
    rope_dim: int  # rotary dims per head (0: learned positions, OPT)
    ff: int  # dense MLP intermediate size
    gated: bool  # gate and up projections (SwiGLU/GeGLU) or one (GELU/ReLU)
    norm: str  # "rms" | "layer"
    norms_per_layer: int  # 2 (pre-attention, pre-MLP); 4 (Gemma 2); 1 (parallel attention + MLP)
    parallel_block: bool  # attention and MLP read the same input and add into one residual (Phi)
    tied_embeddings: bool
    learned_positions: bool  # a second embedding table indexed by position (OPT)
    max_position: int
    # multi-head latent attention (DeepSeek); kv_lora_rank 0 = plain GQA
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    # mixture of experts; experts 0 = dense MLP everywhere
    experts: int = 0
    top_k: int = 0
    moe_ff: int = 0
    shared_ff: int = 0  # always-on shared experts' intermediate size (all of them together)
    moe_layers: int = 0  # layers whose MLP is the mixture; the others are dense (ff)
    # sliding-window attention: ``sliding_layers`` of the layers keep only the last ``window`` tokens
    window: int = 0
    sliding_layers: int = 0
    weight_dtype: str = "bf16"  # the layers' GEMM weights; embeddings and the LM head stay 16-bit
    kv_dtype: str = "bf16"

    # --- parameters -------------------------------------------------------------------------
    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    def attention_params(self) -> int:
        """One layer's attention projections."""
        h, nh = self.hidden, self.heads
        if self.mla:
            q = (
                h * self.q_lora_rank + self.q_lora_rank * nh * self.head_dim
                if self.q_lora_rank
                else h * nh * self.head_dim
            )
            kv = h * (self.kv_lora_rank + self.rope_dim) + self.kv_lora_rank * nh * (
                self.head_dim - self.rope_dim + self.v_head_dim
            )
            return q + kv + nh * self.v_head_dim * h
        return h * (nh + 2 * self.kv_heads) * self.head_dim + nh * self.v_head_dim * h

    def mlp_params(self, ff: int) -> int:
        return (3 if self.gated else 2) * self.hidden * ff

    def expert_params(self) -> int:
        """One routed expert."""
        return self.mlp_params(self.moe_ff)

    def layer_params(self, moe: bool, active: bool = False) -> int:
        """One layer: attention, MLP (or router + experts + shared experts), norms."""
        n = self.attention_params() + self.norms_per_layer * self.hidden
        if not moe:
            return n + self.mlp_params(self.ff)
        routed = self.top_k if active else self.experts
        return n + self.hidden * self.experts + routed * self.expert_params() + self.mlp_params(self.shared_ff)

    def embedding_params(self) -> int:
        """Token embeddings, learned positions, the LM head unless tied, the final norm."""
        n = self.vocab * self.hidden * (1 if self.tied_embeddings else 2) + self.hidden
        return n + (self.max_position * self.hidden if self.learned_positions else 0)

    def params(self, active: bool = False) -> int:
        """Every parameter (``active``: those one token uses: top-k of the experts)."""
        dense = self.layers - self.moe_layers
        return (
            self.embedding_params()
            + dense * self.layer_params(False)
            + self.moe_layers * self.layer_params(True, active)
        )

    def flops_per_token(self) -> int:
        """Forward GEMM FLOPs of one token (2 per multiply-add over the active weights, the LM
        head included, lookups excluded); attention over the context comes on top."""
        lookups = self.vocab * self.hidden + (self.max_position * self.hidden if self.learned_positions else 0)
        norms = self.hidden * (1 + self.norms_per_layer * self.layers)
        return 2 * (
            self.params(active=True) - lookups - norms + (self.vocab * self.hidden if self.tied_embeddings else 0)
        )

    @property
    def weight_bytes_per_param(self) -> float:
        return DTYPE_BYTES[self.weight_dtype]

    def weight_bytes(self) -> float:
        """Bytes of every weight: layer GEMMs in ``weight_dtype``, embeddings and norms in 16 bits."""
        layer_gemms = self.params() - self.embedding_params() - self.layers * self.norms_per_layer * self.hidden
        return layer_gemms * self.weight_bytes_per_param + 2.0 * (self.params() - layer_gemms)

    # --- KV cache ---------------------------------------------------------------------------
    @property
    def kv_elem_bytes(self) -> float:
        return DTYPE_BYTES[self.kv_dtype]

    def kv_layer_bytes(self, tp: int = 1) -> float:
        """KV bytes one token adds to one layer on one of ``tp`` GPUs: GQA shards its KV heads
        (each GPU holds at least one: heads are replicated when tp exceeds them); MLA's latent
        vector (kv_lora_rank + the shared rope key) is replicated on every GPU."""
        if self.mla:
            return (self.kv_lora_rank + self.rope_dim) * self.kv_elem_bytes
        per_gpu = -(-self.kv_heads // tp)
        return 2 * per_gpu * self.head_dim * self.kv_elem_bytes

    def kv_bytes_per_token(self, tp: int = 1) -> float:
        """KV bytes of one token in every layer, on one of ``tp`` GPUs times ``tp`` (the replica's
        total; for MLA, and GQA with fewer KV heads than GPUs, the copies count). A token within
        the sliding window of every layer; ``kv_bytes(context)`` bounds the windowed layers."""
        return self.layers * self.kv_layer_bytes(tp) * tp

    def kv_bytes(self, context: int, tp: int = 1) -> float:
        """KV bytes of one sequence of ``context`` tokens: sliding-window layers keep at most
        ``window`` of them."""
        full = self.layers - self.sliding_layers
        kept = context if not self.window or context < self.window else self.window
        return (full * context + self.sliding_layers * kept) * self.kv_layer_bytes(tp) * tp
