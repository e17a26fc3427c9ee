"""The panel contract: one policy's view of the shared stream.

``Scenario`` drives every panel through one call, ``feed(events, lo, hi, until)``: handle
``events[lo:hi]`` in order (each at its time ``ev["t"]``), then run the panel's own timed work up to
``until``. The default ``feed`` is the generic loop over two hooks, ``advance(t)`` (timed work up to
t: engine steps, server completions, refills) and ``on_event(ev)``; a panel with a hot loop
overrides ``feed`` and inlines both, and must give the same result as the generic loop. A panel
never draws from the stream's generator; panel-local noise comes from ``ctx.rng(purpose)``.

Checkpoints are ``copy.deepcopy`` of the panels. ``Checkpointed.__deepcopy__`` (every ``Panel``
has it) copies attribute by attribute: a flat container (numbers, strings, tuples of them) at C
speed, anything else by a full deep copy, so a new list field can never be shared between a checkpoint and the
live run. ``Shared`` marks what never changes after construction (the context, a lookahead index):
checkpoints share it.
"""

from __future__ import annotations

import copy
import random
from collections import OrderedDict, defaultdict, deque
from dataclasses import dataclass
from itertools import chain
from typing import Any

from sims.core import rng as _rng

_ATOMIC = frozenset({int, float, str, bool, bytes, type(None)})
_ATOMIC_OR_TUPLE = _ATOMIC | {tuple}
_FLAT = frozenset({list, dict, set, deque, OrderedDict, defaultdict})
_SLOTS: dict[type, tuple[str, ...]] = {}


class Shared:
    """Read-only after construction: checkpoints share it instead of copying it."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> Shared:
        return self


def _flat(items: Any) -> bool:
    """Every item atomic, or a tuple of atomics (C-speed type scans, no Python loop per item)."""
    kinds = set(map(type, items))
    if kinds <= _ATOMIC:
        return True
    if tuple in kinds and kinds <= _ATOMIC_OR_TUPLE:
        return set(map(type, chain.from_iterable(x for x in items if type(x) is tuple))) <= _ATOMIC
    return False


def checkpoint_copy(value: Any, memo: dict) -> Any:
    """A deep copy of ``value``: atomics as they are; a flat container (items and keys atomic, or
    tuples of atomics) by one C-speed ``copy()``; a list or deque of containers item by item;
    anything else by ``copy.deepcopy``. ``memo`` is honoured, so an object reachable twice is
    copied once and stays shared within the copy."""
    t = type(value)
    if t in _ATOMIC:
        return value
    new = memo.get(id(value))
    if new is not None:
        return new
    if t not in _FLAT:
        return copy.deepcopy(value, memo)
    if isinstance(value, dict):
        if not (_flat(value.values()) and _flat(value)):
            return copy.deepcopy(value, memo)
        new = value.copy()
    elif _flat(value):
        new = value.copy()
    elif t is not set and set(map(type, value)) <= _FLAT:  # e.g. one queue per server
        new = value.copy()
        for i, item in enumerate(value):
            new[i] = checkpoint_copy(item, memo)
    else:
        return copy.deepcopy(value, memo)
    memo[id(value)] = new
    memo.setdefault(id(memo), []).append(value)  # keep it alive, as copy.deepcopy does
    return new


def _slots(cls: type) -> tuple[str, ...]:
    names = _SLOTS.get(cls)
    if names is None:
        found: list[str] = []
        for klass in cls.__mro__:
            slots = klass.__dict__.get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name not in ("__dict__", "__weakref__") and name not in found:
                    found.append(name)
        names = _SLOTS[cls] = tuple(found)
    return names


class Checkpointed:
    """Deep copies attribute by attribute through ``checkpoint_copy`` (see the module docstring)."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> Any:
        cls = type(self)
        new = cls.__new__(cls)
        memo[id(self)] = new
        for name in _slots(cls):
            if hasattr(self, name):
                object.__setattr__(new, name, checkpoint_copy(getattr(self, name), memo))
        state = getattr(self, "__dict__", None)
        if state is not None:
            new.__dict__.update({k: checkpoint_copy(v, memo) for k, v in state.items()})
        return new


@dataclass(frozen=True)
class PanelContext(Shared):
    """What a panel may know besides its parameters (shared by checkpoints: it never changes)."""

    seed: int
    duration: float
    events: list  # the whole stream: only oracles (OPT, sjf_oracle) may look ahead
    panel_name: str
    preset: Any = None

    def rng(self, purpose: str = "noise") -> random.Random:
        return _rng.derive(self.seed, f"panel:{self.panel_name}:{purpose}")


class Panel(Checkpointed):
    """Base class; subclasses set ``topic`` and implement ``metrics`` plus the hooks they need."""

    topic = ""

    def __init__(self, name: str, params: dict[str, Any], ctx: PanelContext) -> None:
        self.name = name
        self.params = params
        self.ctx = ctx

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        """The contract: handle ``events[lo:hi]`` in order, then run timed work up to ``until``.
        This default advances to each event, hands it to ``on_event``, then advances to ``until``."""
        advance = self.advance
        on_event = self.on_event
        for k in range(lo, hi):
            ev = events[k]
            advance(ev["t"])
            on_event(ev)
        advance(until)

    def on_event(self, ev: dict) -> None:
        """Handle one stream event at time ev["t"] (the panel was advanced to it first)."""

    def advance(self, until: float) -> None:
        """Run internal timed work up to ``until``."""

    def next_time(self) -> float | None:
        """Time of the next internal event, or None; lets ``step()`` stop at engine steps."""
        return None

    def metrics(self) -> dict[str, float]:
        raise NotImplementedError

    def view(self) -> dict[str, Any]:
        return {}

    def check_invariants(self) -> None:
        """Raise AssertionError if the panel's state is inconsistent."""

    # -- recording mode (sims/core/diverge.py): called only when decisions are asked for --------
    def decide(self, events: list[dict], k: int) -> Any:
        """Handle ``events[k]`` as ``feed(events, k, k + 1, t)`` would and return its ``Decision``
        (None: nothing decided). This default records nothing."""
        self.feed(events, k, k + 1, events[k]["t"])
        return None

    def explain(self, decision: Any, other: Any = None) -> str:
        """Right after ``decide``: one sentence of why, in the policy's terms."""
        return f"{self.name}: {decision.text}"
