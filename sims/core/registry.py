"""Registries: policies by (topic, name), topics, workload generators.

An unknown name raises ``ValueError`` listing the valid ones (vLLM's ``create_request_queue``
does the same). Topic packages and workload modules are imported lazily, on first use.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_POLICIES: dict[str, dict[str, Any]] = {}
_TOPICS: dict[str, Topic] = {}
_WORKLOADS: dict[str, Workload] = {}

TOPIC_NAMES = ("alloc", "paging", "cache", "ratelimit", "balance", "hashing", "engine", "cluster", "queues")


@dataclass(frozen=True)
class Param:
    """One declared parameter: its type, default (None = required) and a short help text."""

    type: type
    default: Any = None
    help: str = ""
    required: bool = False


@dataclass(frozen=True)
class Topic:
    """A topic: builds a panel for a policy name, and optionally serves ``contention trace``."""

    name: str
    make_panel: Callable[..., Any]  # (policy, panel_name, params, ctx) -> Panel
    panel_params: dict[str, Param] = field(default_factory=dict)  # shared by every policy
    trace: Any = None  # a sims.core.trace.TraceSpec, or None


@dataclass(frozen=True)
class Workload:
    """A stream generator: ``fn(params, rng, duration)`` yields events in time order."""

    kind: str
    fn: Callable[..., Any]
    params: dict[str, Param]
    doc: str = ""


def register_policy(topic: str, name: str) -> Callable[[Any], Any]:
    """Class decorator: register ``cls`` as policy ``name`` of ``topic``."""

    def deco(obj: Any) -> Any:
        table = _POLICIES.setdefault(topic, {})
        if name in table and table[name] is not obj:
            raise ValueError(f"policy {topic}/{name} registered twice")
        table[name] = obj
        obj.policy_name = name
        return obj

    return deco


def register_topic(topic: Topic) -> Topic:
    _TOPICS[topic.name] = topic
    return topic


def workload(kind: str, **params: Param) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Function decorator registering a workload generator with its declared parameters."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        _WORKLOADS[kind] = Workload(kind, fn, dict(params), (fn.__doc__ or "").strip())
        return fn

    return deco


def _unknown(what: str, name: str, valid: list[str]) -> ValueError:
    return ValueError(f"unknown {what} {name!r}; valid: {', '.join(sorted(valid)) or '(none)'}")


def load_topic(name: str) -> Topic:
    """The topic ``name``, importing its package on first use."""
    if name not in TOPIC_NAMES:
        raise _unknown("topic", name, list(TOPIC_NAMES))
    if name not in _TOPICS:
        try:
            importlib.import_module(f"sims.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"sims.{name}":
                raise
    if name not in _TOPICS:
        raise ValueError(f"topic {name!r} is not implemented yet")
    return _TOPICS[name]


def policies(topic: str) -> dict[str, Any]:
    load_topic(topic)
    return dict(_POLICIES.get(topic, {}))


def get_policy(topic: str, name: str) -> Any:
    table = policies(topic)
    if name not in table:
        raise _unknown(f"{topic} policy", name, list(table))
    return table[name]


def _load_workloads() -> None:
    import sims.workloads as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        importlib.import_module(f"sims.workloads.{info.name}")


def get_workload(kind: str) -> Workload:
    if kind not in _WORKLOADS:
        _load_workloads()
    if kind not in _WORKLOADS:
        raise _unknown("workload kind", kind, list(_WORKLOADS))
    return _WORKLOADS[kind]


def workloads() -> dict[str, Workload]:
    _load_workloads()
    return dict(_WORKLOADS)


def coerce(value: Any, spec: Param, where: str) -> Any:
    """Check ``value`` against ``spec``; ints are accepted for floats. Raises ValueError naming
    ``where`` and what was expected."""
    t = spec.type
    if t is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if t is int and isinstance(value, bool):
        raise ValueError(f"{where}: expected an integer, got {value!r}")
    if t is int and isinstance(value, float) and value.is_integer():
        return int(value)  # JSON from a browser slider: 120.0 means 120
    if t is list:
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list, got {type(value).__name__} {value!r}")
        return value
    if not isinstance(value, t):
        raise ValueError(f"{where}: expected {t.__name__}, got {type(value).__name__} {value!r}")
    return value


def resolve_params(specs: dict[str, Param], given: dict[str, Any], where: str) -> dict[str, Any]:
    """Validate ``given`` against ``specs``: unknown names, wrong types and missing required
    values raise ValueError naming the field. Returns the params with defaults filled in."""
    out = {}
    for key, value in given.items():
        if key not in specs:
            raise ValueError(f"{where}.{key}: unknown parameter; valid: {', '.join(sorted(specs)) or '(none)'}")
        out[key] = coerce(value, specs[key], f"{where}.{key}")
    for key, spec in specs.items():
        if key not in out:
            if spec.required:
                raise ValueError(f"{where}.{key}: required ({spec.type.__name__}) but missing")
            out[key] = spec.default
    return out
