"""Divergence: the stream events at which two panels of one scenario decide differently, and why.

This is the panel contract's recording mode (docs/architecture.md). A panel that records decisions
overrides two hooks:

- ``decide(events, k) -> Decision | None``: handle ``events[k]`` exactly as
  ``feed(events, k, k + 1, events[k]["t"])`` would, and return what it decided (the victim it
  evicted, the server it routed to, admit or reject, the address it allocated, the node that got
  the key); None when the event decided nothing;
- ``explain(decision, other=None) -> str``: right after that event, one sentence of why, in its
  policy's own terms (``other``: the other panel's decision, which the sentence may mention).

Nothing calls them in a normal run, so runs stay as fast and their results identical. Two
decisions are equal when their ``action``, ``subject``, ``target`` and ``detail`` are; ``facts``
(what a sentence needs: times, counts, the loads a router saw) are never compared.

Standard library only: the browser's worker runs this too.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sims.core.limits import InputError
from sims.core.panel import Panel

DEFAULT_LIMIT = 20  # divergences ``contention diff`` prints when not told


@dataclass(frozen=True)
class Decision:
    """What one panel decided on one event: ``action`` ("evict", "route", "admit", "place"...),
    its ``subject`` (what a reason must name: "k17", "request 12", "obj a3") and ``target``
    (where it went: "server 3", "at 4096"); ``detail`` is compared but not shown (a scan's whole
    list of victims)."""

    action: str
    subject: str
    target: str = ""
    detail: tuple = ()
    facts: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def text(self) -> str:
        return f"{self.action} {self.subject}" + (f" -> {self.target}" if self.target else "")


def name_key(key: Hashable) -> str:
    """How a sentence names a cache key: k17 for the integer 17, a string as it is."""
    return f"k{key}" if isinstance(key, int) and not isinstance(key, bool) else str(key)


def seconds(t: float | None) -> str:
    return "never" if t is None else f"t={t:.3f} s"


def event_text(ev: dict) -> str:
    """One stream event in a few words, for the table's event column."""
    kind = ev.get("kind", "?")
    if "key" in ev:
        return f"{kind} {name_key(ev['key'])}"
    for field_name in ("id", "node"):
        if field_name in ev:
            return f"{kind} {ev[field_name]}"
    if kind == "scan":
        return f"scan {ev.get('length')} from {name_key(ev.get('start'))}"
    return str(kind)


def records(panel: Panel) -> bool:
    """Whether the panel's class records decisions (overrides ``decide``)."""
    return type(panel).decide is not Panel.decide


@dataclass(frozen=True)
class Divergence:
    index: int  # position in the stream
    t: float
    event: str
    a: Decision | None
    b: Decision | None
    reason_a: str
    reason_b: str

    def as_json(self) -> dict[str, Any]:
        def side(d: Decision | None, reason: str) -> dict[str, Any]:
            return {"decision": d.text if d else "nothing", "reason": reason}

        return {
            "index": self.index,
            "t": self.t,
            "event": self.event,
            "a": side(self.a, self.reason_a),
            "b": side(self.b, self.reason_b),
        }


class Diverge:
    """Two panels of a scenario, replayed event by event in recording mode. Iterating yields each
    ``Divergence`` in stream order; it resumes where it stopped, so the browser's "next
    divergence" costs only the events up to the next one. ``compared`` counts events looked at."""

    def __init__(
        self,
        preset: Any,
        a: str,
        b: str,
        seed: int | None = None,
        duration: float | None = None,
        events: list[dict] | None = None,
    ) -> None:
        if a == b:
            raise InputError(f"--panels: pick two different panels, got {a!r} twice")
        from sims.core.scenario import Scenario  # here: topics import this module for Decision

        self.scenario = Scenario(preset, seed, duration, [a, b], events=events)
        self.names = (a, b)
        self.pa, self.pb = (self.scenario.panels[n] for n in self.names)
        topic = self.scenario.preset.topic
        if not records(self.pa) or not records(self.pb):
            raise InputError(f"{topic} panels record no decisions yet, so there is nothing to compare")
        self.events = self.scenario.events  # the list the panels were built with (paging checks it)
        self.end = len(self.scenario.run_events())
        self.compared = 0
        self.found = 0

    def __iter__(self) -> Iterator[Divergence]:
        return self

    def __next__(self) -> Divergence:
        events, pa, pb = self.events, self.pa, self.pb
        while self.compared < self.end:
            k = self.compared
            self.compared += 1
            da = pa.decide(events, k)
            db = pb.decide(events, k)
            if da != db:
                self.found += 1
                ev = events[k]
                ra = pa.explain(da, db) if da is not None else f"{self.names[0]} decided nothing on this event"
                rb = pb.explain(db, da) if db is not None else f"{self.names[1]} decided nothing on this event"
                return Divergence(k, ev["t"], event_text(ev), da, db, ra, rb)
        raise StopIteration

    def take(self, limit: int) -> list[Divergence]:
        out: list[Divergence] = []
        for d in self:
            out.append(d)
            if len(out) >= limit:
                break
        return out

    def count_rest(self) -> int:
        """Run to the end without explaining; the total number of divergences."""
        events, pa, pb = self.events, self.pa, self.pb
        for k in range(self.compared, self.end):
            if pa.decide(events, k) != pb.decide(events, k):
                self.found += 1
        self.compared = self.end
        return self.found


def first_divergence(preset: Any, a: str, b: str, **kw: Any) -> Divergence | None:
    return next(Diverge(preset, a, b, **kw), None)
