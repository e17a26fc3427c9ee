"""Shared-prefix request groups: the shape of llm-d's prefix-routing benchmark.

``groups`` groups of ``prompts_per_group`` prompts; every prompt of a group starts with the
group's ``prefix_len``-token shared prefix and ends with its own ``question_len``-token question
(inference-perf's ``shared_prefix`` data). Like inference-perf, the prompts are shuffled once and
then sent in that order, cycling (``order = "cycle"``); ``order = "random"`` draws each arrival's
prompt uniformly instead. From ``hot_from`` on, a ``hot_frac`` share of arrivals goes to the
viral group 0 instead. Arrivals are Poisson, with a load ladder.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.limits import MAX_DURATION, MAX_RATE, MAX_TOKENS
from sims.core.registry import Param, State, workload
from sims.core.stream import Mark
from sims.workloads.llm import arrivals, check_ladder, ladder_marks


@workload(
    "shared_prefix",
    rate=Param(float, 4.0, "requests per second (poisson)", min=0.0, max=MAX_RATE),
    ladder=Param(list, [], "rate steps [[t, rate], ...] overriding rate from t on", max_items=1000),
    groups=Param(
        int,
        150,
        "prompt groups, each with its own shared prefix",
        min=1,
        max=100_000,
        state=State(bytes=72, times=("prompts_per_group",)),
    ),
    prompts_per_group=Param(int, 5, "distinct questions per group", min=1, max=10_000),
    prefix_len=Param(int, 6000, "tokens of each group's shared prefix", min=0, max=MAX_TOKENS),
    question_len=Param(int, 1200, "tokens of each prompt's own question", min=1, max=MAX_TOKENS),
    output_len=Param(int, 1000, "output tokens per request", min=1, max=MAX_TOKENS),
    order=Param(
        str,
        "cycle",
        "cycle: a shuffled list of every prompt, sent in order and repeated; random: uniform draws",
        choices=("cycle", "random"),
    ),
    hot_frac=Param(float, 0.0, "fraction of requests sent to group 0, the viral prefix", min=0.0, max=1.0),
    hot_from=Param(float, 0.0, "seconds after which group 0 goes viral", min=0.0, max=MAX_DURATION),
    chars_per_token=Param(float, 4.0, "prompt characters per token", above=0.0, max=100.0),
)
def shared_prefix(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """llm-d's 73%-capacity benchmark by default: 150 x 5 prompts, 6000 + 1200 tokens in,
    1000 out."""
    p = params
    for name in ("groups", "prompts_per_group", "question_len", "output_len"):
        if p[name] < 1:
            raise ValueError(f"workload.{name}: expected >= 1, got {p[name]!r}")
    if p["prefix_len"] < 0:
        raise ValueError(f"workload.prefix_len: expected >= 0, got {p['prefix_len']!r}")
    if not 0.0 <= p["hot_frac"] <= 1.0:
        raise ValueError(f"workload.hot_frac: expected a fraction in [0, 1], got {p['hot_frac']!r}")
    if p["order"] not in ("cycle", "random"):
        raise ValueError(f"workload.order: expected 'cycle' or 'random', got {p['order']!r}")
    prompt = p["prefix_len"] + p["question_len"]
    out = p["output_len"]
    check_ladder(p["ladder"])
    yield from ladder_marks(p["ladder"], duration)
    if p["hot_frac"] > 0.0 and 0.0 < p["hot_from"] <= duration:
        yield Mark(p["hot_from"], "group 0 goes viral")
    deck = [(g, q) for g in range(p["groups"]) for q in range(p["prompts_per_group"])]
    rng.shuffle(deck)
    for i, t in enumerate(arrivals(rng, p["rate"], p["ladder"], duration)):
        if p["order"] == "cycle":
            g, q = deck[i % len(deck)]
        else:
            g, q = rng.randrange(p["groups"]), rng.randrange(p["prompts_per_group"])
        if p["hot_frac"] > 0.0 and t >= p["hot_from"] and rng.random() < p["hot_frac"]:
            g = 0
        segments = [[f"g{g}", p["prefix_len"]], [f"g{g}q{q}", p["question_len"]]]
        if not p["prefix_len"]:
            segments = segments[1:]
        yield {
            "t": t,
            "kind": "request",
            "id": i,
            "prompt_len": prompt,
            "output_len": out,
            "max_tokens": out,
            "tenant": g,
            "segments": segments,
            "prompt_chars": int(prompt * p["chars_per_token"]),
        }
