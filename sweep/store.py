"""Results as they arrive, and the final file.

Each finished (cell, seed) is appended to a journal beside the output (``F.journal``, one JSON
line ``{"key", "rows"}``, flushed and fsynced), so an interrupted sweep loses nothing and
``--resume`` recomputes only the keys that are missing. When every job is done the output is
written whole (to a temporary file, then renamed) in the grid's order, and the journal removed.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from sweep.grid import SweepError

FORMATS = (".jsonl", ".csv", ".parquet")


def check_out(path: Path) -> None:
    if path.suffix not in FORMATS:
        raise SweepError(f"--out {path}: the format comes from the suffix, one of {', '.join(FORMATS)}")
    if path.is_dir():
        raise SweepError(f"--out {path}: is a folder")
    if not path.parent.is_dir():
        raise SweepError(f"--out {path}: folder {path.parent} does not exist")
    if path.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ModuleNotFoundError:
            raise SweepError(f"--out {path}: parquet needs pyarrow (pip install pyarrow)") from None


def journal_path(out: Path) -> Path:
    return out.with_name(out.name + ".journal")


class Journal:
    """Append-only record of finished jobs, keyed by ``Job.key()``."""

    def __init__(self, path: Path, resume: bool) -> None:
        self.path = path
        self.done: dict[str, list[dict]] = {}
        if resume and path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the last line of a killed sweep may be cut short: recompute it
                self.done[rec["key"]] = rec["rows"]
        elif path.exists():
            path.unlink()
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed in close())

    def add(self, rec: dict) -> None:
        self.done[rec["key"]] = rec["rows"]
        self._fh.write(json.dumps(rec, sort_keys=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def write(out: Path, rows: list[dict]) -> None:
    tmp = out.with_name(out.name + ".part")
    if out.suffix == ".jsonl":
        tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    elif out.suffix == ".csv":
        tmp.write_text(to_csv(rows), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist([flat(r) for r in rows]), tmp)
    os.replace(tmp, out)


def flat(r: dict) -> dict:
    out = {f"param.{k}": v for k, v in r["params"].items()}
    out |= {"seed": r["seed"], "panel": r["panel"], "error": r["error"] or ""}
    out |= {f"metric.{k}": v for k, v in r["metrics"].items()}
    return out


def to_csv(rows: list[dict]) -> str:
    flats = [flat(r) for r in rows]
    cols: list[str] = []
    for f in flats:
        cols += [c for c in f if c not in cols]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(flats)
    return buf.getvalue()


def read_rows(path: Path) -> list[dict]:
    """Rows of a finished ``.jsonl`` results file (for ``--plot`` and the server's view)."""
    if path.suffix != ".jsonl":
        raise SweepError(f"{path}: only .jsonl results can be read back")
    rows = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{path}: cannot read: {exc}") from None
    for i, line in enumerate(text.splitlines(), 1):
        try:
            r = json.loads(line)
            if not isinstance(r, dict) or not {"params", "seed", "panel", "metrics"} <= set(r):
                raise ValueError("expected an object with params, seed, panel, metrics")
        except ValueError as exc:
            raise SweepError(f"{path}:{i}: not a sweep row: {str(exc)[:80]}") from None
        rows.append(r)
    return rows
