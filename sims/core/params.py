"""Declared parameters: what a preset may set, each value's type and range, and what it costs.

Every number has a declared maximum and every list a most number of items (``tests/test_bounds.py``
walks every topic, policy and workload), so no single value can ask for more than a tab or a
laptop holds. What values cost together (replicas x KV blocks, groups x prompts, a rate x the
duration) is ``sims.core.budget``'s, from the ``state`` and ``work`` each parameter declares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sims.core.limits import InputError, show


@dataclass(frozen=True)
class State:
    """Memory a parameter's value makes a panel (or a workload) hold, for ``sims.core.budget``:
    ``bytes`` per unit of the value, built at once (a preallocated table), and ``fill`` bytes per
    unit that the stream fills in (a cache entry: at most one per event); divided by the value of
    the parameter ``per`` and multiplied by the values of ``times`` (names in the same table; a
    name "a+b" multiplies by the sum). A value of 0 that means "derived" counts as ``zero``."""

    bytes: float = 0.0
    fill: float = 0.0
    per: str = ""
    times: tuple[str, ...] = ()
    zero: float = 0.0


@dataclass(frozen=True)
class Param:
    """One declared parameter: its type, default (None = required), a short help text and its
    valid range, checked when a preset loads: ``min``/``max`` inclusive, ``above`` exclusive
    (``above=0`` for a rate), ``choices`` for strings, ``max_items`` for lists. Floats must be
    finite. ``state`` and ``work`` feed the budget: the memory the value makes a panel hold, and
    the exponent by which the panel's CPU cost grows with the value (relative to the default:
    replicas 1, a heartbeat interval -1)."""

    type: type
    default: Any = None
    help: str = ""
    required: bool = False
    min: float | None = None
    max: float | None = None
    above: float | None = None
    choices: tuple = ()
    max_items: int | None = None
    state: State | None = None
    work: float = 0.0

    def expected(self) -> str:
        """The valid range in words, for error messages."""
        parts = []
        if self.above is not None:
            parts.append(f"> {_num(self.above)}")
        if self.min is not None:
            parts.append(f">= {_num(self.min)}")
        if self.max is not None:
            parts.append(f"<= {_num(self.max)}")
        if self.choices:
            return "one of " + ", ".join(map(repr, self.choices))
        return " and ".join(parts)


def _num(x: float) -> str:
    """``x`` short (``1e+06``) when that is exact, else in full (``4,194,304``, not ``4.1943e+06``)."""
    short = f"{x:g}"
    if float(short) == x:
        return short
    return f"{int(x):,}" if float(x).is_integer() else repr(x)


def coerce(value: Any, spec: Param, where: str) -> Any:
    """Check ``value`` against ``spec`` (type, then range); ints are accepted for floats. Raises
    InputError naming ``where`` and what was expected."""
    value = _coerce_type(value, spec, where)
    if spec.type in (int, float) and not isinstance(value, bool):
        if spec.type is float and not math.isfinite(value):
            raise InputError(f"{where}: expected a finite number, got {value!r}")
        if (
            (spec.above is not None and not value > spec.above)
            or (spec.min is not None and value < spec.min)
            or (spec.max is not None and value > spec.max)
        ):
            raise InputError(f"{where}: expected {spec.expected()}, got {show(value)}")
    if spec.choices and value not in spec.choices:
        raise InputError(f"{where}: expected {spec.expected()}, got {show(value)}")
    if spec.max_items is not None and len(value) > spec.max_items:
        raise InputError(f"{where}: expected at most {spec.max_items:,} items, got {len(value):,}")
    return value


def _coerce_type(value: Any, spec: Param, where: str) -> Any:
    t = spec.type
    if t is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise InputError(f"{where}: expected a finite number, got {show(value)}") from None
    if t is int and isinstance(value, bool):
        raise InputError(f"{where}: expected an integer, got {value!r}")
    if t is int and isinstance(value, float) and value.is_integer():
        return int(value)  # JSON from a browser slider: 120.0 means 120
    if t is list:
        if not isinstance(value, list):
            raise InputError(f"{where}: expected a list, got {type(value).__name__} {show(value)}")
        return value
    if not isinstance(value, t):
        raise InputError(f"{where}: expected {t.__name__}, got {type(value).__name__} {show(value)}")
    return value


def resolve_params(specs: dict[str, Param], given: dict[str, Any], where: str) -> dict[str, Any]:
    """Validate ``given`` against ``specs``: unknown names, wrong types and missing required
    values raise InputError naming the field. Returns the params with defaults filled in."""
    out = {}
    for key, value in given.items():
        if key not in specs:
            raise InputError(f"{where}.{key}: unknown parameter; valid: {', '.join(sorted(specs)) or '(none)'}")
        out[key] = coerce(value, specs[key], f"{where}.{key}")
    for key, spec in specs.items():
        if key not in out:
            if spec.required:
                raise InputError(f"{where}.{key}: required ({spec.type.__name__}) but missing")
            out[key] = spec.default
    return out


__all__ = ["Param", "State", "coerce", "resolve_params"]
