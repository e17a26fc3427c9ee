"""Concept pages' content: one TOML file per registered policy, ``sims/<topic>/concepts/<name>.toml``
(docs/concepts.md), read and checked into a frozen ``Concept``.

Strict: an unknown field, a missing section, a figure preset or panel that does not exist, a step
action outside ``ACTIONS``, an alias to an unknown name, each raise ``ConceptError`` in one line
naming the file and the field. ``missing(topic)`` names the registered policies without a file;
``concept_plan`` turns the steps into the figure states they leave (and checks their ``expect``).
Core lists no topics: a topic's concepts are the files in its folder, its names the registry's.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sims.core import registry
from sims.core.concept_fields import TOP_FIELDS, ConceptError, Table
from sims.core.limits import show

FOLDER = "concepts"  # inside a topic's package
ACTIONS = ("seek", "play", "step", "panels", "set", "inject")  # a step's vocabulary (docs/concepts.md)
SPEEDS = (0.25, 10.0)  # the element's speed range (web/static/js/driver.js)
__all__ = ["ACTIONS", "Concept", "ConceptError", "Figure", "Quiz", "Step", "folder", "load", "missing", "parse", "read"]
_TAG = re.compile(r"^[a-z0-9][a-z0-9+ -]*$")
_URL = re.compile(r"^https?://\S+$")


@dataclass(frozen=True)
class Figure:
    preset: str  # a preset's name, of this topic or another
    panels: tuple[str, ...]  # panel names of that preset; the concept's own first
    caption: str
    at: float = 0.0  # virtual seconds the figure opens at
    speed: float | None = None  # None: the preset's default speed
    overrides: tuple[tuple[str, Any], ...] = ()  # the link's o.KEY pairs, in file order


@dataclass(frozen=True)
class Step:
    text: str  # what the button says will happen
    action: dict  # exactly one verb of ACTIONS, with its companions (until, at)
    expect: dict | None = None  # {metric, panels best first, higher_is_better, margin?}


@dataclass(frozen=True)
class Quiz:
    question: str
    metric: str
    pick: str  # "max" | "min"
    at: float
    answer: str  # the panel the figure shows winning; checked by concept_plan
    explain: str


@dataclass(frozen=True)
class Concept:
    topic: str
    name: str  # the registered policy name, also the page's slug
    path: str
    alias_of: str = ""  # set: the page redirects there and every other field is empty
    title: str = ""
    summary: str = ""
    tags: tuple[str, ...] = ()
    figure: Figure | None = None
    what: tuple[str, ...] = ()
    how: tuple[str, ...] = ()
    when: tuple[str, ...] = ()
    pros: tuple[str, ...] = ()
    cons: tuple[str, ...] = ()
    pseudocode: str = ""
    real: tuple[dict, ...] = ()  # {system, note, source}
    steps: tuple[Step, ...] = ()
    quiz: tuple[Quiz, ...] = ()
    reading: tuple[dict, ...] = ()  # {title, url}
    code: tuple[str, ...] = ()  # "module:Qualname" shown instead of the registered class (see docs)

    @property
    def slug(self) -> str:
        return f"{self.topic}/{self.name}"


# -- one file -------------------------------------------------------------------------------------


def parse(raw: dict, topic: str, name: str, path: str) -> Concept:
    """Validate a parsed concept file (``name``: the policy it is about) into a Concept."""
    top = Table(raw, path, "")
    if "alias_of" in raw:
        top.only("alias_of")
        target = top.text("alias_of")
        names = registry.policies(topic)
        if target not in names or target == name:
            raise top.fail(
                "alias_of", f"no other registered {topic} policy {show(target)}; valid: {', '.join(sorted(names))}"
            )
        return Concept(topic, name, path, alias_of=target)
    top.only(*TOP_FIELDS)
    figure = _figure(Table(raw.get("figure"), path, "figure") if "figure" in raw else None, top, topic, name)
    preset = figure_preset(figure, path)
    steps = tuple(_step(t, preset, figure) for t in top.tables("steps", least=3))
    quiz = tuple(_quiz(t, preset, figure) for t in top.tables("quiz"))
    real = []
    for t in top.tables("real"):
        t.only("system", "note", "source")
        real.append({"system": t.text("system"), "note": t.text("note"), "source": _url(t, "source")})
    reading = []
    for t in top.tables("reading"):
        t.only("title", "url")
        reading.append({"title": t.text("title"), "url": _url(t, "url")})
    pseudo = raw.get("pseudocode", "")
    if not isinstance(pseudo, str):
        raise top.fail("pseudocode", f"expected text, got {show(pseudo)}")
    return Concept(
        topic,
        name,
        path,
        title=top.text("title"),
        summary=top.text("summary"),
        tags=top.lines("tags", pattern=_TAG),
        figure=figure,
        what=top.lines("what"),
        how=top.lines("how"),
        when=top.lines("when"),
        pros=top.lines("pros"),
        cons=top.lines("cons"),
        pseudocode=pseudo.strip("\n"),
        real=tuple(real),
        steps=steps,
        quiz=quiz,
        reading=tuple(reading),
        code=_code(top) if "code" in raw else (),
    )


def _code(t: Table) -> tuple[str, ...]:
    """Objects whose source the page shows ("module:Qualname"), each checked to resolve."""
    import importlib
    import inspect

    names = t.lines("code")
    for i, ref in enumerate(names):
        module, _, qual = ref.partition(":")
        try:
            obj = importlib.import_module(module)
            for part in qual.split("."):
                obj = getattr(obj, part)
            inspect.getsource(obj)
        except (ImportError, AttributeError, TypeError, OSError, ValueError) as exc:
            raise t.fail(
                f"code[{i}]", f'expected "module:Qualname" of sims code with a source, got {show(ref)} ({exc})'
            ) from None
        if not module.startswith("sims.") or not qual:
            raise t.fail(f"code[{i}]", f'expected "sims.module:Qualname", got {show(ref)}')
    return names


def _url(t: Table, key: str) -> str:
    url = t.text(key)
    if not _URL.match(url):
        raise t.fail(key, f"expected an http(s) address, got {show(url)}")
    return url


def _figure(t: Table | None, top: Table, topic: str, name: str) -> Figure:
    if t is None:
        raise top.fail("figure", "missing (a [figure] table: preset, panels, caption)")
    t.only("preset", "panels", "caption", "at", "speed", "overrides")
    from sims.core import presets

    preset_name = t.text("preset")
    if preset_name not in presets.preset_names():
        raise t.fail("preset", f"no preset {show(preset_name)}")
    panels = t.lines("panels")
    overrides = t.raw.get("overrides", {})
    if not isinstance(overrides, dict):
        raise t.fail("overrides", f'expected a table like {{ "defaults.size" = 80 }}, got {show(overrides)}')
    speed = t.number("speed", required=False)
    if speed is not None and not SPEEDS[0] <= speed <= SPEEDS[1]:
        raise t.fail("speed", f"expected {SPEEDS[0]:g} to {SPEEDS[1]:g}, got {speed:g}")
    at = t.number("at", required=False) or 0.0
    fig = Figure(preset_name, panels, t.text("caption"), at, speed, tuple(overrides.items()))
    preset = figure_preset(fig, t.where)
    valid = preset.panel_names()
    for i, p in enumerate(panels):
        if p not in valid:
            raise t.fail(f"panels[{i}]", f"no panel {show(p)} in {preset.name}; valid: {', '.join(valid)}")
    if len(set(panels)) != len(panels):
        raise t.fail("panels", "a panel is named twice")
    spec = next(s for s in preset.panels if s.name == panels[0])
    if spec.policy != name and name not in spec.params.values():
        raise t.fail(
            "panels[0]", f"panel {spec.name!r} runs {spec.policy!r}, not {name!r}: the concept's own panel goes first"
        )
    _time(t, "at", fig.at, preset)
    return fig


_PRESETS: dict[str, Any] = {}  # (preset, overrides) -> the checked preset: parsing one builds its panels


def figure_preset(fig: Figure, where: str):
    """The figure's preset with its overrides applied (a bad override names the field)."""
    from sims.core import presets

    key = repr((fig.preset, fig.overrides))
    if key not in _PRESETS:
        try:
            preset = presets.load(fig.preset)
            _PRESETS[key] = preset.with_overrides(dict(fig.overrides)) if fig.overrides else preset
        except presets.PresetError as exc:
            raise ConceptError(f"{where}: figure.overrides: {exc}") from None
    return _PRESETS[key]


def _time(t: Table, key: str, value: float, preset) -> float:
    if not 0.0 <= value <= preset.duration:
        raise t.fail(key, f"expected a virtual time in [0, {preset.duration:g}] ({preset.name}), got {value:g}")
    if round(value, 3) != value:
        raise t.fail(key, f"virtual times are kept to the millisecond (a link's resolution), got {value!r}")
    return value


def _step(t: Table, preset, fig: Figure) -> Step:
    t.only("text", "action", "expect")
    text = t.text("text")
    act = Table(t.raw.get("action"), t.where, f"{t.field}.action")
    verbs = [k for k in act.raw if k in ACTIONS]
    if len(verbs) != 1:
        raise act.fail("", f"expected exactly one of {', '.join(ACTIONS)}, got {show(sorted(act.raw))}")
    verb = verbs[0]
    companions = {"play": ("until",), "set": ("at",), "inject": ("at",)}.get(verb, ())
    act.only(verb, *companions)
    if verb == "seek":
        _time(act, "seek", act.number("seek"), preset)
    elif verb == "play":
        if act.raw["play"] is not True:
            raise act.fail("play", "expected play = true (with until = T)")
        _time(act, "until", act.number("until"), preset)
    elif verb == "step":
        n = act.raw["step"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 50:
            raise act.fail("step", f"expected a number of steps from 1 to 50, got {show(n)}")
    elif verb == "panels":
        names = act.lines("panels")
        for i, p in enumerate(names):
            if p not in preset.panel_names():
                raise act.fail(
                    f"panels[{i}]", f"no panel {show(p)} in {preset.name}; valid: {', '.join(preset.panel_names())}"
                )
    elif verb == "set":
        given = Table(act.raw["set"], t.where, f"{act.field}.set").raw
        if not given:
            raise act.fail("set", 'expected overrides, e.g. { "defaults.size" = 80 }')
        changed = Figure(fig.preset, fig.panels, fig.caption, overrides=fig.overrides + tuple(given.items()))
        after = figure_preset(changed, t.where)
        _time(act, "at", act.number("at", required=False) or 0.0, after)
    else:  # inject
        i = act.raw["inject"]
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(preset.actions):
            labels = "; ".join(f"{k} = {a['label']!r}" for k, a in enumerate(preset.actions)) or "none"
            raise act.fail("inject", f"expected the index of one of {preset.name}'s actions ({labels}), got {show(i)}")
        _time(act, "at", act.number("at"), preset)
    expect = None
    if "expect" in t.raw:
        expect = _expect(Table(t.raw["expect"], t.where, f"{t.field}.expect"), preset)
    return Step(text, dict(act.raw), expect)


def _metric(t: Table, key: str, preset) -> str:
    metric = t.text(key)
    declared = registry.topic_info(preset.topic).metrics
    if metric not in declared:
        raise t.fail(key, f"{preset.topic} declares no metric {show(metric)}; valid: {', '.join(sorted(declared))}")
    return metric


def _expect(t: Table, preset) -> dict:
    t.only("metric", "panels", "higher_is_better", "margin")
    panels = t.lines("panels", least=2)
    for i, p in enumerate(panels):
        if p not in preset.panel_names():
            raise t.fail(f"panels[{i}]", f"no panel {show(p)} in {preset.name}")
    if not isinstance(t.raw.get("higher_is_better"), bool):
        raise t.fail("higher_is_better", "expected true or false")
    margin = t.number("margin", required=False) or 0.0
    if margin < 0:
        raise t.fail("margin", f"expected a margin >= 0, got {margin:g}")
    out = {
        "metric": _metric(t, "metric", preset),
        "panels": list(panels),
        "higher_is_better": t.raw["higher_is_better"],
    }
    return {**out, "margin": margin}


def _quiz(t: Table, preset, fig: Figure) -> Quiz:
    t.only("question", "metric", "pick", "at", "answer", "explain")
    pick = t.text("pick")
    if pick not in ("max", "min"):
        raise t.fail("pick", f'expected "max" or "min", got {show(pick)}')
    answer = t.text("answer")
    if answer not in fig.panels:
        raise t.fail("answer", f"expected one of the figure's panels ({', '.join(fig.panels)}), got {show(answer)}")
    at = _time(t, "at", t.number("at"), preset)
    if at == 0:
        raise t.fail("at", "expected a time after the start")
    return Quiz(t.text("question"), _metric(t, "metric", preset), pick, at, answer, t.text("explain"))


# -- a topic's files ------------------------------------------------------------------------------
def folder(topic: str) -> Path:
    return registry.SIMS / topic / FOLDER


def read(path: Path, topic: str) -> Concept:
    """The concept in ``path`` (its stem is the policy's name); a file about no registered
    policy of ``topic`` is an error."""
    names = registry.policies(topic)
    if path.stem not in names:
        raise ConceptError(f"{path}: no registered {topic} policy {path.stem!r}; valid: {', '.join(sorted(names))}")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConceptError(f"{path}: not valid TOML: {show(str(exc), 160)}") from None
    return parse(raw, topic, path.stem, str(path))


_LOADED: dict[str, dict[str, Concept]] = {}


def load(topic: str) -> dict[str, Concept]:
    """Every concept file of ``topic``, by name (sorted), each checked; read once per process."""
    if topic not in _LOADED:
        files = sorted(folder(topic).glob("*.toml"))
        found = {p.stem: read(p, topic) for p in files}
        for c in found.values():
            if c.alias_of and (c.alias_of not in found or found[c.alias_of].alias_of):
                raise ConceptError(f"{c.path}: alias_of: {c.alias_of!r} has no content of its own")
        _LOADED[topic] = found
    return _LOADED[topic]


def missing(topic: str) -> list[str]:
    """The registered policies of ``topic`` with no concept file (the build fails naming them)."""
    have = {p.stem for p in folder(topic).glob("*.toml")}
    return sorted(n for n in registry.policies(topic) if n not in have)
