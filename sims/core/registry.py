"""Registries: policies by (topic, name), topics, workload generators.

A topic is a package ``sims/<name>/`` that describes itself: its ``topic.toml`` (order, view
kinds, metrics with units and formats, default charts, key metrics, page content, extra pages and
controls) is read without importing the package, and its ``__init__`` registers the code side
(``register_topic``: panels, params, the trace command). Core discovers topics by that file; it
lists none. An unknown name raises ``ValueError`` listing the valid ones (vLLM's
``create_request_queue`` does the same). Topic packages and workload modules are imported lazily.
"""

from __future__ import annotations

import importlib
import pkgutil
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sims.core.limits import InputError
from sims.core.params import Param, State, coerce, resolve_params

_POLICIES: dict[str, dict[str, Any]] = {}
_TOPICS: dict[str, Topic] = {}
_WORKLOADS: dict[str, Workload] = {}
_INFOS: dict[str, TopicInfo] | None = None

SIMS = Path(__file__).resolve().parents[1]  # the sims package: one folder per topic
DESCRIPTOR = "topic.toml"  # what makes a subpackage of sims a topic
# a topic's `budget = {...}`: CPU microseconds of one panel per stream event, per virtual second (and
# per virtual second squared, for a history that grows), per token of a request; the bytes it keeps
# per event and in all (sims.core.budget)
BUDGET_KEYS = ("event_us", "second_us", "second2_us", "token_us", "event_bytes", "panel_bytes")


class EditRules:
    """How a topic's policies are edited: ``sims.core.policysource`` writes one out without the
    methods ``omit(cls)`` names, and ``sims.core.editpanel`` runs the class ``wrap(cls, steps)``
    returns (``steps``: the edit's step budget), for instance with the mechanism's contract checked
    at every decision. The default keeps the class as written."""

    not_editable: tuple[str, ...] = ()  # policies wired to something an edit cannot keep (an oracle)

    def wrap(self, cls: type, steps: Any) -> type:
        return cls

    def omit(self, cls: type) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True)
class Topic:
    """A topic: builds a panel for a policy name, and optionally serves ``contention trace``."""

    name: str
    make_panel: Callable[..., Any]  # (policy, panel_name, params, ctx) -> Panel
    panel_params: dict[str, Param] = field(default_factory=dict)  # shared by every policy
    trace: Any = None  # a sims.core.trace.TraceSpec, or None
    edit: EditRules = field(default_factory=EditRules)  # how its policies are edited


@dataclass(frozen=True)
class Metric:
    """A metric a topic's panels report, as the front end shows it."""

    unit: str  # "s", "ratio" (in [0, 1]), "count", "tokens", "bytes", "tok/s", "×", ...
    format: str  # "int" | "percent" | "seconds" | "bytes" | "number"


@dataclass(frozen=True)
class TopicInfo:
    """What ``sims/<name>/topic.toml`` declares: everything about a topic that is data."""

    name: str
    order: int  # menus and listings sort by (order, name)
    views: tuple[str, ...]  # view kinds its panels return (its renderer draws them)
    charts: tuple[str, ...]  # default time-series charts
    key_metrics: tuple[str, ...]  # shown up front
    metrics: MappingProxyType  # name -> Metric, every metric its panels report
    page: MappingProxyType  # the topic page's text, tables and quizzes (site build)
    pages: tuple[MappingProxyType, ...] = ()  # extra pages: {slug, title, ...}, one per algorithm say
    controls: tuple[MappingProxyType, ...] = ()  # topic-specific controls: {name, kind, ...}
    budget: MappingProxyType = field(
        default_factory=lambda: MappingProxyType({})
    )  # a panel's cost per event and second (sims.core.budget)

    def as_json(self) -> dict[str, Any]:
        """The JSON-able parts a preset's meta carries (``api.describe``)."""
        return {
            "views": list(self.views),
            "metrics": {k: {"unit": m.unit, "format": m.format} for k, m in self.metrics.items()},
            "topic_controls": [dict(c) for c in self.controls],
        }


@dataclass(frozen=True)
class Workload:
    """A stream generator: ``fn(params, rng, duration)`` yields events in time order."""

    kind: str
    fn: Callable[..., Any]
    params: dict[str, Param]
    doc: str = ""
    # (params, horizon) -> (events, tokens per event) for the budget, where the stream is not the
    # work: a closed loop's requests are made by the panels (sims/workloads/users.py)
    estimate: Callable[[dict, float], tuple[float, float]] | None = None


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


@contextmanager
def policy_in_place(topic: str, name: str, cls: Any) -> Iterator[None]:
    """While the block runs, ``get_policy(topic, name)`` returns ``cls`` (an edited policy, which
    its topic's ``make_panel`` then builds as it builds its own); the registry is restored after."""
    table = _POLICIES.setdefault(topic, {})
    before = table.get(name)
    table[name] = cls
    try:
        yield
    finally:
        if before is None:
            del table[name]
        else:
            table[name] = before


def register_topic(topic: Topic) -> Topic:
    _TOPICS[topic.name] = topic
    return topic


def workload(
    kind: str, estimate: Callable[[dict, float], tuple[float, float]] | None = None, **params: Param
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Function decorator registering a workload generator with its declared parameters
    (``estimate``: see ``Workload.estimate``)."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        _WORKLOADS[kind] = Workload(kind, fn, dict(params), (fn.__doc__ or "").strip(), estimate)
        return fn

    return deco


def _unknown(what: str, name: str, valid: list[str]) -> InputError:
    return InputError(f"unknown {what} {name!r}; valid: {', '.join(sorted(valid)) or '(none)'}")


def _read_info(name: str, path: Path) -> TopicInfo:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: {exc}") from None
    metrics = {}
    for key, m in raw.get("metrics", {}).items():
        if not (isinstance(m, dict) and isinstance(m.get("unit"), str) and isinstance(m.get("format"), str)):
            raise ValueError(f'{path}: metrics.{key}: expected {{ unit = "...", format = "..." }}')
        metrics[key] = Metric(m["unit"], m["format"])
    for table, keys in (("pages", ("slug", "title")), ("controls", ("name", "kind"))):
        for i, entry in enumerate(raw.get(table, ())):
            for key in keys:
                if not (isinstance(entry, dict) and isinstance(entry.get(key), str) and entry[key]):
                    raise ValueError(f"{path}: {table}[{i}].{key}: expected a non-empty string")
            if table == "pages" and not all(c.isalnum() or c in "-_" for c in entry["slug"]):
                raise ValueError(f"{path}: pages[{i}].slug: letters, digits, '-' and '_' only, got {entry['slug']!r}")
    budget = raw.get("budget", {})
    if not isinstance(budget, dict):
        raise ValueError(f"{path}: budget: expected a table of numbers")
    for key, value in budget.items():
        if key not in BUDGET_KEYS or isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"{path}: budget.{key}: expected one of {', '.join(BUDGET_KEYS)} = a number >= 0")
    order = raw.get("order", 1000)
    if isinstance(order, bool) or not isinstance(order, int):
        raise ValueError(f"{path}: field 'order': expected an integer, got {order!r}")
    return TopicInfo(
        name=name,
        order=order,
        views=tuple(raw.get("views", ())),
        charts=tuple(raw.get("charts", ())),
        key_metrics=tuple(raw.get("key_metrics", ())),
        metrics=MappingProxyType(metrics),
        page=MappingProxyType(raw.get("page", {})),
        pages=tuple(MappingProxyType(p) for p in raw.get("pages", ())),
        controls=tuple(MappingProxyType(c) for c in raw.get("controls", ())),
        budget=MappingProxyType(dict(budget)),
    )


def _infos() -> dict[str, TopicInfo]:
    """Every topic's descriptor, in (order, name) order; read once, importing no topic."""
    global _INFOS
    if _INFOS is None:
        found = [
            _read_info(m.name, SIMS / m.name / DESCRIPTOR)
            for m in pkgutil.iter_modules([str(SIMS)])
            if m.ispkg and (SIMS / m.name / DESCRIPTOR).is_file()
        ]
        _INFOS = {i.name: i for i in sorted(found, key=lambda i: (i.order, i.name))}
    return _INFOS


def topic_names() -> list[str]:
    """The discovered topics, in menu order."""
    return list(_infos())


_ONE: dict[str, TopicInfo] = {}  # descriptors read one at a time, before every topic is needed


def _one_info(name: object) -> TopicInfo | None:
    """Topic ``name``'s descriptor read alone (a run needs one topic, not all of them); None when
    ``name`` is no topic folder by the test ``_infos`` makes."""
    info = _ONE.get(name) if isinstance(name, str) else None
    if info is None and isinstance(name, str) and name.isidentifier():
        path = SIMS / name / DESCRIPTOR
        if path.is_file() and (SIMS / name / "__init__.py").is_file():
            info = _ONE[name] = _read_info(name, path)
    return info


def has_topic(name: object) -> bool:
    return (_INFOS is None and _one_info(name) is not None) or name in _infos()


def topic_info(name: str) -> TopicInfo:
    """What topic ``name`` declares about itself (its ``topic.toml``)."""
    if _INFOS is None:
        info = _one_info(name)
        if info is not None:
            return info
    infos = _infos()
    if name not in infos:
        raise _unknown("topic", name, list(infos))
    return infos[name]


def load_topic(name: str) -> Topic:
    """The topic ``name``'s code side, importing its package on first use."""
    topic_info(name)
    if name not in _TOPICS:
        importlib.import_module(f"sims.{name}")
    if name not in _TOPICS:
        raise ValueError(f"sims/{name}/__init__.py does not call register_topic({name!r}, ...)")
    return _TOPICS[name]


def policies(topic: str) -> dict[str, Any]:
    load_topic(topic)
    return dict(_POLICIES.get(topic, {}))


def get_policy(topic: str, name: str) -> Any:
    table = policies(topic)
    if name not in table:
        raise _unknown(f"{topic} policy", name, list(table))
    return table[name]


def _load_workloads(kind: str | None = None) -> None:
    """The shared generators in sims/workloads/, then each topic's own ``workload`` module (a topic
    that brings its own generator keeps it in its package), unless ``kind`` is already found."""
    import importlib.util

    import sims.workloads as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        importlib.import_module(f"sims.workloads.{info.name}")
    if kind is not None and kind in _WORKLOADS:  # a shared one: importing every topic is not needed
        return
    for name in topic_names():
        if importlib.util.find_spec(f"sims.{name}.workload") is not None:
            importlib.import_module(f"sims.{name}.workload")


def get_workload(kind: str) -> Workload:
    if kind not in _WORKLOADS:
        _load_workloads(kind)
    if kind not in _WORKLOADS:
        raise _unknown("workload kind", kind, list(_WORKLOADS))
    return _WORKLOADS[kind]


def workloads() -> dict[str, Workload]:
    _load_workloads()
    return dict(_WORKLOADS)


__all__ = [
    "Metric",
    "Param",
    "State",
    "Topic",
    "TopicInfo",
    "Workload",
    "coerce",
    "get_policy",
    "get_workload",
    "has_topic",
    "load_topic",
    "policies",
    "policy_in_place",
    "register_policy",
    "register_topic",
    "resolve_params",
    "topic_info",
    "topic_names",
    "workload",
    "workloads",
]
