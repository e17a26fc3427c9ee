"""What a replay is of, without torch (so the CLI can check its arguments before touching a device):
the synthetic model shapes, and the single-engine panel of a preset."""

from __future__ import annotations

from dataclasses import dataclass

from sims.core import presets


@dataclass(frozen=True)
class ModelShape:
    """Attention (and, for the full model, MLP) dimensions of a decoder-only transformer."""

    name: str
    q_heads: int
    kv_heads: int
    head_dim: int
    layers: int
    hidden: int  # q_heads * head_dim for Llama
    intermediate: int  # MLP width
    vocab: int

    def kv_bytes_per_token(self, elem_bytes: int = 2) -> int:
        """Bytes of K and V per token over all layers."""
        return 2 * self.layers * self.kv_heads * self.head_dim * elem_bytes


LLAMA3_8B = ModelShape("Llama-3-8B", 32, 8, 128, 32, 4096, 14336, 128256)
TINY = ModelShape("tiny", 4, 2, 16, 2, 64, 128, 256)
SHAPES = {s.name: s for s in (LLAMA3_8B, TINY)}


def shape_named(name: str) -> ModelShape:
    if name not in SHAPES:
        raise ValueError(f"unknown model shape {name!r}; valid: {', '.join(SHAPES)}")
    return SHAPES[name]


def engine_panel(preset: str, panel: str | None) -> tuple[presets.Preset, str]:
    """The preset and the panel to replay (default: its first); ValueError for a non-engine preset
    or an unknown panel."""
    p = presets.load(preset)
    if p.topic != "engine":
        raise ValueError(f"{preset}: replay needs an engine preset, this one is topic {p.topic!r}")
    names = p.panel_names()
    name = panel or names[0]
    if name not in names:
        raise ValueError(f"{preset}: unknown panel {name!r}; valid: {', '.join(names)}")
    return p, name
