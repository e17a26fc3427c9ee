"""Client retries: the model the queues panel runs and the breakers panel shares.

After a failure a client tries again at most ``retries`` times. Retry k (k = 1, 2, ...) waits
uniform(0, backoff * 2**(k-1)) seconds, "full jitter" (Brooker, "Exponential Backoff And Jitter",
AWS Architecture Blog, 2015), or goes at once when backoff is 0. With a retry budget (``budget`` >
0, as gRPC's retryThrottling and Finagle's RetryBudget) each new request earns ``budget`` tokens,
at most ``BUDGET_CAP`` banked, and a retry spends one: no whole token, no retry. The queue panel's
inlined loop (``inlined.py``) writes the same arithmetic out; ``tests/test_queues.py`` holds it to
the plain loop, which calls these.
"""

from __future__ import annotations

from random import Random

from sims.core.limits import MAX_DURATION
from sims.core.params import Param

BUDGET_CAP = 10.0  # retry tokens a client library banks at most

# the panel parameters of the backoff and the budget, the same in every topic that retries
RETRY_PARAMS = {
    "backoff": Param(
        float, 0.0, "retry k waits uniform(0, backoff * 2**(k-1)) seconds; 0 = at once", min=0.0, max=MAX_DURATION
    ),
    "retry_budget": Param(
        float,
        0.0,
        "retry tokens each new request earns (10 banked at most), one per retry; 0 = no budget",
        min=0.0,
        max=1e6,
    ),
}


def earn(tokens: float, budget: float) -> float:
    """The tokens after a new request earns its share (unchanged without a budget)."""
    return min(BUDGET_CAP, tokens + budget) if budget else tokens


def spend(attempt: int, limit: int, budget: float, tokens: float) -> float | None:
    """The tokens left once the failed attempt ``attempt`` (0 = the first try) is retried, or None
    when it may not be: its retries are used up, or the budget holds less than one token."""
    if attempt >= limit:
        return None
    if budget:
        if tokens < 1.0:
            return None
        return tokens - 1.0
    return tokens


def delay(backoff: float, attempt: int, rng: Random) -> float:
    """Seconds before the retry of failed attempt ``attempt``: full jitter over
    [0, backoff * 2**attempt); 0 (no draw) when backoff is 0."""
    return backoff * (1 << attempt) * rng.random() if backoff else 0.0
