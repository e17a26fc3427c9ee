"""What a preset is, and how a parsed TOML table becomes one: ``parse_preset`` validates every
field into a frozen ``Preset`` (``presets.py`` finds and reads the files).

A bad preset fails at load with the file, the field and what was expected: types, the ranges each
``Param`` declares, what the run would cost (``sims.core.budget``, before anything is built: its
sample of the stream also runs the workload's own cross-field checks) and each panel's constructor
(built once over an empty stream). So a preset that loads also runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sims.core import budget, registry
from sims.core.limits import MAX_DURATION, InputError, check_seed, show
from sims.core.registry import Param, resolve_params

_TOP_FIELDS = {
    "name",
    "topic",
    "title",
    "watch_for",
    "seed",
    "duration",
    "description",
    "workload",
    "defaults",
    "panels",
    "events",
    "controls",
    "actions",
    "sample_dt",
    "ci_duration",
    "site",
}


class PresetError(InputError):
    """A preset that cannot be loaded: the message names the file and the field."""


@dataclass(frozen=True)
class PanelSpec:
    name: str  # the panel's key in metrics: the policy, or an explicit name
    policy: str
    params: dict[str, Any]  # validated, defaults filled in


@dataclass(frozen=True)
class Preset:
    name: str
    topic: str
    title: str
    watch_for: str
    seed: int
    duration: float  # virtual seconds
    workload_kind: str
    workload: dict[str, Any]  # validated generator params
    panels: tuple[PanelSpec, ...]
    events: tuple[dict, ...] = ()  # scheduled into the stream (kill a server, add a node...)
    description: str = ""
    controls: tuple[dict, ...] = ()  # parameter sliders for the site: {target,label,min,max,step}
    actions: tuple[dict, ...] = ()  # "break it" buttons: {label, event: {kind, ...}}
    sample_dt: float = 0.0  # chart sampling interval; 0 = duration / 100
    ci_duration: float = 0.0  # a prefix for the cross-runtime test when the full run is long
    site: dict = field(default_factory=dict)  # free-form extras for the website (quizzes...)
    raw: dict = field(default_factory=dict, repr=False, compare=False)
    path: str = ""

    def panel_names(self) -> list[str]:
        return [p.name for p in self.panels]

    def with_overrides(self, overrides: dict[str, Any]) -> Preset:
        """A re-validated copy with ``{"workload.rate": 5, "defaults.size": 50, "panels.lru.size": 80,
        "seed": 3}`` applied. Unknown targets raise PresetError."""
        raw = {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.raw.items()}
        raw["panels"] = [dict(p) for p in self.raw.get("panels", [])]
        for target, value in overrides.items():
            section, _, key = target.partition(".")
            if not key:
                raw[section] = value
            elif section in ("workload", "defaults"):
                raw.setdefault(section, {})[key] = value
            elif section == "panels" and "." in key:
                panel, _, param = key.rpartition(".")
                hit = [p for p in raw["panels"] if p.get("name", p.get("policy")) == panel]
                if not hit:
                    raise PresetError(f"{self.name}: override {target!r}: no panel {panel!r}")
                hit[0][param] = value
            else:
                raise PresetError(f"{self.name}: override {target!r}: expected workload.X, defaults.X or panels.NAME.X")
        return parse_preset(raw, self.path or f"{self.name}.toml")


def _need(raw: dict, key: str, typ: type, where: str) -> Any:
    if key not in raw:
        raise PresetError(f"{where}: field {key!r} is missing ({typ.__name__} expected)")
    return _check(raw[key], typ, f"{where}: field {key!r}")


def _check(value: Any, typ: type, where: str) -> Any:
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > 2**1023:
            raise PresetError(f"{where}: expected a finite number, got {show(value)}")
        return float(value)
    if typ is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) and typ is not bool or not isinstance(value, typ):
        raise PresetError(f"{where}: expected {typ.__name__}, got {type(value).__name__} {show(value)}")
    if typ is float and not math.isfinite(value):
        raise PresetError(f"{where}: expected a finite number, got {value!r}")
    return value


def _seconds(value: Any, where: str, *, positive: bool = False, limit: float = MAX_DURATION) -> float:
    """A finite number of seconds in [0, limit] (or (0, limit] when ``positive``)."""
    value = _check(value, float, where)
    if value < 0 or (positive and value == 0) or value > limit:
        what = "a positive number of seconds" if positive else "a number of seconds >= 0"
        raise PresetError(f"{where}: expected {what} (at most {limit:g}), got {value!r}")
    return value


def _targets(raw_workload: dict, workload_spec: registry.Workload, panel_specs: list[dict[str, Param]]) -> dict:
    """What a control may move: ``workload.X`` and ``defaults.X`` (a parameter of some panel)."""
    out = {f"workload.{k}": v for k, v in workload_spec.params.items()}
    for specs in panel_specs:
        out |= {f"defaults.{k}": v for k, v in specs.items()}
    return out


def parse_preset(raw: dict, path: str) -> Preset:
    """Validate a parsed TOML table into a Preset."""
    where = str(path)
    for key in raw:
        if key not in _TOP_FIELDS:
            raise PresetError(f"{where}: unknown field {key!r}; valid: {', '.join(sorted(_TOP_FIELDS))}")
    name = _need(raw, "name", str, where)
    stem = Path(path).stem
    if stem != name:
        raise PresetError(f"{where}: field 'name' is {name!r} but must equal the file name {stem!r}")
    topic = _need(raw, "topic", str, where)
    if not registry.has_topic(topic):
        raise PresetError(f"{where}: field 'topic': expected one of {', '.join(registry.topic_names())}, got {topic!r}")
    title = _need(raw, "title", str, where)
    watch_for = _need(raw, "watch_for", str, where)
    seed = _need(raw, "seed", int, where)
    try:
        check_seed(seed, "field 'seed'")
    except ValueError as exc:
        raise PresetError(f"{where}: {exc}") from None
    duration = _seconds(_need(raw, "duration", float, where), f"{where}: field 'duration'", positive=True)
    wl = dict(_need(raw, "workload", dict, where))
    kind = _check(wl.pop("kind", None), str, f"{where}: field 'workload.kind'")
    try:
        spec = registry.get_workload(kind)
        wparams = resolve_params(spec.params, wl, "workload")
    except ValueError as exc:
        raise PresetError(f"{where}: field 'workload': {exc}") from None
    try:
        topic_obj = registry.load_topic(topic)
    except ValueError as exc:
        raise PresetError(f"{where}: field 'topic': {exc}") from None
    defaults = _check(raw.get("defaults", {}), dict, f"{where}: field 'defaults'")
    panels_raw = _need(raw, "panels", list, where)
    if not panels_raw:
        raise PresetError(f"{where}: field 'panels': expected at least one [[panels]] table")
    panels = []
    panel_specs = []
    seen = set()
    for i, praw in enumerate(panels_raw):
        pw = f"{where}: field 'panels[{i}]'"
        praw = dict(defaults) | dict(_check(praw, dict, pw))
        policy = _check(praw.pop("policy", None), str, f"{pw}.policy")
        pname = _check(praw.pop("name", policy), str, f"{pw}.name")
        if pname in seen:
            raise PresetError(f"{pw}.name: duplicate panel name {pname!r}; give panels explicit names")
        seen.add(pname)
        try:
            cls = registry.get_policy(topic, policy)
            specs = dict(topic_obj.panel_params) | dict(getattr(cls, "PARAMS", {}))
            params = resolve_params(specs, praw, "panel")
        except ValueError as exc:
            raise PresetError(f"{pw}: {exc}") from None
        panels.append(PanelSpec(pname, policy, params))
        panel_specs.append(specs)
    events = []
    for i, ev in enumerate(_check(raw.get("events", []), list, f"{where}: field 'events'")):
        ew = f"{where}: field 'events[{i}]'"
        ev = dict(_check(ev, dict, ew))
        ev["t"] = _seconds(ev.get("t"), f"{ew}.t")
        _check(ev.get("kind"), str, f"{ew}.kind")
        events.append(ev)
    targets = _targets(wl, spec, panel_specs)
    controls = tuple(
        _check(c, dict, f"{where}: field 'controls[{i}]'")
        for i, c in enumerate(_check(raw.get("controls", []), list, f"{where}: field 'controls'"))
    )
    for i, c in enumerate(controls):
        cw = f"{where}: field 'controls[{i}]'"
        target = _need(c, "target", str, cw)
        _need(c, "label", str, cw)
        lo, hi = _need(c, "min", float, cw), _need(c, "max", float, cw)
        if target not in targets:
            raise PresetError(f"{cw}.target: expected workload.X or defaults.X of this preset, got {show(target)}")
        if not lo < hi:
            raise PresetError(f"{cw}.max: expected more than min ({lo:g}), got {hi:g}")
        if "step" in c and not _check(c["step"], float, f"{cw}.step") > 0:
            raise PresetError(f"{cw}.step: expected a positive step, got {c['step']!r}")
        for key, value in (("min", lo), ("max", hi)):  # every slider position must be valid
            try:
                registry.coerce(value if targets[target].type is float else int(value), targets[target], target)
            except ValueError as exc:
                raise PresetError(f"{cw}.{key}: {exc}") from None
    actions = tuple(
        _check(a, dict, f"{where}: field 'actions[{i}]'")
        for i, a in enumerate(_check(raw.get("actions", []), list, f"{where}: field 'actions'"))
    )
    for i, a in enumerate(actions):
        _need(a, "label", str, f"{where}: field 'actions[{i}]'")
        _need(
            _need(a, "event", dict, f"{where}: field 'actions[{i}]'"),
            "kind",
            str,
            f"{where}: field 'actions[{i}].event'",
        )
    preset = Preset(
        name=name,
        topic=topic,
        title=title,
        watch_for=watch_for,
        seed=seed,
        duration=duration,
        workload_kind=kind,
        workload=wparams,
        panels=tuple(panels),
        events=tuple(sorted(events, key=lambda e: e["t"])),
        description=_check(raw.get("description", ""), str, f"{where}: field 'description'"),
        controls=controls,
        actions=actions,
        sample_dt=_seconds(raw.get("sample_dt", 0.0), f"{where}: field 'sample_dt'", limit=duration),
        ci_duration=_seconds(raw.get("ci_duration", 0.0), f"{where}: field 'ci_duration'"),
        site=_site(raw.get("site", {}), duration, [p.name for p in panels], f"{where}: field 'site'"),
        raw=raw,
        path=str(path),
    )
    # what it costs, before anything is built: a stream sampled (the workload's own checks run),
    # no panel yet; then each panel once over an empty stream (its constructor's checks)
    budget.check(preset, where=where)
    for i, p in enumerate(preset.panels):
        try:
            _dry_build(topic_obj, p.policy, p.name, p.params, seed, duration)
        except ValueError as exc:
            raise PresetError(f"{where}: field 'panels[{i}]': panel {p.name!r}: {exc}") from None
    return preset


def _site(site: Any, duration: float, names: list[str], where: str) -> dict:
    """The page's fields that shape what a reader sees first (the rest of ``site`` is free-form):
    ``speed``, the default playback speed (the player's 0.25 to 20, web/static/js/driver.js); ``start``, the virtual second the page opens at,
    already playing, in [0, duration); ``panels``, the panels on at first (names of this preset's);
    ``xy``, a chart of one point per panel ({x, y}: metric names)."""
    site = _check(site, dict, where)
    if "speed" in site and not 0.25 <= _check(site["speed"], float, f"{where}.speed") <= 20:
        raise PresetError(f"{where}.speed: expected a speed the player has (0.25 to 20), got {site['speed']!r}")
    if "start" in site and not _seconds(site["start"], f"{where}.start", limit=duration) < duration:
        raise PresetError(f"{where}.start: expected a time before the duration ({duration:g} s), got {site['start']!r}")
    if "xy" in site:  # a chart of one point per panel: {x = METRIC, y = METRIC}
        for axis in ("x", "y"):
            _need(_check(site["xy"], dict, f"{where}.xy"), axis, str, f"{where}.xy")
    for name in _check(site.get("panels", []), list, f"{where}.panels"):
        if name not in names:
            raise PresetError(f"{where}.panels: {show(name)} is not a panel of this preset; valid: {', '.join(names)}")
    return site


def _dry_build(topic, policy: str, name: str, params: dict, seed: int, duration: float) -> None:
    """Build the panel once over an empty stream: its constructor's range checks fire at load."""
    from sims.core.panel import PanelContext

    try:
        topic.make_panel(policy, name, dict(params), PanelContext(seed, duration, [], name))
    except (TypeError, ArithmeticError, IndexError, KeyError) as exc:
        raise ValueError(f"{type(exc).__name__}: {show(str(exc), 120)}") from None
