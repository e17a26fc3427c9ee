"""Per-request records, per-engine step statistics, and the DESIGN engine metrics over them.

``summarize(records, elapsed, stats)`` works on any number of replicas: pass every replica's
records and ``EngineStats`` (the cluster topic aggregates this way). ``Accumulator`` is the same
computation fed one record at a time, so a panel's live metrics equal ``summarize`` exactly.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from math import fsum
from typing import NamedTuple

from sims.core.metrics import censored_percentile, percentile, ratio


class Record(NamedTuple):
    """One completed request (a named tuple: one is made per request, at tuple speed)."""

    rid: int
    arrival: float  # seconds, when the request reached this engine (or the cluster)
    first_token: float  # when its first output token was produced
    finish: float  # when its last output token was produced
    prompt_len: int
    output_len: int
    cached_tokens: int  # prompt tokens served from the prefix cache at first admission
    preemptions: int
    tenant: int = 0
    samples: int = 1  # parallel samples (n); output_len counts the tokens of all of them

    def __deepcopy__(self, memo: dict) -> Record:  # immutable: checkpoints share it
        return self


@dataclass(slots=True)
class EngineStats:
    """Step-level sums; integrals are over simulated step time (seconds x token slots)."""

    steps: int = 0
    busy_s: float = 0.0
    batch_sum: int = 0  # sequences scheduled, summed over steps
    tokens_sum: int = 0  # tokens scheduled (prefill chunk tokens + decode tokens)
    prefill_tokens: int = 0  # prompt (and recomputed) tokens computed in prefill chunks
    decode_tokens: int = 0  # tokens produced by decode steps
    prefills_done: int = 0  # first tokens sampled at the end of a prefill (one per sample)
    cow_copies: int = 0  # blocks copied when parallel samples forked from a shared prompt
    kv_total: float = 0.0  # integral of the whole KV memory (slots)
    kv_state: float = 0.0  # integral of slots holding token state
    kv_reserved: float = 0.0  # reserved for the holder's own future tokens, still empty
    kv_internal: float = 0.0  # reserved and never to be used (over-reservation, last-block tails)
    kv_external: float = 0.0  # not reserved: free (fragmented or not) and cached-but-free blocks
    kv_loaded_s: float = 0.0  # step time during which requests waited for room
    kv_loaded_state: float = 0.0  # integral over those steps of the token-state share
    preemptions: int = 0
    swaps: int = 0
    swapped_tokens: int = 0  # KV tokens swapped out to host memory
    dropped_tokens: int = 0  # computed KV tokens thrown away by recompute preemption
    victims_newest: int = 0  # preemptions whose victim was the most recently admitted request
    pauses: int = 0  # MLFQ: a running request paused for a better-level one
    rejected: int = 0
    itl_us: dict = field(default_factory=dict)  # step duration (microseconds) -> decode tokens it produced

    def merge(self, other: EngineStats) -> EngineStats:
        out = EngineStats()
        for name in self.__slots__:
            if name != "itl_us":
                setattr(out, name, getattr(self, name) + getattr(other, name))
        for src in (self.itl_us, other.itl_us):
            for us, n in src.items():
                out.itl_us[us] = out.itl_us.get(us, 0) + n
        return out


def weighted_percentile(hist: dict, q: float) -> float:
    """The q-quantile (nearest rank) of a {value: count} histogram; 0 when empty."""
    total = sum(hist.values())
    if not total:
        return 0.0
    rank = q * (total - 1)
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if seen > rank:
            return value
    return max(hist)


class Sorted:
    """Values read sorted: exact percentiles, and an order-independent mean (fsum). Added values
    are sorted when next read (one sort, not an insertion each: latencies are never -0.0 or NaN,
    so the sorted list is the same either way)."""

    __slots__ = ("_v", "_n")

    def __init__(self) -> None:
        self._v: list[float] = []
        self._n = 0  # the sorted prefix

    def add(self, x: float) -> None:
        self._v.append(x)

    @property
    def v(self) -> list[float]:
        v = self._v
        if self._n < len(v):
            v.sort()
            self._n = len(v)
        return v

    def p(self, q: float) -> float:
        return percentile(self.v, q, is_sorted=True)

    def mean(self) -> float:
        return fsum(self.v) / len(self.v) if self.v else 0.0

    def max(self) -> float:
        return self.v[-1] if self.v else 0.0


class Slo(NamedTuple):
    """A request's service-level objective, seconds; 0 = no limit on that figure. A request meets
    it when it completes and its TTFT, TPOT (when it has one) and end-to-end latency are each
    within their limit (DistServe's goodput)."""

    ttft: float = 0.0
    tpot: float = 0.0
    e2e: float = 0.0

    @classmethod
    def from_params(cls, params: dict) -> Slo:
        return cls(params.get("ttft_slo", 0.0), params.get("tpot_slo", 0.0), params.get("e2e_slo", 0.0))


class Accumulator:
    """Latency samples and token counts over completed requests. Every result is independent of
    the order records are added in (exact percentiles, fsum means), so replicas can be merged.

    ``result`` counts every arrival (DESIGN.md): the completed requests here plus the ``pending``
    ones still in flight at ``now``, each an ``(arrival, first_token, generated)`` tuple
    (first_token < 0 while it waits; generated = output tokens so far, per sample). Requests that
    meet ``slo`` are counted apart (goodput); with no SLO every completed request meets it."""

    def __init__(self, slo: Slo | None = None) -> None:
        self.slo = slo or Slo()
        self.ttft = Sorted()
        self.tpot = Sorted()
        self.e2e = Sorted()
        self.completed = 0
        self.output_tokens = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.good = 0  # completed requests that met the SLO
        self.good_output_tokens = 0

    def add(self, r: Record) -> None:
        self.completed += 1
        self.output_tokens += r.output_len
        self.prompt_tokens += r.prompt_len
        self.cached_tokens += r.cached_tokens
        ttft = r.first_token - r.arrival
        e2e = r.finish - r.arrival
        self.ttft.add(ttft)
        self.e2e.add(e2e)
        per_sample = r.output_len // r.samples
        tpot = 0.0
        if per_sample > 1:
            tpot = (r.finish - r.first_token) / (per_sample - 1)
            self.tpot.add(tpot)
        slo = self.slo
        if (
            (not slo.ttft or ttft <= slo.ttft)
            and (not slo.tpot or tpot <= slo.tpot)
            and (not slo.e2e or e2e <= slo.e2e)
        ):
            self.good += 1
            self.good_output_tokens += r.output_len

    def result(self, elapsed: float, stats: EngineStats, pending=(), now: float | None = None) -> dict[str, float]:
        s = stats
        now = elapsed if now is None else now
        ttft_known, ttft_age, e2e_age, tpot_so_far = [], [], [], []
        for arrival, first, generated in pending:
            age = now - arrival if now > arrival else 0.0
            e2e_age.append(age)
            if first < 0:
                ttft_age.append(age)
            else:
                ttft_known.append(first - arrival)
                if generated > 1 and now > first:
                    tpot_so_far.append((now - first) / (generated - 1))
        ttft_known.sort()
        ttft_age.sort()
        e2e_age.sort()
        tpot_so_far.sort()
        ttft = Censored(_merge(self.ttft.v, ttft_known), ttft_age)
        e2e = Censored(self.e2e.v, e2e_age)
        tpot = Censored(self.tpot.v, tpot_so_far)
        out = {"completed": self.completed}
        for name, dist, qs in (("ttft", ttft, (50, 90, 99)), ("tpot", tpot, (50, 99)), ("e2e", e2e, (50, 90))):
            for q in qs:
                value, censored = dist.p(q / 100)
                out[f"{name}_p{q}"] = value
                out[f"{name}_p{q}_censored"] = censored
        tokens = s.decode_tokens + s.prefills_done  # every output token generated in the window
        out.update(
            {
                "throughput_tok_s": ratio(tokens, elapsed),
                "avg_batch_size": ratio(s.batch_sum, s.steps),
                "kv_utilization": ratio(s.kv_state, s.kv_total),
                "kv_utilization_loaded": ratio(s.kv_loaded_state, s.kv_loaded_s),
                "kv_loaded_frac": ratio(s.kv_loaded_s, s.busy_s),
                "preemptions": s.preemptions,
                "prefix_hit_rate": ratio(self.cached_tokens, self.prompt_tokens),
                "unfinished": len(e2e_age),
                "oldest_wait": ttft_age[-1] if ttft_age else 0.0,
            }
        )
        for name, dist in (("ttft", ttft), ("e2e", e2e)):
            out[f"{name}_mean"], out[f"{name}_mean_censored"] = dist.mean()
            out[f"{name}_max"], out[f"{name}_max_censored"] = dist.max()
        # completed-only figures, for comparison (they improve as an overloaded panel strands requests)
        for name, dist, qs in (
            ("ttft", self.ttft, (50, 90, 99)),
            ("tpot", self.tpot, (50, 99)),
            ("e2e", self.e2e, (50, 90)),
        ):
            for q in qs:
                out[f"{name}_p{q}_completed"] = dist.p(q / 100)
        out["throughput_tok_s_completed"] = ratio(self.output_tokens, elapsed)
        out.update(
            {
                "itl_p50": weighted_percentile(s.itl_us, 0.5) / 1e6,
                "itl_p99": weighted_percentile(s.itl_us, 0.99) / 1e6,
                "itl_max": (max(s.itl_us) if s.itl_us else 0) / 1e6,  # the longest step a decoder waited
                "kv_reserved_unused": ratio(s.kv_reserved, s.kv_total),
                "kv_internal_frag": ratio(s.kv_internal, s.kv_total),
                "kv_external_frag": ratio(s.kv_external, s.kv_total),
                "swaps": s.swaps,
                "swapped_tokens": s.swapped_tokens,
                "dropped_tokens": s.dropped_tokens,
                "victim_newest_frac": ratio(s.victims_newest, s.preemptions),
                "rejected": s.rejected,
                # DistServe's goodput: arrivals that completed within every SLO, per second; the
                # share counts every arrival, so a request still in flight or rejected is a miss
                "goodput_rps": ratio(self.good, elapsed),
                "slo_attainment": ratio(self.good, self.completed + len(e2e_age) + s.rejected),
            }
        )
        return out


def _merge(a: list[float], b: list[float]) -> list[float]:
    """Two sorted lists as one sorted list (``a`` itself when ``b`` is empty)."""
    return list(heapq.merge(a, b)) if b else a


class Censored:
    """Exact samples plus censored ones (lower bounds: the ages of requests still waiting), both
    sorted. Each statistic comes with a flag: 1 when a censored sample takes part in it, so the
    figure is a lower bound (raising a censored value could raise it), else 0."""

    __slots__ = ("exact", "cens", "v")

    def __init__(self, exact: list[float], cens: list[float]) -> None:
        self.exact = exact
        self.cens = cens
        self.v = _merge(exact, cens)

    def p(self, q: float) -> tuple[float, int]:
        return censored_percentile(self.exact, self.cens, q)

    def mean(self) -> tuple[float, int]:
        v = self.v
        return (fsum(v) / len(v) if v else 0.0), int(bool(self.cens))

    def max(self) -> tuple[float, int]:
        v = self.v
        if not v:
            return 0.0, 0
        return v[-1], int(bool(self.cens) and self.cens[-1] >= (self.exact[-1] if self.exact else 0.0))


def summarize(
    records: list[Record],
    elapsed: float,
    stats: list[EngineStats] | EngineStats | None = None,
    pending=(),
    now: float | None = None,
) -> dict:
    """The DESIGN engine metrics (plus extras) over ``records`` from one or more replicas.
    ``elapsed`` is the wall of virtual time the throughput divides by; ``stats`` the replicas'
    ``EngineStats`` (summed) for batch size, KV utilization and preemptions; ``pending`` the
    requests still in flight at ``now`` (default: ``elapsed``), e.g. ``in_flight(engines)``."""
    acc = Accumulator()
    for r in records:
        acc.add(r)
    total = EngineStats()
    if isinstance(stats, EngineStats):
        stats = [stats]
    for s in stats or []:
        total = total.merge(s)
    return acc.result(elapsed, total, pending, now)


def in_flight(engines) -> list[tuple]:
    """``(arrival, first_token, generated)`` of every request the engines (or deployments) hold
    that has not completed: the pending requests ``Accumulator.result`` counts."""
    out: list[tuple] = []
    for e in engines:
        out += e.in_flight()
    return out


def last_completion(records: list[Record], default: float) -> float:
    """When the last of ``records`` finished (``default`` if none did): a drained run's window."""
    last = default if not records else 0.0
    for r in records:
        if r.finish > last:
            last = r.finish
    return last
