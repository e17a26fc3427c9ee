"""What a GPU-hour costs (``prices.toml``): a sourced range and a typical point per GPU, on-demand,
and reserved as on-demand less a sourced discount. The cost metrics (``sims/engine/bill.py``)
multiply GPU-hours by the price this module gives; nothing else in the code knows a dollar."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from sims.core.limits import InputError

PRICES_PATH = Path(__file__).with_name("prices.toml")
TIERS = ("on_demand", "reserved")
_TABLE: dict = {}


@dataclass(frozen=True)
class Price:
    gpu: str
    tier: str
    usd_per_gpu_hour: float  # the point the metrics use
    low: float  # the sourced range, same tier
    high: float
    month: str
    source: str


def _table() -> dict:
    if not _TABLE:
        with open(PRICES_PATH, "rb") as f:
            _TABLE.update(tomllib.load(f))
    return _TABLE


def priced_gpus() -> list[str]:
    return sorted(_table()["gpu"])


def price(gpu: str, tier: str = "on_demand") -> Price | None:
    """The price of one ``gpu``-hour in ``tier``; None for a GPU with no sourced figure."""
    if tier not in TIERS:
        raise InputError(f"price_tier: unknown value {tier!r}; valid: {', '.join(TIERS)}")
    table = _table()
    row = table["gpu"].get(gpu)
    if row is None:
        return None
    keep = 1.0 - table["reserved_discount"] if tier == "reserved" else 1.0
    low, high = row["on_demand"]
    return Price(gpu, tier, row["typical"] * keep, low * keep, high * keep, row["month"], row["source"])


def usd_per_gpu_hour(gpu: str, tier: str = "on_demand", override: float = 0.0) -> float | None:
    """``override`` when set (> 0), else the table's typical price; None when neither exists."""
    if override > 0:
        return override
    p = price(gpu, tier)
    return p.usd_per_gpu_hour if p else None
