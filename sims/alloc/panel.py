"""The allocator panel: one policy over the shared stream of alloc, grow and free events.

Events: ``{"kind": "alloc", "id", "size"[, "max"]}``, ``{"kind": "grow", "id", "size"}`` (the
object's new total size) and ``{"kind": "free", "id"}``. With ``reserve = true`` an alloc takes
``max`` bytes up front (a contiguous reservation) and later grows fit inside it. A free or grow of
an object that is not live is ignored. A grow that fails drops the object, which gives its memory
back, as a preempted sequence gives back its KV cache. ``requests`` counts allocs; ``failed``
counts objects refused at alloc or dropped at a grow. An alloc without an id (a button press)
gets one here.
"""

from __future__ import annotations

from collections import deque

from sims.core.diverge import Decision
from sims.core.metrics import ratio
from sims.core.panel import Panel

_RECENT = 32  # operations kept for the view
_MAX_RANGES = 2048  # heap-map ranges sent to the view


class AllocPanel(Panel):
    topic = "alloc"

    def __init__(self, name, params, ctx, policy) -> None:
        super().__init__(name, params, ctx)
        self.policy = policy
        self.reserve = params["reserve"]
        self.sizes: dict[object, int] = {}  # live object -> bytes it asked for
        self.used = 0  # sum of ``sizes``
        self.peak = 0  # most bytes held at once (live blocks with their waste)
        self.requests = 0
        self.failed = 0
        self.frag_failed = 0  # failures while the free bytes, in total, could have held the request
        self.failed_ids: list = []  # ids whose alloc failed, in order
        # [t, kind, id, ok] of the last operations, whatever the chunks the run was fed in
        self.recent: deque[list] = deque(maxlen=_RECENT)
        self._auto = 0

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        for k in range(lo, hi):
            self.on_event(events[k])

    def on_event(self, ev: dict) -> None:
        kind = ev["kind"]
        if kind == "alloc":
            oid = ev.get("id")
            if oid is None:
                self._auto += 1
                oid = f"x{self._auto}"
            ok = self.alloc(oid, ev["size"], ev.get("max", 0))
        elif kind == "grow":
            oid = ev["id"]
            if oid not in self.sizes:
                return
            ok = self.grow(oid, ev["size"])
        elif kind == "free":
            oid = ev["id"]
            if oid not in self.sizes:
                return
            self.free(oid)
            ok = True
        else:
            return
        self.recent.append([ev["t"], kind, oid, ok])

    # -- operations (also used by ``contention trace alloc``) --------------------------------
    def alloc(self, oid: object, size: int, reserve_to: int = 0) -> bool:
        if oid in self.sizes:
            raise ValueError(f"alloc of id {oid!r}, which is already live")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"alloc {oid!r}: size must be a positive integer, got {size!r}")
        self.requests += 1
        ask = reserve_to if self.reserve and reserve_to > size else size
        if not self.policy.alloc(oid, ask):
            self._fail(ask)
            self.failed_ids.append(oid)
            return False
        self.sizes[oid] = size
        self.used += size
        if self.policy.held > self.peak:
            self.peak = self.policy.held
        return True

    def grow(self, oid: object, size: int) -> bool:
        old = self.sizes[oid]
        if size <= old:
            return True
        if not self.policy.grow(oid, size):
            self._fail(size - self.policy.capacity(oid))
            self.free(oid)
            return False
        self.sizes[oid] = size
        self.used += size - old
        if self.policy.held > self.peak:
            self.peak = self.policy.held
        return True

    def _fail(self, extra: int) -> None:
        self.failed += 1
        if self.policy.heap - self.policy.held >= extra:
            self.frag_failed += 1

    def free(self, oid: object) -> None:
        self.used -= self.sizes.pop(oid)
        self.policy.free(oid)

    # -- recording mode (sims/core/diverge.py) -----------------------------------------------
    def decide(self, events: list[dict], k: int) -> Decision | None:
        ev = events[k]
        kind = ev["kind"]
        if kind == "grow" and ev["id"] not in self.sizes or kind not in ("alloc", "grow"):
            self.feed(events, k, k + 1, ev["t"])
            return None
        self.feed(events, k, k + 1, ev["t"])
        oid = ev.get("id", f"x{self._auto}")
        pol = self.policy
        facts = {"size": ev["size"], "largest": pol.largest_free(), "free": pol.free_bytes()}
        if oid not in self.sizes:
            return Decision("fail", f"object {oid}", facts=facts)
        facts["held"] = pol.capacity(oid)
        return Decision("grow" if kind == "grow" else "place", f"object {oid}", pol.where(oid), facts=facts)

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        return self.policy.explain(decision, other)

    # -- reading ------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        pol = self.policy
        free = pol.heap - pol.held
        return {
            "requests": self.requests,
            "failed": self.failed,
            "fail_rate": ratio(self.failed, self.requests),
            "utilization": ratio(self.used, pol.heap),
            "external_frag": 1.0 - ratio(pol.largest_free(), free) if free else 0.0,
            "internal_frag": ratio(pol.held - self.used, pol.held),
            "peak_used": self.peak,
            "frag_failed": self.frag_failed,
            "moves": self.policy.moves,
            "live": len(self.sizes),
        }

    def view(self) -> dict:
        ranges = self.policy.ranges()
        return {
            "kind": "heap",
            "heap": self.policy.heap,
            "ranges": ranges[:_MAX_RANGES],
            "truncated": len(ranges) > _MAX_RANGES,
            "state": self.policy.state(),
            "recent": list(self.recent),
        }

    def check_invariants(self) -> None:
        self.policy.check_invariants()
        assert self.used == sum(self.sizes.values())
        for oid, size in self.sizes.items():
            assert self.policy.capacity(oid) >= size, f"object {oid!r} holds less than it asked for"
        assert self.used <= self.policy.held <= self.peak <= self.policy.heap
        assert 0 <= self.frag_failed <= self.failed <= self.requests
