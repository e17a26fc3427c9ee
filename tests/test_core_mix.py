"""The one stable 64-bit mix (``sims.core.rng.mix64``), used by hashing and the engine."""

from __future__ import annotations

from sims.core.rng import MASK64, mix64
from sims.engine import blocks
from sims.hashing import placement


def test_mix64_is_splitmix64s_finalizer():
    # splitmix64 seeded with 0: its first outputs are mix64 of the golden-gamma multiples
    gamma = 0x9E3779B97F4A7C15
    assert mix64(gamma) == 0xE220A8397B1DCDAF
    assert mix64((2 * gamma) & MASK64) == 0x6E789E6AA1B965F4
    assert mix64(0) == 0


def test_hashing_and_engine_share_it():
    assert placement.mix64 is mix64 and blocks._mix is mix64
