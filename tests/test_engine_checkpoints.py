"""Checkpoints of engine and cluster panels share nothing mutable with the live run: for every
engine and cluster preset, a checkpoint taken mid-run and the live panels have no list, dict, set,
deque or mutable object in common, except what both reach through the shared stream (the
``PanelContext``'s events, whose segments the requests point at). The copies are partly written
by hand (``Seq``, the lazy prefix roots), so a field added there and not copied shows up here."""

from __future__ import annotations

import dataclasses
import random
from collections import deque
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType

import pytest

from sims.core import presets
from sims.core.panel import Shared
from sims.core.scenario import Scenario

NAMES = sorted(n for n in presets.preset_names() if presets.load(n).topic in ("engine", "cluster"))

_ATOMIC = (int, float, str, bool, bytes, complex, type(None), range)
_CODE = (type, ModuleType, FunctionType, BuiltinFunctionType)


def _slot_names(cls: type) -> list[str]:
    out = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        out += [slots] if isinstance(slots, str) else list(slots)
    return [n for n in out if n not in ("__dict__", "__weakref__")]


def _immutable(x) -> bool:
    if isinstance(x, (tuple, frozenset)):  # named tuples (Record, Preempted) included
        return True
    return dataclasses.is_dataclass(x) and x.__dataclass_params__.frozen


def reachable(root, into_shared: bool = False) -> dict[int, object]:
    """Every object reachable from ``root`` (by id), through containers, instance fields and bound
    methods; a ``Shared`` object is not entered unless ``into_shared``."""
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        x = stack.pop()
        if isinstance(x, _ATOMIC) or isinstance(x, _CODE) or id(x) in seen:
            continue
        if isinstance(x, Shared) and not into_shared:
            continue
        seen[id(x)] = x
        if isinstance(x, dict):
            stack += x.keys()
            stack += x.values()
        elif isinstance(x, (list, tuple, deque, set, frozenset)):
            stack += x
        elif isinstance(x, MethodType):
            stack.append(x.__self__)
        elif not isinstance(x, random.Random):  # its state is C-level, copied whole
            stack += getattr(x, "__dict__", {}).values()
            stack += [getattr(x, n) for n in _slot_names(type(x)) if hasattr(x, n)]
    return seen


def shared_mutables(live, copy, context) -> list[str]:
    """The mutable objects ``live`` and ``copy`` both reach, less those the ``context`` reaches."""
    allowed = reachable(context, into_shared=True)
    mine = reachable(live)
    both = [x for i, x in reachable(copy).items() if i in mine and i not in allowed and not _immutable(x)]
    return [f"{type(x).__name__}: {str(x)[:80]}" for x in both]


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", NAMES)
def test_a_checkpoint_shares_nothing_mutable_with_the_live_panels(name):
    p = presets.load(name)
    duration = min(p.duration, p.ci_duration or 60.0, 60.0)
    sc = Scenario(p, duration=duration)
    sc.advance(duration / 2)
    sc.checkpoint()
    saved = sc._checkpoints[-1][2]
    for panel_name, live in sc.panels.items():
        found = shared_mutables(live, saved[panel_name], live.ctx)
        assert not found, f"{name}/{panel_name}: a checkpoint shares {len(found)} objects, e.g. {found[:3]}"
    assert any(getattr(p, "engine", None) or getattr(p, "engines", None) for p in sc.panels.values())


def test_the_check_finds_a_field_a_hand_written_copy_forgets():
    sc = Scenario(presets.load("prefix-sharing"), duration=20.0)
    sc.advance(10.0)
    live = next(iter(sc.panels.values()))
    seqs = live.engine.holders()
    assert seqs
    seqs[0].group = [1, 1, 0, 0]  # Seq's copy deep-copies ``group``: not shared ...
    sc.checkpoint()
    assert not shared_mutables(live, sc._checkpoints[-1][2][live.name], live.ctx)
    seqs[0].segments = [["mine", 3]]  # ... but shares ``segments``, trusting they are the stream's
    sc.checkpoint()
    assert shared_mutables(live, sc._checkpoints[-1][2][live.name], live.ctx)
