"""``bloom_prefix``: llm-d's precise scheduler with a Bloom filter per pod in place of its exact
index, the LLM twin of the filters topic (docs/filters.md, "The LLM twin").

The filter is the filters topic's own ``Bloom`` (m bits, k positions by double hashing on the
splitmix64 of the block hash), one per pod, fed by the same KV events ``precise_prefix`` reads.
A Bloom filter cannot delete, so a ``removed`` event leaves the block in the filter: the router
keeps claiming it (a stale positive) until the pod's filter is rebuilt, every ``rebuild_every``
seconds (0: never; at the first route due), from what the pod then holds. Routing reads only the filters; the exact index
the same events keep (``truth``) is what a pod would rebuild its filter from, and what the
metrics count the filter's errors against.
"""

from __future__ import annotations

from sims.cluster.kvindex import KVIndex
from sims.cluster.prefix_routers import PrecisePrefix, _weights
from sims.core.metrics import ratio
from sims.core.params import State
from sims.core.registry import Param, register_policy
from sims.filters.policies import Bloom


class BloomIndex:
    """Per pod a Bloom filter of the block hashes its KV events stored since its last rebuild.
    Invariant: every block ``truth`` holds for pod i is in ``members[i]`` (inserted in filter i),
    so the filter never answers "no" for a block the pod holds; ``members[i] - truth`` are the
    stale blocks, evicted but still in the filter."""

    __slots__ = (
        "n",
        "m",
        "k",
        "truth",
        "filters",
        "members",
        "probed",
        "rebuilds",
        "trials",
        "fps",
        "fp_expected",
        "fp_fill",
        "_formula",
    )

    def __init__(self, n: int, m: int, k: int) -> None:
        if m < 1 or k < 1:
            raise ValueError(f"a Bloom filter needs bits >= 1 and hashes >= 1, got {m!r} and {k!r}")
        self.n, self.m, self.k = n, m, k
        self.truth = KVIndex(n)  # what each pod holds, by its events: never read to route
        self.filters = [Bloom(m, k, "double") for _ in range(n)]
        self.members: list[set[int]] = [set() for _ in range(n)]  # inserted since the last rebuild: the formula's n
        self.probed: list[set[int]] = [set() for _ in range(n)]  # non-members looked up since the last rebuild
        self.rebuilds = 0
        self.trials = 0  # first lookups of a block never inserted in that pod's filter
        self.fps = 0  # ... answered "maybe": false positives
        self.fp_expected = 0.0  # the formula's rate at each such lookup, summed
        self.fp_fill = 0.0  # (set bits / m)^k at each such lookup, summed: the rate for the fill itself
        self._formula = [(-1, 0.0, 0.0)] * n  # per pod: (n, its formula), recomputed when n changes

    def stored(self, pod: int, hashes: list[int]) -> None:
        self.truth.stored(pod, hashes)
        f, mem = self.filters[pod], self.members[pod]
        for h in hashes:
            if h not in mem:
                mem.add(h)
                f.insert(h, None)

    def removed(self, pod: int, hashes: list[int]) -> None:
        self.truth.removed(pod, hashes)  # the filter keeps them: a Bloom filter cannot delete

    def rebuild(self) -> None:
        """Each pod's filter built afresh from the blocks it holds (bits are OR-ed: order-free)."""
        held: list[set[int]] = [set() for _ in range(self.n)]
        for h, mask in self.truth.pods.items():
            i = 0
            while mask:
                if mask & 1:
                    held[i].add(h)
                mask >>= 1
                i += 1
        for i, keys in enumerate(held):
            f = self.filters[i] = Bloom(self.m, self.k, "double")
            for h in keys:
                f.insert(h, None)
            self.members[i] = keys
            self.probed[i] = set()
            self._formula[i] = (-1, 0.0, 0.0)
        self.rebuilds += 1

    def claimed_runs(self, hashes: list[int]) -> list[int]:
        """For each pod, how many of ``hashes`` its filter claims as one run from the first. The
        first lookup of a block never inserted there is a trial of the filter's false-positive
        rate; a repeat is not (its answer is the same, and a block answered "maybe" tends to be
        routed there and inserted, so repeats would over-count the "no"s)."""
        runs = []
        for i, f in enumerate(self.filters):
            mem, probed = self.members[i], self.probed[i]
            run = 0
            for h in hashes:
                maybe = f.lookup(h)
                if h not in mem and h not in probed:
                    probed.add(h)
                    self._trial(i, maybe)
                if not maybe:
                    break
                run += 1
            runs.append(run)
        return runs

    def _trial(self, pod: int, maybe: bool) -> None:
        f, n = self.filters[pod], len(self.members[pod])
        seen, rate, fill = self._formula[pod]
        if seen != n:
            rate = f.formula(n)
            fill = 1.0
            for _ in range(self.k):
                fill *= f.load()  # a product, not **: the same bits in Pyodide
            self._formula[pod] = (n, rate, fill)
        self.trials += 1
        self.fps += maybe
        self.fp_expected += rate
        self.fp_fill += fill

    def check_invariants(self) -> None:
        self.truth.check_invariants()
        for h, mask in self.truth.pods.items():
            for i in range(self.n):
                if mask >> i & 1:
                    assert h in self.members[i], f"pod {i} holds {h} but its filter never got it"
        for f in self.filters:
            f.check_invariants()


@register_policy("cluster", "bloom_prefix")
class BloomPrefix(PrecisePrefix):
    """``precise_prefix`` scoring a Bloom filter per pod instead of its exact index: the same KV
    events, the same filter-then-balance rule and scorers, so the only difference is the filter's
    errors. A false positive, or a block evicted since the last rebuild, makes a pod claim blocks
    it does not hold (Fan et al.'s Summary Cache, SIGCOMM'98, shared Bloom filters between web
    proxies the same way)."""

    PARAMS = {
        **PrecisePrefix.PARAMS,
        "bits": Param(
            int,
            1 << 17,
            "m: bits of each pod's Bloom filter",
            min=8,
            max=1 << 24,
            state=State(bytes=1, times=("replicas",)),
        ),
        "hashes": Param(int, 7, "k: positions per block hash (double hashing)", min=1, max=32),
        "rebuild_every": Param(
            float,
            10.0,
            "seconds between rebuilds of each pod's filter from what it holds (0: never)",
            min=0.0,
            max=3600.0,
        ),
    }

    def __init__(self, n, params, rng):
        super().__init__(n, params, rng)
        every = params["rebuild_every"]
        if 0.0 < every < 1.0:
            raise ValueError(f"rebuild_every must be 0 (never) or at least 1 s, got {every!r}")
        self.index = BloomIndex(n, params["bits"], params["hashes"])
        self.next_rebuild = every if every else float("inf")
        self.claimed = 0  # prefix blocks the chosen pods' filters claimed
        self.false_blocks = 0  # ... that the pod did not hold
        self.false_routes = 0  # routes whose chosen pod claimed more than it held
        self._claims: list[int] | None = None  # the last route's claimed runs, per pod

    def prefix_hits(self, t, hashes):
        if t >= self.next_rebuild:
            self.index.rebuild()
            every = self.params["rebuild_every"]
            while self.next_rebuild <= t:
                self.next_rebuild += every
        self._claims = self.index.claimed_runs(hashes)
        return self._claims

    def route(self, t, req, hashes, loads):
        self._claims = None
        pick = super().route(t, req, hashes, loads)
        if self._claims:
            claim = self._claims[pick]
            held, bit, true = self.index.truth.pods, 1 << pick, 0
            while true < claim and held.get(hashes[true], 0) & bit:
                true += 1
            self.claimed += claim
            self.false_blocks += claim - true
            self.false_routes += claim > true
        return pick

    def metrics(self):
        x = self.index
        return {
            **super().metrics(),
            "claimed_prefix_blocks": self.claimed,
            "false_prefix_blocks": self.false_blocks,
            "false_prefix_rate": ratio(self.false_blocks, self.claimed),
            "false_prefix_routes": self.false_routes,
            "bloom_fp_rate": ratio(x.fps, x.trials),
            "bloom_fp_formula": ratio(x.fp_expected, x.trials),
            "bloom_fp_fill": ratio(x.fp_fill, x.trials),
            "bloom_rebuilds": x.rebuilds,
        }

    def explain(self, d, other=None) -> str:
        p = self.params
        why = {
            "affinity": f"its Bloom filter claims at least {p['affinity_threshold']:g} of the prompt's blocks (rightly or not), and among such pods it scored best ({_weights(p)})",
            "spill": f"every pod whose filter claims the prompt had {p['max_waiting']} or more waiting, so stickiness gave way to the best-scored pod that was not overloaded",
            "cold": "no pod's Bloom filter claims enough of the prompt, so the load scorers chose",
        }[d.facts["branch"]]
        return self.say(d, why)

    def state(self):
        x = self.index
        return {
            "indexed_blocks": list(x.truth.blocks),
            "filter_keys": [len(mem) for mem in x.members],
            "filter_fill": [f.load() for f in x.filters],
            "events_in_flight": self.bus.in_flight(),
            "decisions": dict(self.decisions),
        }
