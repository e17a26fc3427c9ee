"""The paging panel: one replacement policy over the shared reference stream.

Stream events: ``{"t", "kind": "ref", "key": page}`` (``"op": "w"``: a write, which NRU's M bit
records); the "scan" action
``{"kind": "scan", "start": page, "length": n}`` touches pages start..start+n-1 at one instant
(the same event the cache topic uses).
"""

from __future__ import annotations

from bisect import bisect_left

from sims.core.diverge import Decision
from sims.core.metrics import ratio
from sims.core.panel import Panel
from sims.paging.policies import scan_pages
from sims.replace import why

_RECENT = 48  # references kept, with hit or fault, for the view


class _Positions:
    """Stream positions of "scan" events: read-only, so checkpoints share them."""

    __slots__ = ("items",)

    def __init__(self, items: list[int]) -> None:
        self.items = items

    def __deepcopy__(self, memo: dict) -> _Positions:
        return self


class PagingPanel(Panel):
    topic = "paging"

    def __init__(self, name, params, ctx, cls) -> None:
        super().__init__(name, params, ctx)
        extra = {k: params[k] for k in getattr(cls, "PARAMS", {}) if k in params}
        self.policy = cls(params["frames"], ctx.events, ctx.rng("evict"), **extra)
        self.scans = _Positions([k for k, ev in enumerate(ctx.events) if ev["kind"] == "scan"])
        self.refs = 0
        self.hits = 0
        self.recent: list[list] = []  # [page, hit], oldest first

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        if events is not self.ctx.events:
            raise ValueError(f"{self.name}: fed a stream other than the one it was built with")
        cut = max(lo, hi - _RECENT)
        scans = self.scans.items
        i = bisect_left(scans, lo)
        k = lo
        while k < hi:
            stop = scans[i] if i < len(scans) and scans[i] < hi else hi
            if k < min(stop, cut):
                refs, hits = self.policy.serve(events, k, min(stop, cut))
                self.refs += refs
                self.hits += hits
            for j in range(max(k, cut), stop):
                if events[j]["kind"] == "ref":
                    self._one(events[j]["key"], events[j].get("op") == "w")
            if stop < hi:
                for page in scan_pages(events[stop]):
                    self._one(page)
                i += 1
            k = stop + 1
        del self.recent[:-_RECENT]

    def on_event(self, ev: dict) -> None:
        """An event outside the stream (e.g. injected by hand): refs and scans; OPT treats a page
        it did not foresee as never used again."""
        if ev["kind"] == "ref":
            self._one(ev["key"], ev.get("op") == "w")
        elif ev["kind"] == "scan":
            for page in scan_pages(ev):
                self._one(page)

    def _one(self, page: int, write: bool = False) -> None:
        hit = self.policy.access(page)
        if write:
            self.policy.wrote(page)
        self.refs += 1
        self.hits += hit
        self.recent.append([page, bool(hit)])

    def decide(self, events: list[dict], k: int) -> Decision | None:
        return why.record(self, self.policy, events, k, lambda p: f"page {p}")

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        return self.policy.explain(decision, other)

    def metrics(self) -> dict[str, float]:
        faults = self.refs - self.hits
        return {"refs": self.refs, "faults": faults, "hits": self.hits, "fault_rate": ratio(faults, self.refs)}

    def view(self) -> dict:
        return {
            "kind": "frames",
            "frames": self.policy.frames,
            "resident": self.policy.resident(),
            "recent": self.recent[-_RECENT:],
            "state": self.policy.state(),
        }

    def check_invariants(self) -> None:
        self.policy.check_invariants()
        assert 0 <= self.hits <= self.refs
