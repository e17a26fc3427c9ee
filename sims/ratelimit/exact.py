"""Exact arithmetic for limiters. Trace times are written in decimal, and a boundary must land
where the decimal says: arrivals at 0.1 s and 0.3 s are 0.2 s apart, one whole token at 5/s,
while in floats (0.3 - 0.1) * 5 = 0.9999999999999999 and the second request would be refused.

So every limiter reads a time as the decimal its ``repr`` shows, as an integer count of
``1 / UNIT`` seconds (``ticks``: exact for any time >= 1 ms, whose repr has at most 19 decimals;
smaller ones round to 1e-20 s), and reads rates, capacities and windows the same way
(``decimal(x) = Fraction(repr(x))``: 0.1 is 1/10), scaled to integers once.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

PLACES = 20
UNIT = 10**PLACES  # ticks per second
_NS_TICKS = 10 ** (PLACES - 9)


def ticks(t: float) -> int:
    """``t`` seconds as an integer number of 1e-20 s: the decimal ``repr(t)`` shows, scaled.

    Fast path: a time with at most 9 decimals (a trace's) is ``n`` ns exactly when n / 1e9
    gives back ``t`` (below 10^6 s two such decimals cannot share a float)."""
    if -1e6 < t < 1e6:
        n = round(t * 1e9)
        if n / 1e9 == t:
            return n * _NS_TICKS
    return _ticks_of_repr(t)


@lru_cache(maxsize=1 << 14)  # panels of one scenario convert the same event times
def _ticks_of_repr(t: float) -> int:
    s = repr(t)
    whole, dot, frac = s.partition(".")
    if dot and len(frac) <= PLACES and "e" not in frac:
        return int(whole + frac + "0" * (PLACES - len(frac)))
    return round(Fraction(s) * UNIT)  # exponent notation (or too many places)


def decimal(x: float) -> Fraction:
    """A rate, capacity or window as the decimal it was written as: ``Fraction(repr(x))``."""
    return Fraction(repr(float(x)))
