"""The cheapest deployment that meets every target: ``contention plan --space``.

The space is a grid of deployment choices (``--space defaults.gpu=H100-80GB,H200 --space
defaults.tp=2,4``: each combination a *column*) times one count knob (``--vary
defaults.replicas=1:16``), bisected within a column as ``plan`` does, on the same assumption:
more of the knob never hurts. Every configuration is priced before it runs, by the panel's own
bill (``sims/engine/bill.py``) read at time zero, so dollars have one code path.

The search prunes by price. Columns are taken cheapest first; once an answer costs $B an hour,
only a column's values priced below $B are candidates, and a column whose dearest candidate
misses a target is dropped after that one probe. A tie in price keeps the answer found first
(columns go cheapest first, then in ``--space`` order). Columns never searched to the end are reported as pruned, not as failing.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from pathlib import Path

from sims.core import presets
from sims.core.scenario import Scenario
from sweep import grid, run
from sweep.plan import Target, judge

HOURS_PER_MONTH = 730.0  # 8760 / 12
EVIDENCE = ("usd_per_mtok_out", "throughput_tok_s", "tpot_p50", "gpus", "usd_per_hour")


def quote(preset: presets.Preset, params: dict, panel: str) -> tuple[int, float]:
    """(GPUs, $/hour) of one configuration, from the panel's bill before its first event."""
    p = preset.with_overrides(params)
    m = Scenario(p, None, 1e-9, [panel]).run().metrics()[panel]
    if "usd_per_hour" not in m:
        gpu = p.panels[p.panel_names().index(panel)].params.get("gpu", "?")
        raise grid.SweepError(
            f"--space: panel {panel!r} reports no dollars ({gpu} has no price in sims/hw/prices.toml): "
            "set defaults.usd_per_gpu_hour"
        )
    return int(m["gpus"]), float(m["usd_per_hour"])


def search(
    preset: presets.Preset,
    vary: str,
    space: list[str],
    targets: list[Target],
    n_seeds: int,
    panel: str,
    execute,
    confidence: float = 0.95,
    drain: bool = False,
    journal: Path | None = None,
    progress: bool = False,
    floors: dict[str, int] | None = None,
) -> dict:
    """``{"feasible", "config", "gpus", "usd_per_hour", "usd_per_month", "usd_per_mtok_out",
    "evidence", "runner_ups", "pruned", "binding", "probes"}``.

    ``journal``: a file that keeps each configuration's runs as they finish (``plan --resume F``):
    a search started again with the same inputs reads them back and runs only what is missing.
    ``progress``: a bar on a terminal, configurations done out of the most the search can run.
    ``floors``: per column (its choices as JSON), the index of ``vary``'s values below which every
    configuration missed at a lower load (``curve``); they are not run. The result's ``floors``
    are the same after this search, for the next load."""
    if not targets:
        raise grid.SweepError("give at least one --target METRIC<X")
    if not 2 <= n_seeds <= grid.MAX_SEEDS:
        raise grid.SweepError(f"--seeds must be between 2 (for a confidence bound) and {grid.MAX_SEEDS}, got {n_seeds}")
    if panel not in preset.panel_names():
        raise grid.SweepError(f"--panel {panel!r}: valid: {', '.join(preset.panel_names())}")
    ((key, values),) = grid.parse_grid([vary], "--vary").items()
    axes = grid.parse_grid(space, "--space")
    if key in axes:
        raise grid.SweepError(f"--space {key}: already the --vary knob")
    combos = [dict(zip(axes, vs, strict=True)) for vs in itertools.product(*axes.values())]
    grid.check_size(len(combos) * len(values), n_seeds, grid.MAX_CELLS, yes=True)
    columns = []
    for order, combo in enumerate(combos):
        prices = [quote(preset, {**combo, key: v}, panel) for v in values]
        columns.append({"order": order, "combo": combo, "prices": prices})
    columns.sort(key=lambda c: (c["prices"][0][1], c["order"]))

    probes: list[dict] = []
    inputs = {
        "preset": preset.name,
        "preset_sha": hashlib.sha256(repr(preset).encode()).hexdigest()[:16],  # its contents, overrides included
        "vary": vary,
        "space": sorted(space),
        "seeds": n_seeds,
    }
    kept = ProbeJournal(journal, {**inputs, "panel": panel, "drain": drain}) if journal else None
    most = len(columns) * (1 + max(1, len(values) - 1).bit_length())  # the top, then a bisection
    bar = run.Progress(most, progress)

    def probe(column: dict, i: int) -> dict:
        params = {**column["combo"], key: values[i]}
        rows = kept.get(params) if kept else None
        if rows is None:
            rows = run.run(preset, {k: [v] for k, v in params.items()}, n_seeds, [panel], execute, drain=drain)
            if kept:
                kept.add(params, rows)
        bar.update(len(probes) + 1, len(probes) + 1)
        verdict = judge(values[i], rows, targets, confidence)
        gpus, usd_h = column["prices"][i]
        figures = [{m: r["metrics"].get(m) for m in (*(t.metric for t in targets), *EVIDENCE)} for r in rows]
        out = {"config": params, "gpus": gpus, "usd_per_hour": usd_h, **verdict, "per_seed": figures}
        probes.append(out)
        return out

    best: dict | None = None
    found: list[dict] = []
    pruned: list[dict] = []
    floors = dict(floors or {})
    skipped = 0  # configurations not run: they missed at a lower load
    for column in columns:
        limit = best["usd_per_hour"] if best else float("inf")
        ck = json.dumps(column["combo"], sort_keys=True)
        floor = floors.get(ck, 0)
        cheap = [i for i, (_, usd_h) in enumerate(column["prices"]) if usd_h < limit]
        idx = [i for i in cheap if i >= floor]
        skipped += len(cheap) - len(idx)
        if not idx:
            why = f"its cheapest is not below ${limit:.4g}/h" if not cheap else "it missed at a lower load"
            pruned.append({"config": column["combo"], "why": why})
            continue
        top = probe(column, idx[-1])
        if not top["ok"]:
            floors[ck] = max(floor, idx[-1] + 1)  # every value up to the top misses (monotone)
            if best is not None and idx[-1] < len(values) - 1:
                pruned.append({"config": column["combo"], "why": f"misses below ${limit:.4g}/h"})
            continue
        lo, hi, answer = 0, len(idx) - 1, top
        while lo < hi:  # the cheapest value of this column that meets every target
            mid = (lo + hi) // 2
            p = probe(column, idx[mid])
            if p["ok"]:
                hi, answer = mid, p
            else:
                lo = mid + 1
        floors[ck] = idx[hi]  # the values below it missed at this load
        found.append(answer)
        if best is None or answer["usd_per_hour"] < best["usd_per_hour"]:
            best = answer
    bar.close()
    return _result(best, found, pruned, probes, targets) | {"floors": floors, "skipped": skipped}


def curve(preset: presets.Preset, load: str, vary: str, space: list[str], targets: list[Target], *args, **kw) -> dict:
    """``search`` at each value of a load knob (``--load workload.rate=1,2,4``), ascending, on the
    assumption that more load never makes a configuration meet what it missed: a configuration
    that missed at a lower load is not run at a higher one (``floors``). ``{"key", "curve": [{value,
    **search}], "runs", "skipped"}``; ``skipped`` counts the configurations pruned that way."""
    ((key, values),) = grid.parse_grid([load], "--load").items()
    if key == grid.parse_grid([vary], "--vary").popitem()[0] or key in grid.parse_grid(space, "--space"):
        raise grid.SweepError(f"--load {key}: already the --vary knob or a --space choice")
    if any(isinstance(v, str) for v in values) or sorted(values) != list(values) or len(set(values)) != len(values):
        raise grid.SweepError(f"--load {key}: give numbers in increasing order, each once")
    floors: dict[str, int] = {}
    out = []
    for v in values:
        r = search(preset.with_overrides({key: v}), vary, space, targets, *args, floors=floors, **kw)
        floors = r.pop("floors")
        out.append({"value": v, **r})
    runs = sum(p["seeds"] for r in out for p in r["probes"])
    return {"key": key, "curve": out, "runs": runs, "skipped": sum(r["skipped"] for r in out)}


class ProbeJournal:
    """One JSON line per configuration run (``{"config", "rows"}``), appended and fsynced as each
    finishes, after a first line naming the search's inputs: a file written for another search is
    refused rather than mixed in. A half-written last line (the process killed mid-write) is
    dropped and run again."""

    def __init__(self, path: Path, inputs: dict) -> None:
        self.path, self.done = path, {}
        head = json.dumps({"plan": inputs}, sort_keys=True)
        if path.is_file() and path.stat().st_size:
            lines = path.read_text(encoding="utf-8").splitlines()
            if lines[0] != head:
                raise grid.SweepError(f"--resume {path}: written by another search (line 1: {lines[0][:120]})")
            for n, line in enumerate(lines[1:], 2):
                try:
                    entry = json.loads(line)
                    self.done[self._key(entry["config"])] = entry["rows"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    if n != len(lines):
                        raise grid.SweepError(f"--resume {path}: line {n} is not a probe's JSON") from None
            path.write_text(
                "\n".join([head, *(json.dumps({"config": json.loads(k), "rows": r}) for k, r in self.done.items())])
                + "\n",
                encoding="utf-8",
            )
        else:
            if not path.parent.is_dir():
                raise grid.SweepError(f"--resume {path}: folder {path.parent} does not exist")
            path.write_text(head + "\n", encoding="utf-8")

    @staticmethod
    def _key(config: dict) -> str:
        return json.dumps(config, sort_keys=True)

    def get(self, config: dict) -> list[dict] | None:
        return self.done.get(self._key(config))

    def add(self, config: dict, rows: list[dict]) -> None:
        self.done[self._key(config)] = rows
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"config": config, "rows": rows}) + "\n")
            f.flush()
            os.fsync(f.fileno())


def mean_of(values) -> float | None:
    """The mean of the values that are not None; None when there are none."""
    vs = [v for v in values if v is not None]
    return sum(vs) / len(vs) if vs else None


def _result(best, found, pruned, probes, targets) -> dict:
    out: dict = {"feasible": best is not None, "probes": probes, "pruned": pruned}
    if best is None:
        # the target that binds: the worst margin over the probes that ran
        worst: dict[str, float] = {}
        for p in probes:
            for t, m in p["margins"].items():
                if m is not None:
                    worst[t] = max(worst.get(t, -float("inf")), m)
        out["binding"] = min(worst, key=worst.get) if worst else targets[0].text()
        out["best_margins"] = worst
        return out
    out.update(
        {
            "config": best["config"],
            "gpus": best["gpus"],
            "usd_per_hour": best["usd_per_hour"],
            "usd_per_month": best["usd_per_hour"] * HOURS_PER_MONTH,
            "usd_per_mtok_out": mean_of(s.get("usd_per_mtok_out") for s in best["per_seed"]),
            "margins": best["margins"],
            "evidence": best["per_seed"],
            "runner_ups": [
                {"config": f["config"], "gpus": f["gpus"], "usd_per_hour": f["usd_per_hour"]}
                for f in sorted(found, key=lambda f: f["usd_per_hour"])
                if f is not best
            ],
        }
    )
    return out
