"""Per-request records, per-engine step statistics, and the DESIGN engine metrics over them.

``summarize(records, elapsed, stats)`` works on any number of replicas: pass every replica's
records and ``EngineStats`` (the cluster topic aggregates this way). ``Accumulator`` is the same
computation fed one record at a time, so a panel's live metrics equal ``summarize`` exactly.
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass, field
from math import fsum

from sims.core.metrics import percentile, ratio


@dataclass(frozen=True, slots=True)
class Record:
    """One completed request."""

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
    kv_total: float = 0.0  # integral of KV memory held (+ external fragmentation)
    kv_state: float = 0.0  # integral of slots holding token state
    kv_reserved: float = 0.0  # reserved for this request's future tokens, still empty
    kv_internal: float = 0.0  # reserved and never to be used (over-reservation, block tails)
    kv_external: float = 0.0  # free slots outside the largest hole (contiguous only)
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
    """Values kept sorted: exact percentiles, and an order-independent mean (fsum)."""

    __slots__ = ("v",)

    def __init__(self) -> None:
        self.v: list[float] = []

    def add(self, x: float) -> None:
        insort(self.v, x)

    def p(self, q: float) -> float:
        return percentile(self.v, q, is_sorted=True)

    def mean(self) -> float:
        return fsum(self.v) / len(self.v) if self.v else 0.0

    def max(self) -> float:
        return self.v[-1] if self.v else 0.0


class Accumulator:
    """Latency samples and token counts over completed requests. Every result is independent of
    the order records are added in (exact percentiles, fsum means), so replicas can be merged."""

    def __init__(self) -> None:
        self.ttft = Sorted()
        self.tpot = Sorted()
        self.e2e = Sorted()
        self.completed = 0
        self.output_tokens = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0

    def add(self, r: Record) -> None:
        self.completed += 1
        self.output_tokens += r.output_len
        self.prompt_tokens += r.prompt_len
        self.cached_tokens += r.cached_tokens
        self.ttft.add(r.first_token - r.arrival)
        self.e2e.add(r.finish - r.arrival)
        per_sample = r.output_len // r.samples
        if per_sample > 1:
            self.tpot.add((r.finish - r.first_token) / (per_sample - 1))

    def result(self, elapsed: float, stats: EngineStats) -> dict[str, float]:
        s = stats
        return {
            "completed": self.completed,
            "ttft_p50": self.ttft.p(0.5),
            "ttft_p90": self.ttft.p(0.9),
            "ttft_p99": self.ttft.p(0.99),
            "tpot_p50": self.tpot.p(0.5),
            "tpot_p99": self.tpot.p(0.99),
            "e2e_p50": self.e2e.p(0.5),
            "e2e_p90": self.e2e.p(0.9),
            "throughput_tok_s": ratio(self.output_tokens, elapsed),
            "avg_batch_size": ratio(s.batch_sum, s.steps),
            "kv_utilization": ratio(s.kv_state, s.kv_total),
            "preemptions": s.preemptions,
            "prefix_hit_rate": ratio(self.cached_tokens, self.prompt_tokens),
            # extras (beyond the DESIGN names)
            "ttft_mean": self.ttft.mean(),
            "ttft_max": self.ttft.max(),
            "e2e_mean": self.e2e.mean(),
            "e2e_max": self.e2e.max(),
            "itl_p50": weighted_percentile(s.itl_us, 0.5) / 1e6,
            "itl_p99": weighted_percentile(s.itl_us, 0.99) / 1e6,
            "kv_reserved_unused": ratio(s.kv_reserved, s.kv_total),
            "kv_internal_frag": ratio(s.kv_internal, s.kv_total),
            "kv_external_frag": ratio(s.kv_external, s.kv_total),
            "swaps": s.swaps,
            "swapped_tokens": s.swapped_tokens,
            "dropped_tokens": s.dropped_tokens,
            "victim_newest_frac": ratio(s.victims_newest, s.preemptions),
            "rejected": s.rejected,
        }


def summarize(records: list[Record], elapsed: float, stats: list[EngineStats] | EngineStats | None = None) -> dict:
    """The DESIGN engine metrics (plus extras) over ``records`` from one or more replicas.
    ``elapsed`` is the wall of virtual time the throughput divides by; ``stats`` the replicas'
    ``EngineStats`` (summed) for batch size, KV utilization and preemptions."""
    acc = Accumulator()
    for r in records:
        acc.add(r)
    total = EngineStats()
    if isinstance(stats, EngineStats):
        stats = [stats]
    for s in stats or []:
        total = total.merge(s)
    return acc.result(elapsed, total)
