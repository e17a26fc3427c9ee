"""One call per contract: what the CLI, the server, the browser bridge, the notebook, the site build
and the tests share.

``describe(preset)`` is the only place that builds a preset's meta (the JSON a page, an embed, the
notebook widget, ``list --json`` and ``GET /api/presets/{name}`` read); callers add what only they
know (the site its poster frames) and never rebuild it.
"""

from __future__ import annotations

from typing import Any

from sims.core import presets, registry
from sims.core.scenario import Scenario

MAX_CHARTS = 3  # time-series charts per preset page


def run(
    name: str,
    seed: int | None = None,
    duration: float | None = None,
    panels: list[str] | None = None,
    drain: bool = False,
) -> dict:
    """Run a preset to the end and return the ``run --json`` object (``drain``: ``run --drain``)."""
    return Scenario(presets.load(name), seed, duration, panels, drain=drain).run().result()


def chart_metrics(preset: presets.Preset, metrics: dict[str, dict[str, float]]) -> list[str]:
    """The preset's ``site.charts``, else its topic's default charts that its panels report, else
    the first metrics of the first panel; at most MAX_CHARTS, in that order."""
    have: list[str] = []
    for m in metrics.values():
        have += [k for k in m if k not in have]
    wanted = preset.site.get("charts") or registry.topic_info(preset.topic).charts
    chosen = [m for m in wanted if m in have]
    if not chosen:
        chosen = [m for m in have if m not in ("requests",)] or have
    return chosen[:MAX_CHARTS]


def key_metrics(preset: presets.Preset) -> list[str]:
    """The preset's ``site.metrics``, else its topic's key metrics (DESIGN.md's names)."""
    return list(preset.site.get("metrics") or registry.topic_info(preset.topic).key_metrics)


def default_speed(preset: presets.Preset) -> float:
    """The preset's ``site.speed``, else one that plays the whole run in about 30 s (1x to 10x)."""
    speed = preset.site.get("speed")
    if isinstance(speed, (int, float)) and not isinstance(speed, bool) and speed > 0:
        return float(speed)
    return float(max(1, min(10, round(preset.duration / 30))))


def default_start(preset: presets.Preset) -> float:
    """The virtual second the page opens at, already playing: the preset's ``site.start``, else 0."""
    return float(preset.site.get("start", 0.0))


def shown_panels(preset: presets.Preset) -> list[str]:
    """The panels a page shows first, in the preset's order: ``site.panels``, else the claim's when
    it names two or more, else every panel (the others are one click away in the panel picker)."""
    names = preset.panel_names()
    wanted = preset.site.get("panels") or (preset.site.get("claim") or {}).get("panels") or []
    chosen = [n for n in names if n in wanted]
    return chosen if len(chosen) >= 2 or preset.site.get("panels") else names


def control_value(preset: presets.Preset, target: str) -> Any:
    """The value a slider starts at: ``workload.KEY`` or ``defaults.KEY`` of the preset."""
    section, _, key = target.partition(".")
    if section == "workload":
        return preset.workload.get(key)
    if section == "defaults":
        return preset.raw.get("defaults", {}).get(key, preset.panels[0].params.get(key))
    return None


def describe(
    preset: presets.Preset | str, *, summary: bool = False, metrics: dict[str, dict[str, float]] | None = None
) -> dict:
    """A preset's meta as JSON. ``summary=True`` gives the listing form (``list --json``,
    ``GET /api/presets``): name, topic, title, duration and panel names. ``metrics`` (the panels'
    metrics of a live run) picks the charts; without it the panels are built on an empty stream."""
    p = presets.load(preset) if isinstance(preset, str) else preset
    if summary:
        return {"name": p.name, "topic": p.topic, "title": p.title, "duration": p.duration, "panels": p.panel_names()}
    if metrics is None:
        metrics = Scenario(p, events=[]).metrics()
    charts = chart_metrics(p, metrics)
    return {
        "name": p.name,
        "topic": p.topic,
        "title": p.title,
        "watch_for": p.watch_for,
        "description": p.description,
        "seed": p.seed,
        "duration": p.duration,
        "speed": default_speed(p),
        "start": default_start(p),
        "shown": shown_panels(p),
        "workload": {"kind": p.workload_kind, **p.workload},
        "panels": [{"name": s.name, "policy": s.policy, **s.params} for s in p.panels],
        "events": [dict(e) for e in p.events],
        "controls": [dict(c) for c in p.controls],
        "control_values": {c["target"]: control_value(p, c["target"]) for c in p.controls},
        "actions": [{"label": a["label"], "kind": a["event"]["kind"], "event": dict(a["event"])} for a in p.actions],
        "site": dict(p.site),
        "charts": charts,
        "key_metrics": sorted(set(key_metrics(p)) | set(charts)),
        **registry.topic_info(p.topic).as_json(),
    }
