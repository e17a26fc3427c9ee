"""The bill of a run: GPU-hours provisioned and busy, and dollars per million tokens delivered.

Every GPU of every engine is paid for the whole window, idle or not (a deployment rents its GPUs
by the hour), so ``usd`` = ``gpu_hours`` x the price. ``usd_per_mtok_out_busy`` divides only the
busy GPU-hours' cost, so a page can show what idling costs. Denominators are the tokens
*delivered*: prompt and output tokens of requests that completed in the window. Work still in
flight at the window's end is paid for and not counted, so a short window reads dear, never
cheap; recomputed prompt tokens (preemption) are paid for and never counted twice.

The price comes from ``sims/hw/prices.py`` (or the panel's ``usd_per_gpu_hour``); a GPU with no
sourced price and no override reports GPU-hours and no dollars.
"""

from __future__ import annotations

from sims.core.registry import Param
from sims.engine.metrics import Accumulator, EngineStats
from sims.hw.prices import TIERS, usd_per_gpu_hour

# the panel params of the bill and of the SLO, shared by the engine and cluster topics
PARAMS = {
    "usd_per_gpu_hour": Param(
        float, 0.0, "price of one GPU-hour, USD; 0 = sims/hw/prices.toml's typical price", min=0.0, max=1000.0
    ),
    "price_tier": Param(str, "on_demand", " | ".join(TIERS), choices=TIERS),
    "ttft_slo": Param(float, 0.0, "SLO on time to first token, s (goodput); 0 = none", min=0.0, max=3600.0),
    "tpot_slo": Param(float, 0.0, "SLO on time per output token, s (goodput); 0 = none", min=0.0, max=60.0),
    "e2e_slo": Param(float, 0.0, "SLO on end-to-end latency, s (goodput); 0 = none", min=0.0, max=86400.0),
}

MTOK = 1e6


def bill(acc: Accumulator, stats: EngineStats, elapsed: float, engines: int, tp: int, gpu: str, params: dict) -> dict:
    """The cost metrics of ``engines`` engines of ``tp`` GPUs each (type ``gpu``), held for
    ``elapsed`` seconds; ``stats`` (summed over the engines) gives their busy time, a step
    occupying all of its engine's GPUs. A price per token is absent until a token is delivered:
    the price of nothing is not 0."""
    price = usd_per_gpu_hour(gpu, params.get("price_tier", "on_demand"), params.get("usd_per_gpu_hour", 0.0))
    gpus = engines * tp
    gpu_hours = gpus * elapsed / 3600.0
    out = {"gpus": gpus, "gpu_hours": gpu_hours}
    if price is None:
        return out
    usd = gpu_hours * price
    out.update({"usd_per_gpu_hour": price, "usd": usd, "usd_per_hour": gpus * price})
    # a step that runs past the window's end counts whole in busy_s: busy never exceeds held
    busy_usd = min(stats.busy_s * tp / 3600.0, gpu_hours) * price
    per = {
        "usd_per_mtok_out": (usd, acc.output_tokens),
        "usd_per_mtok": (usd, acc.prompt_tokens + acc.output_tokens),
        "usd_per_mtok_out_busy": (busy_usd, acc.output_tokens),
        "usd_per_mtok_good": (usd, acc.good_output_tokens),
    }
    for name, (cost, tokens) in per.items():
        if tokens:
            out[name] = cost * MTOK / tokens
    return out
