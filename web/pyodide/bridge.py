"""The Python side of the browser worker: live scenarios by id, answered with compact JSON frames.

The worker calls ``call(op, args_json)`` and gets one JSON string back, so each request crosses
the JS/Python boundary once. ``sitebuild`` uses the same sessions in CPython to precompute the
first frames of every preset, so the page's poster and Pyodide's live frames come from one code path.
Only the standard library and ``sims`` are imported here.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import replace
from typing import Any

from sims.core import api, presets
from sims.core.scenario import Scenario

from . import ops_faults

# Ratios of two cumulative counters. The charts can draw each over a moving window of samples
# (the charts' "recent" view, the default), computed in the front end from these
# counters' sampled series; so every chart row of such a ratio carries its two counters too.
WINDOWED: dict[str, tuple[str, str]] = {
    "hit_ratio": ("hits", "requests"),
    "fault_rate": ("faults", "refs"),
    "reject_rate": ("rejected", "requests"),
    "fail_rate": ("failed", "requests"),
}
CHECKPOINTS = (3, 20)  # per run, fewer when a checkpoint (a deep copy of the panels) is costly
CHECKPOINT_BUDGET_S = 0.4  # wall seconds of copying per run we accept for cheap seeks back


def series_columns(charts: list[str], metrics: dict[str, dict[str, float]]) -> tuple[list[str], dict]:
    """The columns of each chart row (the charted metrics the panels report, then the counters of
    windowed ratios) and ``{ratio: [numerator, denominator]}`` for the charted ratios that can be
    windowed (their counters are reported)."""
    have: list[str] = []
    for m in metrics.values():
        have += [k for k in m if k not in have]
    columns = [c for c in charts if c in have]
    windows: dict[str, list[str]] = {}
    for base in charts:
        if base in WINDOWED and all(k in have for k in WINDOWED[base]):
            windows[base] = list(WINDOWED[base])
            columns += [k for k in WINDOWED[base] if k not in columns]
    return columns, windows


def _finite(obj: Any) -> Any:
    """A copy with non-finite floats replaced by None (JSON has no NaN or Infinity)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def dumps(obj: Any) -> str:
    try:
        return json.dumps(obj, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return json.dumps(_finite(obj), separators=(",", ":"), allow_nan=False)


class Session:
    """One live scenario of a page. ``injected`` lists the "break it" events in the order they were
    injected; replaying them in that order into a fresh stream rebuilds the same run (a shared link)."""

    def __init__(
        self,
        preset: str,
        seed: int | None = None,
        panels: list[str] | None = None,
        overrides: dict[str, Any] | None = None,
        actions: list[list] | None = None,
        *,
        events: list[dict] | None = None,
        duration: float | None = None,
    ) -> None:
        base = presets.load(preset)
        if overrides:
            base = base.with_overrides(overrides)
        self.base = base
        self.seed = base.seed if seed is None else seed
        # panels=[]: none of the preset's own (the edited-policy worker runs edited panels only)
        chosen = replace(base, panels=()) if panels == [] else presets.select_panels(base, panels)
        sample_dt = base.sample_dt or (duration or base.duration) / 100
        # ``events``: a stream of the reader's own (a dropped trace, web/pyodide/ops_trace.py)
        self.sc = Scenario(chosen, self.seed, duration, sample_dt=sample_dt, events=events)
        # checkpoint timing only changes how the stream is chunked, never the results
        start = time.perf_counter()
        self.sc.checkpoint()
        cost = time.perf_counter() - start
        lo, hi = CHECKPOINTS
        self.sc.tune_checkpoints(self.sc.duration / max(lo, min(hi, int(CHECKPOINT_BUDGET_S / max(cost, 1e-6)))))
        self.injected: list[list] = []
        for index, t in actions or []:
            self.sc.insert(self._action_event(index, t))
            self.injected.append([index, t])
        self.charts = api.chart_metrics(base, self.sc.metrics())
        self.columns, self.windows = series_columns(self.charts, self.sc.metrics())
        self.sent = 0  # series rows the client already holds

    # -- "break it" ------------------------------------------------------------------------
    def _action_event(self, index: int | str, t: float) -> dict:
        """The event of action ``index`` (the preset's numbered actions) or of a drawn fault's
        key (``"p0.1-2.3.4"``, ``"c2"``: web/pyodide/ops_faults.py) at time ``t``."""
        acts = self.base.actions
        if isinstance(index, str):
            event = ops_faults.event_of(index, self.sc)
        elif not isinstance(index, int) or not 0 <= index < len(acts):
            raise ValueError(f"action {index!r}: {self.base.name} has {len(acts)} action(s)")
        else:
            event = acts[index]["event"]
        t = float(t)
        if not 0.0 <= t <= self.sc.duration:
            raise ValueError(f"action time {t!r} is outside [0, {self.sc.duration:g}]")
        return dict(event, t=t)

    def inject(self, index: int | str) -> None:
        """Inject action ``index`` into the running stream at the current virtual time."""
        t = self.sc.t
        self.sc.insert(self._action_event(index, t))
        self.injected.append([index, t])

    # -- frames ------------------------------------------------------------------------------
    def frame(self) -> dict:
        """``{t, panels: {name: {metrics, view}}, series: {from, rows, columns}}``; rows are
        ``[t, {panel: [values of columns]}]`` the client does not hold yet (it keeps ``from``);
        ``columns``: the charted metrics, then the counters of windowed ratios (series_columns)."""
        sc = self.sc
        panels: dict[str, Any] = {}
        for name, p in sc.panels.items():
            entry: dict[str, Any] = {"metrics": p.metrics()}
            try:
                entry["view"] = p.view()
            except Exception as exc:  # a broken view must not hide the metrics
                entry["view"] = {"kind": "error", "error": f"{type(exc).__name__}: {exc}"}
            panels[name] = entry
        keep = min(self.sent, len(sc.series))
        rows = [
            [s["t"], {n: [m.get(c) for c in self.columns] for n, m in s["panels"].items()}] for s in sc.series[keep:]
        ]
        self.sent = len(sc.series)
        return {"t": sc.t, "panels": panels, "series": {"from": keep, "rows": rows, "columns": self.columns}}

    def info(self) -> dict:
        """The preset's meta (``api.describe``) as this session runs it: its seed, its panels,
        its charts, ``marks``, the moments its workload causes (``Scenario.marks``: a scan
        starts, a phase changes), and ``injected``, the actions injected so far."""
        meta = api.describe(self.sc.preset, metrics=self.sc.metrics())
        return {
            **meta,
            "seed": self.seed,
            "duration": self.sc.duration,
            "charts": self.charts,
            "series": self.columns,
            "windows": self.windows,
            "marks": self.sc.marks(),
            "injected": self.injected,
        }


_SESSIONS: dict[str, Session] = {}


def _op_create(a: dict) -> dict:
    s = Session(a["preset"], a.get("seed"), a.get("panels") or None, a.get("overrides"), a.get("actions"))
    _SESSIONS[a["id"]] = s
    t = float(a.get("t") or 0.0)
    if t:
        s.sc.seek(t)
    return {"info": s.info(), "frame": s.frame()}


def _session(a: dict) -> Session:
    try:
        return _SESSIONS[a["id"]]
    except KeyError:
        raise ValueError(f"no simulation {a.get('id')!r}: create it first") from None


def _op_advance(a: dict) -> dict:
    s = _session(a)
    s.sc.advance(float(a["t"]))
    return s.frame()


def _op_step(a: dict) -> dict:
    s = _session(a)
    s.sc.step()
    return s.frame()


def _op_seek(a: dict) -> dict:
    s = _session(a)
    s.sent = min(s.sent, int(a.get("have", s.sent)))
    s.sc.seek(float(a["t"]))
    return s.frame()


def _op_inject(a: dict) -> dict:
    s = _session(a)
    action = a["action"]
    s.inject(action if isinstance(action, str) else int(action))
    return {"frame": s.frame(), "actions": s.injected}


def _op_snapshot(a: dict) -> dict:
    return _session(a).sc.snapshot()


def _op_drop(a: dict) -> dict:
    _SESSIONS.pop(a["id"], None)
    return {}


OPS = {
    "create": _op_create,
    "advance": _op_advance,
    "step": _op_step,
    "seek": _op_seek,
    "inject": _op_inject,
    "snapshot": _op_snapshot,
    "drop": _op_drop,
}


def _feature_ops() -> None:
    """A feature adds operations by adding a module ``web/pyodide/ops_<feature>.py`` with a dict
    ``OPS`` of its own ``{name: fn(args) -> result}``; nothing here names it."""
    import importlib
    import pkgutil
    from pathlib import Path

    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda i: i.name):
        if info.name.startswith("ops_"):
            extra = importlib.import_module(f"{__package__}.{info.name}").OPS
            clash = sorted(set(extra) & set(OPS))
            if clash:
                raise RuntimeError(f"{info.name}: operations {clash} are already defined")
            OPS.update(extra)


_feature_ops()


def call(op: str, args_json: str) -> str:
    """Run one request; returns ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": "..."}``
    as JSON. Bad input (ValueError, including PresetError) gives a one-line message."""
    try:
        fn = OPS[op]
    except KeyError:
        return dumps({"ok": False, "error": f"unknown operation {op!r}; valid: {', '.join(OPS)}"})
    try:
        return dumps({"ok": True, "result": fn(json.loads(args_json))})
    except (ValueError, KeyError, TypeError) as exc:
        return dumps({"ok": False, "error": str(exc) or type(exc).__name__})
    except Exception as exc:  # a simulation bug: say which, keep the worker alive
        return dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"})


def poster(preset: str, real_seconds: float, budget_bytes: int, max_frames: int = 80) -> list[str]:
    """The first frames of ``preset`` at its seed as JSON texts (views alias live state, so each is
    serialised when taken): about ``real_seconds`` of play at the default speed from the page's
    start (``api.default_start``), as many frames as ``budget_bytes`` allows (8 to ``max_frames``),
    evenly spaced; always the frame at the start, whose chart rows reach back to t=0."""
    s = Session(preset)
    speed = api.default_speed(s.base)
    start = api.default_start(s.base)
    limit = min(real_seconds * speed, s.sc.duration - start)
    s.sc.advance(start + limit / max_frames)
    probe = len(dumps(s.frame()))
    s.sc.seek(start)
    s.sent = 0
    frames = [dumps(s.frame())]
    count = max(8, min(max_frames, budget_bytes // max(probe, 1)))
    dt = limit / count
    size = len(frames[0])
    k = 1
    while k <= count:
        s.sc.advance(start + k * dt)
        text = dumps(s.frame())
        if size + len(text) > budget_bytes:
            break
        frames.append(text)
        size += len(text)
        k += 1
    return frames
