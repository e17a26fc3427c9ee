"""An edited policy (``sims.core.userpolicy``) as a panel beside the preset's, on the same stream.

The topic builds the edited class exactly as it builds its own (``make_panel`` under
``registry.policy_in_place``), with the parameters and the panel generator of the panel it was
edited from, so an unedited copy gives that panel's numbers. ``EditedPanel`` wraps what the topic
built: it feeds one event at a time, starts a step budget before each, runs ``check_invariants()``
after each (thinned on long runs: ``check_due``), and on the first error stops, with the event
index, the time, the line and the message; the other panels keep running. The topic decides what
class the edit runs as (its ``Topic.edit``, a ``registry.EditRules``): the replacement topics
(cache, paging) check their mechanism's contract after every reference (``sims.replace.edit``),
raising ``ContractError`` when it breaks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sims.core import registry, userpolicy
from sims.core.panel import Panel, PanelContext
from sims.core.presets import PanelSpec, Preset
from sims.core.userpolicy import BudgetExceeded, LoadedPolicy, PolicyError, describe, user_line

SUFFIX = " (edited)"  # an edited panel is named after the panel it was edited from
# The panel's check_invariants() (the policy's own, often O(size)) runs after each of the first
# CHECK_EVERY events, then after every 10th up to 10x that, every 100th up to 100x...: a broken
# state is caught within 1% of the run. The mechanism's contract is checked at every reference.
CHECK_EVERY = 1_000


def check_due(n: int) -> bool:
    """Whether the ``n``-th event fed (1-based) is followed by ``check_invariants()``."""
    step, bound = 1, CHECK_EVERY
    while n >= bound:
        step, bound = step * 10, bound * 10
    return n % step == 0


class ContractError(AssertionError):
    """A topic's mechanism contract, broken by an edited policy (raised by the class its
    ``EditRules.wrap`` returns)."""


@dataclasses.dataclass(frozen=True)
class Stop:
    """Why an edited panel stopped: ``kind`` (exception | invariant | budget), the message, the line
    of the edited source (None when none is at fault), the stream index and virtual time."""

    kind: str
    message: str
    line: int | None
    index: int
    t: float

    def text(self, filename: str = "", name: str = "") -> str:
        """``FILE:LINE: NAME stopped at event K (t=T s): message`` (``line N: `` without a file)."""
        what = "invariant violated" if self.kind == "invariant" else "stopped"
        where = f"{filename}:{self.line}: " if filename and self.line else f"line {self.line}: " if self.line else ""
        who = f"{name} " if name else ""
        return f"{where}{who}{what} at event {self.index} (t={self.t:g} s): {self.message}"

    def as_json(self, filename: str = "") -> dict[str, Any]:
        return {**dataclasses.asdict(self), "text": self.text(filename)}


class EditedPanel(Panel):
    """The topic's panel for an edited class, fed one event at a time under a step budget, its
    invariants checked after each event; stopped (``stopped``) at the first error, keeping the
    metrics and view it had."""

    def __init__(self, name: str, inner: Panel, loaded: LoadedPolicy) -> None:
        super().__init__(name, inner.params, inner.ctx)
        self.topic = inner.topic
        self.inner = inner
        self.loaded = loaded
        self.stopped: Stop | None = None
        self.events = 0  # events fed

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        """Event by event: a budget before each, then ``check_invariants()`` (``check_due``); then
        the timed work up to ``until``. Every schedule here counts events, never frames, so the CLI
        and the browser stop at the same event."""
        if self.stopped is not None:
            return
        inner, steps = self.inner, self.loaded.steps
        steps.new_frame()
        k, t, checking = lo, until, False
        try:
            for k in range(lo, hi):
                t = events[k]["t"]
                steps.start()
                checking = False
                inner.feed(events, k, k + 1, t)
                self.events += 1
                if check_due(self.events):
                    checking = True
                    steps.start()
                    inner.check_invariants()
            k, t, checking = hi, until, False
            steps.start()
            inner.feed(events, hi, hi, until)
        except BudgetExceeded as exc:
            self._stop("budget", exc, k, t)
        except ContractError as exc:
            self._stop("invariant", exc, k, t)
        except Exception as exc:  # the edited code's own error: the panel stops, the others go on
            self._stop("invariant" if checking else "exception", exc, k, t)

    def _stop(self, kind: str, exc: BaseException, index: int, t: float) -> None:
        message = str(exc) if kind == "invariant" and str(exc) else describe(exc)
        self.stopped = Stop(kind, message, user_line(exc.__traceback__, self.loaded.filename), index, t)

    def metrics(self) -> dict[str, float]:
        return self.inner.metrics()

    def view(self) -> dict[str, Any]:
        try:
            self.loaded.steps.start()
            view = dict(self.inner.view())
        except (Exception, BudgetExceeded) as exc:
            view = {"kind": "error", "error": describe(exc)}
        if self.stopped is not None:
            view["stopped"] = self.stopped.as_json(self.loaded.filename)
        return view

    def next_time(self) -> float | None:
        return None if self.stopped is not None else self.inner.next_time()

    def check_invariants(self) -> None:
        if self.stopped is None:
            self.inner.check_invariants()


def base_panel(preset: Preset, loaded: LoadedPolicy | None, base: str | None = None) -> PanelSpec:
    """The panel an edit starts from: ``base`` by name, else the first panel of the policy it
    registers, else the preset's first panel."""
    by_name = {p.name: p for p in preset.panels}
    if base is not None:
        if base not in by_name:
            raise ValueError(f"no panel {base!r} in preset {preset.name}; valid: {', '.join(by_name)}")
        return by_name[base]
    same = [p for p in preset.panels if loaded is not None and p.policy == loaded.name]
    return (same or list(preset.panels))[0]


def builder(loaded: LoadedPolicy, spec: PanelSpec, name: str) -> Callable[[PanelContext], Panel]:
    """``build(ctx)`` for ``Scenario.add_panel``: the topic's panel for the edited class, wrapped."""
    topic = registry.load_topic(loaded.topic)
    cls = topic.edit.wrap(loaded.cls, loaded.steps)

    def build(ctx: PanelContext) -> Panel:
        # the generator of the panel it was edited from, so an unedited copy draws what it draws
        own = dataclasses.replace(ctx, panel_name=spec.name)
        loaded.steps.start()
        try:
            with registry.policy_in_place(loaded.topic, loaded.name, cls):
                inner = topic.make_panel(loaded.name, name, dict(spec.params), own)
        except (Exception, BudgetExceeded) as exc:
            line = user_line(exc.__traceback__, loaded.filename)
            raise PolicyError(describe(exc), line, "exception", loaded.filename) from None
        return EditedPanel(name, inner, loaded)

    return build


def add_edited(scenario: Any, loaded: LoadedPolicy, preset: Preset | None = None, base: str | None = None) -> str:
    """Add ``loaded`` to ``scenario`` as the panel ``"<base panel> (edited)"`` (replacing an earlier
    edit of the same panel), replayed from 0 to the scenario's time. ``preset``: where the base
    panel is looked up (default: the scenario's). Returns the new panel's name."""
    spec = base_panel(preset or scenario.preset, loaded, base)
    name = spec.name + SUFFIX
    if name in scenario.panels:
        scenario.remove_panel(name)
    scenario.add_panel(name, builder(loaded, spec, name))
    return name


def stops(scenario: Any) -> dict[str, Stop]:
    """The edited panels that stopped, by name."""
    return {n: p.stopped for n, p in scenario.panels.items() if isinstance(p, EditedPanel) and p.stopped is not None}


def add_file(scenario: Any, path: str, preset: Preset | None = None) -> str:
    """``run --policy-file PATH``: load the file and add it (``add_edited``); errors name PATH:line."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read(userpolicy.MAX_SOURCE + 1)  # a bigger file is refused, not read whole
    except UnicodeDecodeError as exc:
        raise userpolicy.PolicyError(
            f"not UTF-8 text (byte {exc.start}); expected Python source", filename=path
        ) from None
    if len(source) > userpolicy.MAX_SOURCE:
        raise userpolicy.PolicyError(f"over {userpolicy.MAX_SOURCE:,} characters", filename=path)
    return add_edited(scenario, userpolicy.load(source, scenario.preset.topic, path), preset)
