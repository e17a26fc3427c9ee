"""A scenario: one stream, N panels, driven by ``advance(until)`` on the virtual clock.

Panels are independent, so ``advance`` feeds the stream slice to each panel in turn (panel-major,
through the panel contract ``Panel.feed``); every panel still sees the same events in the same
order. Checkpoints (deep copies of the panels, taken every ``checkpoint_every`` virtual seconds)
make seeking backwards cheap; how often they are taken never changes a result.
"""

from __future__ import annotations

import copy
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from sims.core import budget, registry, stream
from sims.core import presets as _presets
from sims.core.limits import InputError
from sims.core.panel import Panel, PanelContext


class Scenario:
    def __init__(
        self,
        preset: _presets.Preset | str,
        seed: int | None = None,
        duration: float | None = None,
        panels: list[str] | None = None,
        *,
        events: list[dict] | None = None,
        checkpoint_every: float = 0.0,
        sample_dt: float = 0.0,
        drain: bool = False,
    ) -> None:
        if isinstance(preset, str):
            preset = _presets.load(preset)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InputError(f"seed must be an integer, got {seed!r}")
        if duration is not None and not (duration > 0):
            raise InputError(f"duration must be a positive number of seconds, got {duration!r}")
        self.preset = _presets.select_panels(preset, panels)
        self.seed = preset.seed if seed is None else seed
        self.duration = preset.duration if duration is None else float(duration)
        budget.check(self.preset, self.duration, self.seed, events)  # before anything is built
        self._marks: list[dict] = []  # the workload's own moments (none for a stream given in)
        self.events = (
            events
            if events is not None
            else stream.build(self.preset, self.seed, stream.horizon(preset, self.duration), self._marks)
        )
        self.drain = drain  # run(): after the duration, panels finish what arrived (``run --drain``)
        own = getattr(self.events, "times", None)  # a ``Columns`` stream: its times, copied (insert)
        self._times = own[:] if own is not None else [ev["t"] for ev in self.events]
        self._end = bisect_right(self._times, self.duration)
        topic = registry.load_topic(self.preset.topic)
        self.panels: dict[str, Panel] = {}
        for spec in self.preset.panels:
            ctx = PanelContext(self.seed, self.duration, self.events, spec.name, self.preset)
            try:
                self.panels[spec.name] = topic.make_panel(spec.policy, spec.name, dict(spec.params), ctx)
            except ValueError as exc:
                where = self.preset.path or self.preset.name
                raise _presets.PresetError(f"{where}: panel {spec.name!r}: {exc}") from None
        if drain:
            stuck = [n for n, p in self.panels.items() if not hasattr(p, "drain")]
            if stuck:
                raise InputError(f"--drain: {self.preset.topic} panels ({', '.join(stuck)}) have no requests to drain")
        self.t = 0.0
        self._i = 0  # next stream index
        self._extra: dict[str, Callable[[PanelContext], Panel]] = {}  # add_panel's builders, by name
        self.checkpoint_every = checkpoint_every
        self._checkpoints: list[tuple[float, int, dict]] = []
        self._next_cp = 0.0
        self.sample_dt = sample_dt
        self.series: list[dict] = []
        self._next_sample = 0.0
        if checkpoint_every:
            self._checkpoint()
        if sample_dt:
            self._sample()

    # -- driving -----------------------------------------------------------------------------
    def _feed(self, until: float) -> None:
        hi = bisect_right(self._times, until, self._i, self._end)
        for p in self.panels.values():
            p.feed(self.events, self._i, hi, until)
        self._i = hi
        self.t = until

    def _checkpoint(self) -> None:
        # the stream is shared and read-only: a panel holding it directly must not copy it
        self._checkpoints.append((self.t, self._i, copy.deepcopy(self.panels, {id(self.events): self.events})))
        self._next_cp = self.t + self.checkpoint_every

    def checkpoint(self) -> None:
        """Take a checkpoint now (``seek`` restores the nearest one at or before its target)."""
        self._checkpoint()

    def tune_checkpoints(self, every: float) -> None:
        """Take a checkpoint every ``every`` virtual seconds from now on (0: none)."""
        self.checkpoint_every = every
        self._next_cp = self.t + every

    def insert(self, ev: dict) -> None:
        """Put ``ev`` into the stream after every event at or before its time (as scheduled events
        go after workload events at the same instant). The list is shared with the panels'
        contexts, so oracles see it too. An event in the past of the current state replays the
        run from the last checkpoint before it back to the current time."""
        k = bisect_right(self._times, ev["t"])
        self.events.insert(k, ev)
        self._times.insert(k, ev["t"])
        if k <= self._end:
            self._end += 1
        if k < self._i:
            target = self.t
            self._checkpoints = [cp for cp in self._checkpoints if cp[1] <= k]
            self.seek(self._checkpoints[-1][0] if self._checkpoints else 0.0)
            self.seek(target)

    def _sample(self) -> None:
        self.series.append({"t": self.t, "panels": self.metrics()})
        self._next_sample = self.t + self.sample_dt

    def advance(self, until: float) -> float:
        """Move the virtual clock to ``until`` (capped at the duration). Returns the new time."""
        until = min(float(until), self.duration)
        if until < self.t:
            return self.seek(until)
        while True:
            stops = [until]
            if self.checkpoint_every:
                stops.append(self._next_cp)
            if self.sample_dt:
                stops.append(self._next_sample)
            target = min(stops)
            self._feed(target)
            if self.checkpoint_every and target >= self._next_cp:
                self._checkpoint()
            if self.sample_dt and target >= self._next_sample:
                self._sample()
            if target >= until:
                return self.t

    def run(self) -> Scenario:
        """To the end; with ``drain``, arrivals stop there and every panel finishes its requests."""
        self.advance(self.duration)
        if self.drain:
            for p in self.panels.values():
                p.drain()
        return self

    def next_time(self) -> float | None:
        """The next instant anything happens: a stream event or a panel's internal event."""
        cands = []
        if self._i < self._end:
            cands.append(self._times[self._i])
        for p in self.panels.values():
            nt = p.next_time()
            if nt is not None:
                cands.append(nt)
        cands = [c for c in cands if c > self.t]
        return min(cands) if cands else None

    def step(self) -> float:
        """Advance to the next thing that happens (one event, or one engine step)."""
        nt = self.next_time()
        if nt is None:
            return self.advance(self.duration)
        return self.advance(min(nt, self.duration))

    def seek(self, t: float) -> float:
        """Jump to ``t``, backwards included: restore the nearest checkpoint at or before t
        (or rebuild from the start) and replay forward."""
        t = max(0.0, min(float(t), self.duration))
        if t >= self.t:
            return self.advance(t)
        best = None
        for cp in self._checkpoints:
            if cp[0] <= t:
                best = cp
        if best is None:
            fresh = Scenario(self.preset, self.seed, self.duration, events=self.events, drain=self.drain)
            self.panels = fresh.panels
            for name, build in self._extra.items():
                self.panels[name] = build(self._context(name))
            self.t, self._i = 0.0, 0
        else:
            self.t, self._i = best[0], best[1]
            self.panels = copy.deepcopy(best[2], {id(self.events): self.events})
        self.series = [s for s in self.series if s["t"] <= self.t]
        if self.sample_dt:
            self._next_sample = (self.series[-1]["t"] + self.sample_dt) if self.series else self.t
        self._next_cp = self.t + self.checkpoint_every
        self._checkpoints = [cp for cp in self._checkpoints if cp[0] <= self.t]
        return self.advance(t)

    # -- panels beside the preset's --------------------------------------------------------------
    def _context(self, name: str) -> PanelContext:
        return PanelContext(self.seed, self.duration, self.events, name, self.preset)

    def add_panel(self, name: str, build: Callable[[PanelContext], Panel]) -> Panel:
        """Add a panel beside the preset's (an edited policy, ``sims.core.userpolicy``): ``build(ctx)``
        makes it, and it replays the stream from 0 to now, into every checkpoint and chart sample
        taken so far, so seeking back and the charts see it as if it had run from the start."""
        if name in self.panels:
            raise ValueError(f"a panel named {name!r} exists already")
        panel = build(self._context(name))
        stops = sorted(
            [(cp[0], cp[1], cp[2], None) for cp in self._checkpoints] + [(s["t"], -1, None, s) for s in self.series],
            key=lambda x: x[0],
        )
        i = 0
        for t, _, saved, sample in stops:
            hi = bisect_right(self._times, t, i, self._end)
            panel.feed(self.events, i, hi, t)
            i = hi
            if saved is not None:
                saved[name] = copy.deepcopy(panel, {id(self.events): self.events})
            else:
                sample["panels"][name] = panel.metrics()
        panel.feed(self.events, i, self._i, self.t)
        self._extra[name] = build
        self.panels[name] = panel
        return panel

    def remove_panel(self, name: str) -> None:
        """Remove a panel that ``add_panel`` added (from the checkpoints and samples too)."""
        if name not in self._extra:
            raise ValueError(f"no added panel {name!r}; added: {', '.join(self._extra) or '(none)'}")
        del self._extra[name]
        self.panels.pop(name, None)
        for _, _, saved in self._checkpoints:
            saved.pop(name, None)
        for s in self.series:
            s["panels"].pop(name, None)

    # -- reading -----------------------------------------------------------------------------
    @property
    def events_done(self) -> int:
        return self._i

    def metrics(self) -> dict[str, dict[str, float]]:
        return {name: p.metrics() for name, p in self.panels.items()}

    def views(self) -> dict[str, Any]:
        return {name: p.view() for name, p in self.panels.items()}

    def snapshot(self) -> dict:
        return {"t": self.t, "panels": self.metrics()}

    def marks(self) -> list[dict]:
        """``{"t", "label"}`` of each moment the workload itself causes within the duration (a scan
        starts, a phase changes: ``stream.Mark``), in time order; they are not events."""
        return [m for m in self._marks if m["t"] <= self.duration]

    def run_events(self) -> list[dict]:
        """The stream events within the duration (the ones a full run feeds to the panels)."""
        return self.events[: self._end]

    def stream_sha256(self) -> str:
        return stream.sha256(self.run_events())

    def result(self) -> dict:
        """The ``run --json`` object (call after running to the end)."""
        return {
            "preset": self.preset.name,
            "topic": self.preset.topic,
            "seed": self.seed,
            "duration": self.duration,
            "stream_sha256": self.stream_sha256(),
            "panels": self.metrics(),
        }

    def check_invariants(self) -> None:
        for p in self.panels.values():
            p.check_invariants()
