"""Run a sweep: every job not yet in the journal, then the rows in grid order and a summary.

Jobs are made as the executor asks for them, never listed whole: only the finished rows are held
(``grid.MAX_RUNS`` bounds them)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from sims.core import presets
from sweep import cells, grid, stats, store


class Progress:
    """Runs done and an ETA, on the harness's progress bar (a terminal only; none without it)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.start = time.monotonic()
        self.bar = None
        if enabled and total > 0:
            try:
                from contention_harness import Progress as Bar
            except ModuleNotFoundError:  # sims/ alone: no bar
                return
            self.bar = Bar("sweep")

    def update(self, done: int, fresh: int) -> None:
        if self.bar is None:
            return
        elapsed = time.monotonic() - self.start
        eta = elapsed / fresh * (self.total - done) if fresh else 0.0
        self.bar.update(done / self.total, f"{done}/{self.total} runs, ETA {eta:.0f} s")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run(
    preset: presets.Preset,
    grid_spec: dict[str, list],
    n_seeds: int,
    panels: list[str] | None,
    execute: Callable[[Iterable[cells.Job]], Iterator[dict]],
    out: Path | None = None,
    resume: bool = False,
    progress: bool = False,
    max_cells: int = 1000,
    yes: bool = False,
    drain: bool = False,
) -> list[dict]:
    """All rows, in grid order (cell, then seed, then panel). Journals to ``out`` as it goes."""
    if panels:
        presets.select_panels(preset, panels)  # unknown panel names fail before anything runs
    todo = grid.validate(preset, grid_spec, max_cells, yes, n_seeds)
    seeds = range(preset.seed, preset.seed + n_seeds)

    def jobs() -> Iterator[cells.Job]:
        return cells.jobs(preset, (c.as_dict() for c in todo), seeds, panels, drain)

    if out is not None:
        store.check_out(out)
    journal = store.Journal(store.journal_path(out), resume) if out is not None else None
    done: dict[str, list[dict]] = dict(journal.done) if journal else {}
    total = len(todo) * n_seeds
    before = min(len(done), total)  # what the journal already holds (resumed)
    bar = Progress(total, progress)
    fresh = 0
    try:
        for rec in execute(j for j in jobs() if j.key() not in done):
            done[rec["key"]] = rec["rows"]
            if journal:
                journal.add(rec)
            fresh += 1
            bar.update(before + fresh, fresh)
    finally:
        bar.close()
        if journal:
            journal.close()
    rows = [r for j in jobs() for r in done[j.key()]]
    if out is not None:
        store.write(out, rows)
        store.journal_path(out).unlink(missing_ok=True)
    return rows


def summary(rows: list[dict], metrics: list[str] | None = None, confidence: float = 0.95) -> list[dict]:
    """Per (cell, panel): n seeds, errors, and for each metric the mean with a t interval."""
    groups: dict[tuple[str, str], list[dict]] = {}
    order: list[tuple[str, str]] = []
    for r in rows:
        k = (grid.Cell(tuple(r["params"].items())).key(), r["panel"])
        if k not in groups:
            groups[k] = []
            order.append(k)
        groups[k].append(r)
    out = []
    for k in order:
        rs = groups[k]
        names = metrics or [m for m in rs[0]["metrics"] if not m.endswith("_censored")]
        per = {}
        for m in names:
            vals = [r["metrics"][m] for r in rs if not r["error"] and m in r["metrics"]]
            ci = stats.mean_ci(vals, confidence)
            censored = sum(1 for r in rs if r["metrics"].get(f"{m}_censored"))
            if censored:
                ci["censored_seeds"] = censored  # a lower bound on those seeds: say so
            per[m] = ci
        errors = sorted({r["error"] for r in rs if r["error"]})
        out.append({"params": rs[0]["params"], "panel": k[1], "seeds": len(rs), "errors": errors, "metrics": per})
    return out
