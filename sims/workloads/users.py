"""Closed-loop users: chat and agent sessions whose next turn waits for the last answer.

An open-loop stream (``llm``) fixes when every request arrives; a user does not. A user sends a
turn, waits for the whole answer, thinks, and sends the next one, so a slower server gets fewer
requests and its users wait instead of its queue growing without bound (the interactive
response time law: users = throughput × (response time + think time)). The stream therefore
holds no requests. It holds one ``users`` event at t = 0 with the parameters, and one ``user``
event per user, at the instant the user arrives (spread over ``ramp`` seconds), with a seed of
its own. The panel (``sims/engine/users.py``) draws each turn from that seed when the turn is
due, so every panel sends the same turns with the same lengths and only their times differ.

A session is a conversation: its context grows by every turn (the earlier turns are the prefix
of the next prompt, so prefix caching and prefix-aware routing matter), and it ends after a
geometric number of turns (mean ``turns``) or when its context would pass ``max_len``; the user
then starts a new one. With probability ``tool_frac`` an answer is a tool call: a short output,
then after ``tool_latency`` the tool's result comes back as the next turn's input (an agent's
loop) instead of a user's message after ``think``. Every wait is at least ``think_min``.

Defaults follow the shape of public chat traces (ShareGPT's 161/338 mean prompt/output tokens
for a first turn, shorter follow-ups), not any one measurement: change them per preset.
"""

from __future__ import annotations

from collections.abc import Iterator
from random import Random

from sims.core.limits import MAX_TOKENS
from sims.core.registry import Param, workload
from sims.workloads.traffic import MAX_SIGMA

MAX_USERS = 20_000  # users alive at once: each holds its context (a list of segments) in a tab
MAX_WAIT = 3600.0  # seconds of think time or tool latency


def _estimate(p: dict, horizon: float) -> tuple[float, float]:
    """For the budget (``sims.core.budget``): the turns the users send by ``horizon`` (each at
    most one per shortest mean wait) and the tokens of a mean turn (half a session's context,
    and the answer)."""
    wait = min(p["think"], p["tool_latency"]) if p["tool_frac"] > 0 else p["think"]
    turns = p["users"] * (1.0 + horizon / max(wait, p["think_min"]))
    context = p["system_len"] + p["first_mean"] + p["turns"] / 2 * (p["turn_mean"] + p["output_mean"])
    return turns, min(float(p["max_len"]), context + p["output_mean"])


@workload(
    "users",
    estimate=_estimate,
    users=Param(int, 100, "users alive at once (closed loop: each waits for its answer)", min=1, max=MAX_USERS),
    ramp=Param(float, 10.0, "users arrive uniformly over the first ramp seconds", min=0.0, max=MAX_WAIT),
    think=Param(float, 8.0, "mean seconds a user thinks before the next message", above=0.0, max=MAX_WAIT),
    think_min=Param(float, 0.5, "the shortest wait of any kind (s)", min=0.05, max=MAX_WAIT),
    turns=Param(float, 6.0, "mean turns in a session (geometric); then a new session", min=1.0, max=1000.0),
    first_mean=Param(float, 161.0, "mean tokens of a session's first message (lognormal)", above=0.0, max=MAX_TOKENS),
    turn_mean=Param(float, 60.0, "mean tokens of a later message (lognormal)", above=0.0, max=MAX_TOKENS),
    output_mean=Param(float, 338.0, "mean tokens of an answer (lognormal)", above=0.0, max=MAX_TOKENS),
    sigma=Param(float, 1.0, "lognormal sigma of every length; 0 = fixed", min=0.0, max=MAX_SIGMA),
    tool_frac=Param(float, 0.0, "share of answers that are tool calls (agents)", min=0.0, max=1.0),
    tool_output_mean=Param(float, 40.0, "mean tokens of a tool call", above=0.0, max=MAX_TOKENS),
    tool_result_mean=Param(float, 400.0, "mean tokens a tool returns", above=0.0, max=MAX_TOKENS),
    tool_latency=Param(float, 1.0, "mean seconds a tool takes", above=0.0, max=MAX_WAIT),
    system_prompts=Param(int, 1, "distinct shared system prompts (user i uses i mod this)", min=0, max=10_000),
    system_len=Param(int, 0, "tokens per shared system prompt", min=0, max=MAX_TOKENS),
    max_len=Param(int, 8192, "the longest context a session reaches before it starts over", min=2, max=MAX_TOKENS),
)
def users(params: dict, rng: Random, duration: float) -> Iterator[dict]:
    """Chat users in a closed loop (each waits for its answer, thinks, asks again)."""
    yield {"t": 0.0, "kind": "users", **params}
    n, ramp = params["users"], params["ramp"]
    starts = sorted((rng.random() * ramp if ramp > 0 else 0.0, i) for i in range(n))
    for t, i in starts:
        if t > duration:
            return
        yield {"t": t, "kind": "user", "id": i, "seed": rng.getrandbits(48)}
