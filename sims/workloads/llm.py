"""LLM request streams: length mixes, shared system prompts across tenants, multi-turn chat.

Each request event carries its prompt as ``segments``: ``[[content_id, tokens], ...]``. Two
requests whose prompts start with the same segments share those tokens, so block hashes
(prefix caching, prefix-aware routing) are computed from segments without listing tokens.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from random import Random

from sims.core import portmath
from sims.core.dists import exponential, lognormal_mean
from sims.core.limits import MAX_RATE, MAX_TOKENS, show
from sims.core.registry import Param, workload
from sims.core.stream import Mark
from sims.workloads.traffic import MAX_SIGMA


def _length(rng: Random, mean: float, sigma: float, lo: int, hi: int) -> int:
    """``max(lo, min(hi, n))`` of the drawn length n, without the two builtin calls (twice a request)."""
    n = int(mean) if sigma <= 0 else int(lognormal_mean(rng, mean, sigma) + 0.5)
    n = n if n < hi else hi
    return n if n > lo else lo


def check_ladder(ladder: list, where: str = "workload.ladder") -> None:
    """A ladder is a list of [t, rate] pairs of finite numbers, t >= 0 and rate >= 0."""
    for step in ladder:
        ok = isinstance(step, list) and len(step) == 2
        ok = ok and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in step)
        if not (ok and all(math.isfinite(x) and x >= 0 for x in step) and step[1] <= MAX_RATE):
            raise ValueError(f"{where}: expected [t, rate] pairs of numbers >= 0, got {show(step)}")


def rate_at(ladder: list, default: float, t: float) -> float:
    """The rate in force at t for a ladder [[t0, r0], [t1, r1], ...] (step function)."""
    rate = default
    for step in ladder:
        if t >= step[0]:
            rate = step[1]
    return rate


def ladder_marks(ladder: list, duration: float) -> Iterator[Mark]:
    """A mark at each step of the ladder within the run (``stream.Mark``): the load changes there."""
    for at, rate in ladder:
        if 0 < at <= duration:
            yield Mark(float(at), f"load → {rate:g} req/s")


def arrivals(rng: Random, rate: float, ladder: list, duration: float) -> Iterator[float]:
    """Poisson arrival times; a ladder changes the rate at its steps (exact: the gap is redrawn
    at each step boundary, which is memoryless)."""
    t = 0.0
    if not ladder:  # one rate throughout: the loop below without its step lookups, same draws
        if rate <= 0:
            return
        draw, log = rng.random, portmath.log
        while True:
            t += -log(1.0 - draw()) / rate  # exponential(rng, rate), inlined: the same expression
            if t > duration:
                return
            yield t
    bounds = [float(s[0]) for s in ladder]
    while True:
        r = rate_at(ladder, rate, t)
        nxt = min([b for b in bounds if b > t], default=float("inf"))
        if r <= 0:
            if nxt == float("inf"):
                return
            t = nxt
            continue
        gap = exponential(rng, r)
        if t + gap > nxt:
            t = nxt
            continue
        t += gap
        if t > duration:
            return
        yield t


@workload(
    "llm",
    rate=Param(float, 2.0, "requests per second (poisson)", min=0.0, max=MAX_RATE),
    ladder=Param(list, [], "rate steps [[t, rate], ...] overriding rate from t on", max_items=1000),
    prompt_mean=Param(float, 161.0, "mean prompt tokens (lognormal)", above=0.0, max=MAX_TOKENS),
    prompt_sigma=Param(float, 1.0, "lognormal sigma of prompt length; 0 = fixed", min=0.0, max=MAX_SIGMA),
    output_mean=Param(float, 338.0, "mean output tokens (lognormal)", above=0.0, max=MAX_TOKENS),
    output_sigma=Param(float, 1.0, "lognormal sigma of output length; 0 = fixed", min=0.0, max=MAX_SIGMA),
    max_len=Param(int, 2048, "cap on prompt + output tokens", min=2, max=MAX_TOKENS),
    max_tokens=Param(int, 0, "the max_tokens a client asks for; 0 = max_len - prompt", min=0, max=MAX_TOKENS),
    long_frac=Param(float, 0.0, "fraction of requests drawn from the long mix instead", min=0.0, max=1.0),
    long_prompt_mean=Param(float, 4000.0, "long mix: mean prompt tokens", above=0.0, max=MAX_TOKENS),
    long_output_mean=Param(float, 2000.0, "long mix: mean output tokens", above=0.0, max=MAX_TOKENS),
    system_prompts=Param(int, 0, "distinct shared system prompts (0 = none)", min=0, max=10_000),
    system_len=Param(int, 0, "tokens per shared system prompt", min=0, max=MAX_TOKENS),
    system_frac=Param(float, 1.0, "fraction of requests that start with a system prompt", min=0.0, max=1.0),
    tenants=Param(int, 1, "tenants; tenant i uses system prompt i mod system_prompts", min=1, max=100_000),
    chat_frac=Param(float, 0.0, "probability a request continues an open chat session", min=0.0, max=1.0),
    max_turns=Param(int, 8, "turns after which a chat session closes", min=1, max=1000),
    chars_per_token=Param(float, 4.0, "prompt characters per token (for character estimates)", above=0.0, max=100.0),
    samples=Param(
        int, 1, "parallel samples per request (the request's n); > 1 adds an 'n' field", min=1, max=128, work=1
    ),
)
def llm(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """ShareGPT-like requests by default (lognormal, mean in/out 161/338, max 2048)."""
    p = params
    check_ladder(p["ladder"])
    yield from ladder_marks(p["ladder"], duration)
    # the parameters, read once (a request reads a dozen of them; the draws do not change)
    tenants, long_frac, chat_frac = p["tenants"], p["long_frac"], p["chat_frac"]
    max_len, max_turns, samples = p["max_len"], p["max_turns"], p["samples"]
    prompt_sigma, output_sigma, chars_per_token = p["prompt_sigma"], p["output_sigma"], p["chars_per_token"]
    system_prompts, system_frac = p["system_prompts"], p["system_frac"]
    system_len = p["system_len"] if system_prompts > 0 else 0  # no system prompt without both
    max_tokens_asked = p["max_tokens"]
    open_sessions: list[dict] = []
    next_session = 0
    for i, t in enumerate(arrivals(rng, p["rate"], p["ladder"], duration)):
        tenant = rng.randrange(tenants) if tenants > 1 else 0
        long = long_frac > 0 and rng.random() < long_frac
        pm = p["long_prompt_mean"] if long else p["prompt_mean"]
        om = p["long_output_mean"] if long else p["output_mean"]
        session = None
        if open_sessions and chat_frac > 0 and rng.random() < chat_frac:
            session = open_sessions[rng.randrange(len(open_sessions))]
        if session is not None:
            user = _length(rng, pm, prompt_sigma, 1, max_len)
            segments = session["segments"] + [[f"a{session['id']}.{session['turn']}", session["last_out"]]]
            session["turn"] += 1
            segments.append([f"u{session['id']}.{session['turn']}", user])
            tenant = session["tenant"]
        else:
            segments = []
            if system_len > 0 and rng.random() < system_frac:
                segments.append([f"sys{tenant % system_prompts}", system_len])
            user = _length(rng, pm, prompt_sigma, 1, max_len)
            segments.append([f"u{i}", user])
        prompt = segments[0][1] if len(segments) == 1 else sum(s[1] for s in segments)  # ints
        if prompt >= max_len:  # keep room for at least one output token
            over = prompt - (max_len - 1)
            segments[-1][1] = max(1, segments[-1][1] - over)
            prompt = sum(s[1] for s in segments)
            if prompt >= max_len:
                if session is not None:
                    open_sessions.remove(session)
                segments = [[f"u{i}", _length(rng, pm, prompt_sigma, 1, max_len // 2)]]
                prompt = segments[0][1]
                session = None
        output = _length(rng, om, output_sigma, 1, max_len - prompt)
        max_tokens = max_tokens_asked or (max_len - prompt)
        ev = {
            "t": t,
            "kind": "request",
            "id": i,
            "prompt_len": prompt,
            "output_len": max_tokens if max_tokens < output else output,  # min(output, max_tokens)
            "max_tokens": max_tokens,
            "tenant": tenant,
            "segments": segments,
            "prompt_chars": int(prompt * chars_per_token),
        }
        if samples > 1:
            ev["n"] = samples
        if chat_frac > 0:
            if session is None:
                session = {"id": next_session, "turn": 0, "segments": segments, "tenant": tenant}
                next_session += 1
                open_sessions.append(session)
            session["segments"] = [list(s) for s in segments]
            session["last_out"] = ev["output_len"]
            ev["session"] = session["id"]
            ev["turn"] = session["turn"]
            if session["turn"] >= max_turns:
                open_sessions.remove(session)
        yield ev
