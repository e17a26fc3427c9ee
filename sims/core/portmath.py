"""Portable exp/log/pow/sin/cos: IEEE basic operations only (+ - * /, sqrt, frexp, ldexp).

CPython and Pyodide link different libms, so ``math.exp``/``math.log``/``**`` can differ in the
last bit between runtimes. Everything on a simulation's decision path uses these instead; they
follow fdlibm (``e_exp.c``, ``e_log.c``) and give the same bits everywhere.
"""

from __future__ import annotations

from math import frexp, inf, isnan, ldexp, nan, sqrt

_LN2_HI = 6.93147180369123816490e-01  # low 32 bits zero: k * _LN2_HI is exact for |k| < 2**20
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_SQRT_HALF = 0.70710678118654752440

# exp: remez polynomial for R(r^2) on [-0.5 ln2, 0.5 ln2]
_P1 = 1.66666666666666019037e-01
_P2 = -2.77777777770155933842e-03
_P3 = 6.61375632143793436117e-05
_P4 = -1.65339022054652515390e-06
_P5 = 4.13813679705723846039e-08

# log: remez polynomial for log(1+f) - 2s ... on s = f / (2 + f)
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01

_EXP_OVERFLOW = 7.09782712893383973096e02
_EXP_UNDERFLOW = -7.45133219101941108420e02
_SPLIT = 134217729.0  # 2**27 + 1, Dekker's splitter


def _exp_hilo(hi: float, lo: float, k: int) -> float:
    """exp(hi - lo) * 2**k, the fdlibm kernel; |hi - lo| <= 0.5 ln2 (roughly)."""
    x = hi - lo
    t = x * x
    c = x - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    y = 1.0 - ((lo - (x * c) / (2.0 - c)) - hi)
    return ldexp(y, k)


def exp(x: float) -> float:
    """e**x, within 1 ulp of the correctly rounded result."""
    if isnan(x):
        return nan
    if x > _EXP_OVERFLOW:
        return inf
    if x < _EXP_UNDERFLOW:
        return 0.0
    ax = -x if x < 0 else x
    if ax > 0.5 * _LN2_HI:
        k = int(_INV_LN2 * x + (0.5 if x > 0 else -0.5))
        hi = x - k * _LN2_HI
        lo = k * _LN2_LO
        return _exp_hilo(hi, lo, k)
    if ax < 3.725290298461914e-09:  # 2**-28
        return 1.0 + x
    return _exp_hilo(x, 0.0, 0)


def _reduce(x: float) -> tuple[int, float]:
    """x = 2**k * (1 + f) with sqrt(1/2) <= 1 + f < sqrt(2); f is exact."""
    m, k = frexp(x)
    if m < _SQRT_HALF:
        m *= 2.0
        k -= 1
    return k, m - 1.0


def log(x: float) -> float:
    """Natural logarithm, within 1 ulp."""
    if not 0.0 < x < inf:  # nan, x <= 0 and infinity: one comparison for the usual x (each draw)
        if isnan(x) or x < 0:
            return nan
        return -inf if x == 0 else inf
    m, k = frexp(x)  # _reduce, inlined (the same operations)
    if m < _SQRT_HALF:
        m *= 2.0
        k -= 1
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    r = t2 + t1
    hfsq = 0.5 * f * f
    if k == 0:
        return f - (hfsq - s * (hfsq + r))
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def _two_sum(a: float, b: float) -> tuple[float, float]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: float) -> tuple[float, float]:
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a: float, b: float) -> tuple[float, float]:
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _log_dd(x: float) -> tuple[float, float]:
    """log(x) as an unevaluated sum hi + lo, about 2**-70 relative error; x > 0 finite."""
    k, f = _reduce(x)
    dh, dl = _two_sum(2.0, f)
    sh = f / dh
    ph, pl = _two_prod(sh, dh)
    sl = ((f - ph) - pl - sh * dl) / dh
    t = sh * sh
    # 2 s^3 (1/3 + t/5 + t^2/7 + ...), |t| < 0.0295: 12 terms reach below 2**-64
    poly = 0.0
    for n in range(25, 1, -2):
        poly = 1.0 / n + t * poly
    tail = 2.0 * sh * t * poly
    hi, lo = _two_sum(k * _LN2_HI, 2.0 * sh)
    lo += k * _LN2_LO + 2.0 * sl + tail
    return _two_sum(hi, lo)


def pow(x: float, y: float) -> float:  # noqa: A001 - mirrors math.pow
    """x**y for x > 0 (and the trivial cases), within 1 ulp over the ranges the sims use."""
    if y == 0:
        return 1.0
    if isnan(x) or isnan(y):
        return nan
    if x == 1.0:
        return 1.0
    if x < 0:
        raise ValueError(f"portmath.pow needs x >= 0, got {x!r}")
    if x == 0:
        return 0.0 if y > 0 else inf
    if x == inf:
        return inf if y > 0 else 0.0
    lh, ll = _log_dd(x)
    ph, pl = _two_prod(y, lh)
    pl += y * ll
    ph, pl = _two_sum(ph, pl)
    if ph > _EXP_OVERFLOW:
        return inf
    if ph < _EXP_UNDERFLOW:
        return 0.0
    k = int(_INV_LN2 * ph + (0.5 if ph > 0 else -0.5))
    hi = ph - k * _LN2_HI
    lo = k * _LN2_LO - pl
    return _exp_hilo(hi, lo, k)


_TWO_PI = 6.283185307179586
_PI = 3.141592653589793


def sin(x: float) -> float:
    """sin(x) by reduction to [-pi, pi] and a Taylor polynomial; deterministic, ~1e-15 abs."""
    r = x - _TWO_PI * int(x / _TWO_PI)
    if r > _PI:
        r -= _TWO_PI
    elif r < -_PI:
        r += _TWO_PI
    # fold to [-pi/2, pi/2]
    if r > _PI / 2:
        r = _PI - r
    elif r < -_PI / 2:
        r = -_PI - r
    r2 = r * r
    term = r
    total = r
    for n in range(1, 12):
        term = -term * r2 / ((2 * n) * (2 * n + 1))
        total += term
    return total


def cos(x: float) -> float:
    """cos(x) = sin(x + pi/2); deterministic."""
    return sin(x + _PI / 2)


__all__ = ["cos", "exp", "log", "pow", "sin", "sqrt"]
