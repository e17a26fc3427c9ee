"""Seeded generators, one per purpose, derived from the preset seed.

``derive(seed, "stream")`` and ``derive(seed, "panel:lru")`` never share state, so adding a panel
cannot change the stream. Never call the module-level ``random.*`` functions in ``sims/``.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(seed: int, purpose: str) -> int:
    """A 64-bit seed from (seed, purpose) through SHA-256: stable across processes and runtimes."""
    digest = hashlib.sha256(f"{int(seed)}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def derive(seed: int, purpose: str) -> random.Random:
    """A fresh ``random.Random`` for one purpose."""
    return random.Random(derive_seed(seed, purpose))


def stable_hash64(text: str | bytes) -> int:
    """64-bit FNV-1a: stable across processes and runtimes (the built-in string hash is salted)."""
    data = text.encode() if isinstance(text, str) else text
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


MASK64 = 0xFFFFFFFFFFFFFFFF


def mix64(x: int) -> int:
    """The splitmix64 finalizer (Steele, Lea and Flood, OOPSLA'14): a bijection of 64-bit
    integers with full avalanche. The one stable 64-bit mix of ``sims``: hashing's rendezvous
    scores and the engine's block hashes both use it."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)
