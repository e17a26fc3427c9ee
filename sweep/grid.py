"""The grid: ``--grid KEY=V1,V2,...`` or ``--grid KEY=LO:HI:STEP``, checked before anything runs.

KEY is ``workload.X``, ``defaults.X`` or ``panels.NAME.X`` (one panel's parameter). The size of a
sweep is counted before anything is built: at most ``MAX_SEEDS`` seeds, ``MAX_CELLS`` cells (more
than ``--max-cells`` only with ``--yes``) and ``MAX_RUNS`` runs in all, so a sweep's rows fit in
memory. Then every cell's preset is built, so an unknown key or a value of the wrong type fails
with the key named, before the first run.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from sims.core import presets
from sims.core.limits import InputError

MAX_VALUES = 100_000  # values of one --grid key (a plan bisects them)
MAX_SEEDS = 10_000  # --seeds
MAX_RUNS = 50_000  # cells x seeds: each run's rows (up to about 10 KB) are held until the output is written
MAX_CELLS = MAX_RUNS  # cells of a grid, even with --yes


class SweepError(InputError):
    """Bad sweep input: printed as one line by the CLI, exit status 2."""


def parse_value(text: str) -> Any:
    """A grid value from the command line: int, then float, then true/false, else the string."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    try:
        return int(t)
    except ValueError:
        pass
    try:
        v = float(t)
    except ValueError:
        return t
    if v != v or v in (float("inf"), float("-inf")):
        raise SweepError(f"grid value {text!r}: expected a finite number")
    return v


def _range(key: str, spec: str, flag: str = "--grid") -> list[Any]:
    parts = spec.split(":")
    if len(parts) not in (2, 3):
        raise SweepError(f"{flag} {key}: a range is LO:HI or LO:HI:STEP, got {spec!r}")
    try:
        lo, hi = Decimal(parts[0]), Decimal(parts[1])
        step = Decimal(parts[2]) if len(parts) == 3 else Decimal(1)
    except InvalidOperation:
        raise SweepError(f"{flag} {key}: LO, HI and STEP must be numbers, got {spec!r}") from None
    if not (lo.is_finite() and hi.is_finite() and step.is_finite()) or step <= 0:
        raise SweepError(f"{flag} {key}: STEP must be a positive number, got {spec!r}")
    if hi < lo:
        raise SweepError(f"{flag} {key}: HI is below LO in {spec!r}")
    count = int((hi - lo) / step) + 1
    if count > MAX_VALUES:
        raise SweepError(f"{flag} {key}: {spec!r} has {count} values; at most {MAX_VALUES}")
    integral = all(x == x.to_integral_value() for x in (lo, step))
    # decimal steps, so 0.1:0.5:0.1 gives 0.1, 0.2, ... exactly as written, not 0.30000000000000004
    return [int(lo + k * step) if integral else float(lo + k * step) for k in range(count)]


def parse_grid(items: list[str], flag: str = "--grid") -> dict[str, list[Any]]:
    """``["workload.rate=1,2", "defaults.replicas=1:4"]`` → ``{key: [values]}``, in the order given;
    a refusal names ``flag``, the option the items came from."""
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, eq, spec = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise SweepError(f"{flag} {item!r}: expected KEY=V1,V2,... or KEY=LO:HI:STEP")
        if key in grid:
            raise SweepError(f"{flag} {key}: given twice")
        if not spec.strip():
            raise SweepError(f"{flag} {key}: no values")
        if ":" in spec and "," not in spec:
            values = _range(key, spec, flag)
        else:
            values = [parse_value(v) for v in spec.split(",") if v.strip()]
        if not values:
            raise SweepError(f"{flag} {key}: no values")
        if len(values) > MAX_VALUES:
            raise SweepError(f"{flag} {key}: {len(values)} values; at most {MAX_VALUES}")
        grid[key] = values
    return grid


@dataclass(frozen=True)
class Cell:
    """One point of the grid: its overrides, in the grid's key order."""

    params: tuple[tuple[str, Any], ...]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def key(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True)


def cells(grid: dict[str, list[Any]]) -> list[Cell]:
    """Every combination, in the grid's key order; an empty grid is the one cell of no overrides."""
    keys = list(grid)
    return [Cell(tuple(zip(keys, combo, strict=True))) for combo in itertools.product(*(grid[k] for k in keys))]


def count(grid: dict[str, list[Any]]) -> int:
    """The number of cells, without making them."""
    return math.prod(len(values) for values in grid.values())


def check_size(n_cells: int, n_seeds: int, max_cells: int, yes: bool) -> None:
    """Refuse a sweep past the bounds, naming the flag to change."""
    if not 1 <= n_seeds <= MAX_SEEDS:
        raise SweepError(f"--seeds must be between 1 and {MAX_SEEDS}, got {n_seeds}")
    if n_cells > MAX_CELLS:
        raise SweepError(f"--grid: the grid has {n_cells} cells; at most {MAX_CELLS}, even with --yes")
    if n_cells > max_cells and not yes:
        raise SweepError(f"the grid has {n_cells} cells, more than --max-cells {max_cells}; add --yes to run it")
    if n_cells * n_seeds > MAX_RUNS:
        raise SweepError(
            f"--seeds {n_seeds} over {n_cells} cells is {n_cells * n_seeds} runs; at most {MAX_RUNS} "
            "(fewer seeds or a smaller --grid)"
        )


def check_key(preset: presets.Preset, key: str) -> None:
    section, _, rest = key.partition(".")
    if section not in ("workload", "defaults", "panels") or not rest:
        raise SweepError(f"--grid {key}: KEY must be workload.X, defaults.X or panels.NAME.X")
    if section == "panels":
        name, _, param = rest.rpartition(".")
        if not name or not param:
            raise SweepError(f"--grid {key}: expected panels.NAME.X")
        if name not in preset.panel_names():
            raise SweepError(f"--grid {key}: no panel {name!r}; valid: {', '.join(preset.panel_names())}")


def build(preset: presets.Preset, cell: Cell) -> presets.Preset:
    """The preset with the cell's overrides, re-validated (errors name the key)."""
    try:
        return preset.with_overrides(cell.as_dict())
    except presets.PresetError as exc:
        raise SweepError(f"cell {cell.key()}: {exc}") from None


def validate(
    preset: presets.Preset, grid: dict[str, list[Any]], max_cells: int, yes: bool, n_seeds: int = 1
) -> list[Cell]:
    """Every cell, each checked by building its preset, once ``check_size`` has passed for
    ``n_seeds`` seeds a cell (a grid over ``max_cells`` needs ``yes``)."""
    for key in grid:  # no --grid at all is one cell: the preset as it is, over the seeds
        check_key(preset, key)
    check_size(count(grid), n_seeds, max_cells, yes)
    todo = cells(grid)
    for cell in todo:
        build(preset, cell)
    return todo
