"""Presets: named scenarios, one TOML file each in ``presets/``, validated into frozen objects.

A bad preset fails at load with the file, the field and what was expected.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sims.core import registry
from sims.core.registry import Param, resolve_params

PRESET_DIR = Path(os.environ.get("CONTENTION_PRESETS", Path(__file__).resolve().parents[2] / "presets"))

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


class PresetError(ValueError):
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
        return float(value)
    if typ is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) and typ is not bool or not isinstance(value, typ):
        raise PresetError(f"{where}: expected {typ.__name__}, got {type(value).__name__} {value!r}")
    return value


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
    if topic not in registry.TOPIC_NAMES:
        raise PresetError(f"{where}: field 'topic': expected one of {', '.join(registry.TOPIC_NAMES)}, got {topic!r}")
    title = _need(raw, "title", str, where)
    watch_for = _need(raw, "watch_for", str, where)
    seed = _need(raw, "seed", int, where)
    duration = _need(raw, "duration", float, where)
    if not duration > 0:
        raise PresetError(f"{where}: field 'duration': expected a positive number of seconds, got {duration!r}")
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
    events = []
    for i, ev in enumerate(_check(raw.get("events", []), list, f"{where}: field 'events'")):
        ew = f"{where}: field 'events[{i}]'"
        ev = dict(_check(ev, dict, ew))
        ev["t"] = _check(ev.get("t"), float, f"{ew}.t")
        _check(ev.get("kind"), str, f"{ew}.kind")
        events.append(ev)
    controls = tuple(_check(c, dict, f"{where}: field 'controls'") for c in raw.get("controls", []))
    for i, c in enumerate(controls):
        for key, typ in (("target", str), ("label", str), ("min", float), ("max", float)):
            _need(c, key, typ, f"{where}: field 'controls[{i}]'")
    actions = tuple(_check(a, dict, f"{where}: field 'actions'") for a in raw.get("actions", []))
    for i, a in enumerate(actions):
        _need(a, "label", str, f"{where}: field 'actions[{i}]'")
        _need(
            _need(a, "event", dict, f"{where}: field 'actions[{i}]'"),
            "kind",
            str,
            f"{where}: field 'actions[{i}].event'",
        )
    return Preset(
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
        sample_dt=_check(raw.get("sample_dt", 0.0), float, f"{where}: field 'sample_dt'"),
        ci_duration=_check(raw.get("ci_duration", 0.0), float, f"{where}: field 'ci_duration'"),
        site=_check(raw.get("site", {}), dict, f"{where}: field 'site'"),
        raw=raw,
        path=str(path),
    )


def load_file(path: str | Path) -> Preset:
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise PresetError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise PresetError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_preset(raw, str(path))


def preset_names() -> list[str]:
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


_CACHE: dict[str, Preset] = {}


def load(name: str) -> Preset:
    """The preset called ``name``; unknown names raise PresetError listing the valid ones."""
    if name in _CACHE:
        return _CACHE[name]
    names = preset_names()
    if name not in names:
        raise PresetError(f"unknown preset {name!r}; valid: {', '.join(names)}")
    preset = load_file(PRESET_DIR / f"{name}.toml")
    _CACHE[name] = preset
    return preset


def all_presets() -> list[Preset]:
    return [load(n) for n in preset_names()]


def select_panels(preset: Preset, names: list[str] | None) -> Preset:
    """A copy keeping only the named panels, in the given order."""
    if not names:
        return preset
    by_name = {p.name: p for p in preset.panels}
    for n in names:
        if n not in by_name:
            raise PresetError(f"unknown panel {n!r} for preset {preset.name}; valid: {', '.join(by_name)}")
    return replace(preset, panels=tuple(by_name[n] for n in names))


__all__ = [
    "Param",
    "PanelSpec",
    "Preset",
    "PresetError",
    "all_presets",
    "load",
    "load_file",
    "preset_names",
    "select_panels",
]
