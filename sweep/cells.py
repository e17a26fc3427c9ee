"""One (cell, seed): run the preset with the cell's overrides and return one row per panel.

A row depends only on (preset content, params, seed), never on the wall clock or on which worker
ran it, so the rows of a sweep are identical whatever executes them and in whatever order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sims.core import presets
from sims.core.scenario import Scenario


def content_hash(preset: presets.Preset) -> str:
    """SHA-256 of the preset's validated source: the same file gives the same hash anywhere."""
    text = json.dumps(preset.raw, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Job:
    """What a worker needs: the preset's source (not a name a worker might resolve differently),
    the cell's overrides, the seed and the panels to keep."""

    raw: dict
    path: str
    params: dict
    seed: int
    panels: tuple[str, ...] | None
    preset_hash: str
    drain: bool = False  # arrivals stop at the duration; every request then finishes (no censored figures)

    def key(self) -> str:
        """Where this job's rows are kept: the same inputs give the same key."""
        text = json.dumps(
            [self.preset_hash, self.params, self.seed, self.panels, self.drain], sort_keys=True, default=str
        )
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def run_job(job: Job) -> dict:
    """``{"key", "rows": [...]}``. An error in the cell is recorded in its rows, not raised."""
    base = presets.parse_preset(job.raw, job.path)
    names = list(job.panels) if job.panels else base.panel_names()
    try:
        preset = base.with_overrides(job.params)
        sc = Scenario(preset, job.seed, panels=list(job.panels) if job.panels else None, drain=job.drain).run()
        metrics = sc.metrics()
        rows = [row(job, name, metrics[name], None) for name in metrics]
    except Exception as exc:  # a failing cell is a result, not the end of the sweep
        msg = f"{type(exc).__name__}: {exc}"
        rows = [row(job, name, {}, msg) for name in names]
    return {"key": job.key(), "rows": rows}


def row(job: Job, panel: str, metrics: dict[str, Any], error: str | None) -> dict:
    return {"params": dict(job.params), "seed": job.seed, "panel": panel, "metrics": metrics, "error": error}


def jobs(
    preset: presets.Preset,
    cell_params: Iterable[dict],
    seeds: Sequence[int],
    panels: list[str] | None,
    drain: bool = False,
) -> Iterator[Job]:
    """The jobs in grid order (cell, then seed), made one at a time as they are asked for."""
    h = content_hash(preset)
    kept = tuple(panels) if panels else None
    path = preset.path or f"{preset.name}.toml"
    for params in cell_params:
        for seed in seeds:
            yield Job(preset.raw, path, params, seed, kept, h, drain)
