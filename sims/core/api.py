"""One call per contract: what the CLI, the server, the browser bridge and the tests share."""

from __future__ import annotations

from sims.core import presets
from sims.core.scenario import Scenario


def run(
    name: str,
    seed: int | None = None,
    duration: float | None = None,
    panels: list[str] | None = None,
    drain: bool = False,
) -> dict:
    """Run a preset to the end and return the ``run --json`` object (``drain``: ``run --drain``)."""
    return Scenario(presets.load(name), seed, duration, panels, drain=drain).run().result()


def describe(name: str) -> dict:
    """A preset as JSON (for ``list --json`` and the API)."""
    p = presets.load(name)
    return {
        "name": p.name,
        "topic": p.topic,
        "title": p.title,
        "watch_for": p.watch_for,
        "description": p.description,
        "seed": p.seed,
        "duration": p.duration,
        "workload": {"kind": p.workload_kind, **p.workload},
        "panels": [{"name": s.name, "policy": s.policy, **s.params} for s in p.panels],
        "events": [dict(e) for e in p.events],
        "controls": [dict(c) for c in p.controls],
        "actions": [dict(a) for a in p.actions],
        "site": dict(p.site),
    }
