"""Several engines behind one front door: colocated replicas, or disaggregated prefill/decode.

``Deployment`` has the Engine's driving API (submit, advance, next_time, records, stats).
Disaggregated: prefill replicas (role="prefill") compute the prompt and the first token, the KV
moves over the GPU link (tokens * KV bytes / link bandwidth), then a decode replica
(role="decode") generates the rest. Colocated: every replica does both. New requests and handoffs
go to the replica with the fewest outstanding tokens (ties: the lowest index).
"""

from __future__ import annotations

import random
from dataclasses import replace

from sims.core.clock import Clock
from sims.engine.config import DEPLOYMENTS, EngineConfig
from sims.engine.engine import Engine, Handoff
from sims.engine.metrics import EngineStats, Record


def _least_loaded(engines: list[Engine]) -> Engine:
    best = engines[0]
    for e in engines[1:]:
        if e.outstanding_tokens < best.outstanding_tokens:
            best = e
    return best


class Deployment:
    def __init__(
        self,
        config: EngineConfig,
        mode: str = "disaggregated",
        prefill_replicas: int = 1,
        decode_replicas: int = 1,
        link_bytes_s: float = 0.0,
        rng: random.Random | None = None,
    ) -> None:
        if mode not in DEPLOYMENTS:
            raise ValueError(f"unknown deployment {mode!r}; valid: {', '.join(DEPLOYMENTS)}")
        if prefill_replicas < 1 or decode_replicas < 1:
            raise ValueError("prefill_replicas and decode_replicas must be >= 1")
        rng = rng or random.Random(0)
        self.mode = mode
        if mode == "colocated":
            self.prefill = [
                Engine(config, random.Random(rng.getrandbits(64))) for _ in range(prefill_replicas + decode_replicas)
            ]
            self.decode: list[Engine] = []
        else:
            self.prefill = [
                Engine(replace(config, role="prefill"), random.Random(rng.getrandbits(64)))
                for _ in range(prefill_replicas)
            ]
            self.decode = [
                Engine(replace(config, role="decode"), random.Random(rng.getrandbits(64)))
                for _ in range(decode_replicas)
            ]
        self.engines = self.prefill + self.decode
        cost = self.prefill[0].cost
        self.link_bytes_s = link_bytes_s or cost.link_bytes_s
        self._transfers = Clock()  # KV transfers: requests by their arrival at a decoder
        self.transfer_s = 0.0  # total KV transfer time
        for e in self.prefill:
            e.handoff_listener = self._on_handoff
        self.now = 0.0

    def _on_handoff(self, h: Handoff) -> None:
        dt = self.prefill[0].cost.transfer_time(h.tokens, self.link_bytes_s)
        self.transfer_s += dt
        self._transfers.schedule(h.t + dt, h.request)

    def submit(self, req: dict, t: float) -> None:
        _least_loaded(self.prefill).submit(req, t)

    def next_time(self) -> float | None:
        times = [e.next_time() for e in self.engines]
        if self._transfers:
            times.append(self._transfers.peek())
        times = [x for x in times if x is not None]
        return min(times) if times else None

    def advance(self, until: float) -> None:
        """Prefill steps and KV arrivals in time order up to ``until``, then every engine to it."""
        while True:
            first, tp = None, None
            for e in self.prefill:
                nt = e.next_time()
                if nt is not None and (tp is None or nt < tp):
                    first, tp = e, nt
            th = self._transfers.peek()
            if tp is not None and tp <= until and (th is None or tp <= th):
                first.advance(tp)
                continue
            if th is not None and th <= until:
                _, req = self._transfers.pop()
                d = _least_loaded(self.decode)
                d.advance(th)
                d.submit(req, th)
                continue
            break
        for e in self.engines:
            e.advance(until)
        self.now = max(until, max(e.now for e in self.engines))

    def in_flight(self) -> list[tuple]:
        """Requests in the engines, and those whose KV is on the link (first token out)."""
        out = [x for e in self.engines for x in e.in_flight()]
        for req in self._transfers:  # the Clock yields its scheduled items
            pre = req["prefilled"]
            out.append((pre["arrival"], pre["first_token"], 1))
        return out

    @property
    def records(self) -> list[Record]:
        return [r for e in self.engines for r in e.records]

    @property
    def stats(self) -> EngineStats:
        total = EngineStats()
        for e in self.engines:
            total = total.merge(e.stats)
        if self.decode:  # a handed-off request is counted once, where it completes
            total.rejected = sum(e.stats.rejected for e in self.prefill)
        return total

    def check_invariants(self) -> None:
        for e in self.engines:
            e.check_invariants()
        handed = sum(len(e.handoffs) for e in self.prefill)
        arrived = sum(e.submitted for e in self.decode)
        assert handed == arrived + len(self._transfers), "a handoff was lost in transfer"
