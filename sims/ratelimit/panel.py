"""The rate-limiting panel: one limiter over the shared request stream."""

from __future__ import annotations

from sims.core.diverge import Decision
from sims.core.metrics import SlidingMax, ratio
from sims.core.panel import Panel
from sims.ratelimit.exact import ticks

_RECENT = 60  # decisions kept for the view


class LimiterPanel(Panel):
    topic = "ratelimit"

    def __init__(self, name, params, ctx, limiter) -> None:
        super().__init__(name, params, ctx)
        self.limiter = limiter
        self.requests = 0
        self.accepted = 0
        # exact integers, as the limiters count: ticks x the limiter's time_scale (release_ticks)
        self.peak = SlidingMax(ticks(params["measure_window"]) * limiter.time_scale)
        self.recent: list[list] = []  # [t, admitted]

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        admit = self.limiter.admit
        release = self.limiter.release_ticks
        peak = self.peak
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            if kind == "request":
                n = 1
            elif kind == "burst":  # a "send a burst" action: count requests at one instant
                n = ev.get("count", 1)
            else:
                continue
            t = ev["t"]
            for _ in range(n):
                self.requests += 1
                ok = admit(t)
                if ok:
                    self.accepted += 1
                    peak.add(release(t))
                if hi - k <= _RECENT:
                    self.recent.append([t, ok])
        del self.recent[:-_RECENT]

    def decide(self, events: list[dict], k: int) -> Decision | None:
        ev = events[k]
        accepted = self.accepted
        self.feed(events, k, k + 1, ev["t"])
        if ev["kind"] == "request":
            action = "admit" if self.accepted > accepted else "reject"
            return Decision(action, f"request #{k}", facts={"state": self.limiter.state()})
        if ev["kind"] == "burst":
            n = self.accepted - accepted
            return Decision(
                "burst", f"{ev.get('count', 1)} requests", f"{n} admitted", facts={"state": self.limiter.state()}
            )
        return None

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        if decision.action == "burst":
            return (
                f"{self.limiter.policy_name} admitted {decision.target.split()[0]} of the burst of {decision.subject}"
            )
        return self.limiter.explain(decision, other)

    def metrics(self) -> dict[str, float]:
        rejected = self.requests - self.accepted
        return {
            "requests": self.requests,
            "accepted": self.accepted,
            "rejected": rejected,
            "reject_rate": ratio(rejected, self.requests),
            "max_in_any_window": self.peak.best,
        }

    def view(self) -> dict:
        return {"kind": "limiter", "state": self.limiter.state(), "recent": self.recent}

    def check_invariants(self) -> None:
        self.limiter.check_invariants()
        assert self.accepted <= self.requests
