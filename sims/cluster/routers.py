"""Routers: each a small policy that picks the replica for one request.

A router sees the request (its ``segments`` and ``prompt_len``), the request's block hashes when
it asks for them (``needs_hashes``), and one ``PodLoad`` per replica: the load signals a real
gateway scrapes. Routers that learn from KV events (``needs_kv_events``) get them from the panel's
event bus. Ties are broken by the router's own generator, never by position alone, so no replica
is favoured when the cluster is idle. The prefix-aware routers are in ``prefix_routers.py``.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from random import Random

from sims.core.registry import Param, State, register_policy
from sims.core.rng import stable_hash64


@dataclass(slots=True)
class PodLoad:
    """A replica's load signals at routing time."""

    waiting: int = 0  # requests queued, not yet scheduled
    running: int = 0  # requests in the running batch
    outstanding_tokens: int = 0  # prefill + decode tokens still to compute for its requests
    kv_usage: float = 0.0  # fraction of KV blocks held by running requests, 0..1

    @property
    def in_flight(self) -> int:
        return self.waiting + self.running


class Router:
    """Base: ``route`` returns a replica index in [0, n)."""

    PARAMS: dict[str, Param] = {}
    needs_hashes = False  # route() wants the prompt's block hashes
    needs_kv_events = False  # the panel should feed the replicas' KV events to ``bus``

    def __init__(self, n: int, params: dict, rng: Random) -> None:
        if n < 1:
            raise ValueError(f"a cluster needs at least one replica, got {n!r}")
        self.n = n
        self.params = params
        self.rng = rng
        self.decisions: dict[str, int] = {}  # how often each branch of the rule decided

    def route(self, t: float, req: dict, hashes: list[int], loads: list[PodLoad]) -> int:
        raise NotImplementedError

    def _pick_min(self, keys: list) -> int:
        """Index of the smallest key; ties broken at random."""
        best = min(keys)
        ties = [i for i, k in enumerate(keys) if k == best]
        return ties[0] if len(ties) == 1 else ties[self.rng.randrange(len(ties))]

    def state(self) -> dict:
        """What the view shows about the router's own state."""
        return {}

    def metrics(self) -> dict[str, float]:
        """Counts of the router's own decisions, added to the panel's metrics."""
        return {f"{k}_routes": v for k, v in self.decisions.items()}

    def check_invariants(self) -> None:
        pass

    def explain(self, d, other=None) -> str:
        """One sentence on a route (``d.facts``: the loads it saw and the branch of its rule)."""
        raise NotImplementedError(f"{type(self).__name__} does not explain its routes")

    def say(self, d, why: str) -> str:
        return f"{self.policy_name} sent {d.subject} to {d.target}: {why}"

    @staticmethod
    def tokens(d) -> str:
        loads = d.facts["loads"]
        return f"{loads[d.facts['pick']].outstanding_tokens} outstanding tokens; all: {[p.outstanding_tokens for p in loads]}"


@register_policy("cluster", "random")
class RandomRouter(Router):
    def route(self, t, req, hashes, loads):
        return self.rng.randrange(self.n)

    def explain(self, d, other=None) -> str:
        return self.say(d, f"drawn uniformly from the {self.n} pods, whatever their load or cache")


@register_policy("cluster", "round_robin")
class RoundRobin(Router):
    def __init__(self, n, params, rng):
        super().__init__(n, params, rng)
        self.next = 0

    def route(self, t, req, hashes, loads):
        i = self.next
        self.next = (i + 1) % self.n
        return i

    def explain(self, d, other=None) -> str:
        return self.say(d, f"the next of the {self.n} pods in turn, whatever its load or cache")


@register_policy("cluster", "least_loaded")
class LeastLoaded(Router):
    """The fewest outstanding tokens (prefill still to do plus decode still to come)."""

    def route(self, t, req, hashes, loads):
        return self._pick_min([p.outstanding_tokens for p in loads])

    def explain(self, d, other=None) -> str:
        return self.say(d, f"it had the fewest outstanding tokens ({self.tokens(d)})")


@register_policy("cluster", "p2c")
class PowerOfTwo(Router):
    """Two distinct replicas at random; the one with fewer outstanding tokens."""

    def route(self, t, req, hashes, loads):
        if self.n == 1:
            return 0
        a = self.rng.randrange(self.n)
        b = self.rng.randrange(self.n - 1)
        b += b >= a
        return b if loads[b].outstanding_tokens < loads[a].outstanding_tokens else a

    def explain(self, d, other=None) -> str:
        return self.say(d, f"of two pods drawn at random it had fewer outstanding tokens ({self.tokens(d)})")


_WEIGHT = Param(float, 2.0, "scorer weight", min=0.0, max=1000.0)


def load_scores(loads: list[PodLoad], cands: list[int], kv_w: float, queue_w: float) -> list[float]:
    """llm-d's load scorers over ``cands``: kv-cache utilization (1 - usage) and queue size
    (the shortest waiting queue scores 1, the longest 0), weighted."""
    qs = [loads[i].waiting for i in cands]
    lo, hi = min(qs), max(qs)
    span = hi - lo
    return [
        kv_w * (1.0 - loads[i].kv_usage) + queue_w * ((hi - q) / span if span else 1.0)
        for i, q in zip(cands, qs, strict=True)
    ]


def pick_max(rng: Random, cands: list[int], scores: list[float]) -> int:
    """llm-d's max-score picker: the best score, ties at random."""
    best = max(scores)
    ties = [c for c, s in zip(cands, scores, strict=True) if s == best]
    return ties[0] if len(ties) == 1 else ties[rng.randrange(len(ties))]


@register_policy("cluster", "load_only")
class LoadOnly(Router):
    """llm-d's scheduler with the prefix scorer off: queue and KV-utilization scorers only."""

    PARAMS = {"kv_weight": _WEIGHT, "queue_weight": _WEIGHT}

    def route(self, t, req, hashes, loads):
        cands = list(range(self.n))
        scores = load_scores(loads, cands, self.params["kv_weight"], self.params["queue_weight"])
        return pick_max(self.rng, cands, scores)

    def explain(self, d, other=None) -> str:
        p = d.facts["loads"][d.facts["pick"]]
        return self.say(
            d,
            f"the best load score, free KV cache and a short queue ({p.waiting} waiting, KV {p.kv_usage:.0%} used); no prefix scorer",
        )


class HashRing:
    """Consistent-hash ring: ``vnodes`` points per replica, sorted by position; a key goes to
    the first point strictly after it (``bisect_right``), wrapping around."""

    __slots__ = ("points", "owners")

    def __init__(self, n: int, vnodes: int) -> None:
        if vnodes < 1:
            raise ValueError(f"vnodes must be >= 1, got {vnodes!r}")
        ring = sorted((stable_hash64(f"replica-{i}#{v}"), i) for i in range(n) for v in range(vnodes))
        self.points = [p for p, _ in ring]
        self.owners = [o for _, o in ring]

    def owner(self, key: int) -> int:
        k = bisect_right(self.points, key & 0xFFFFFFFFFFFFFFFF)
        return self.owners[k % len(self.owners)]


@register_policy("cluster", "prefix_hash")
class PrefixHash(Router):
    """Pure affinity (GKE Inference Gateway style): the hash of the prompt's first K blocks,
    placed on a consistent-hash ring. The same prefix always lands on the same replica."""

    PARAMS = {
        "prefix_blocks": Param(int, 4, "K: blocks of the prompt that pick the replica", min=1, max=4096),
        "vnodes": Param(
            int,
            64,
            "points per replica on the hash ring",
            min=1,
            max=10_000,
            state=State(bytes=130, times=("replicas",)),
        ),
    }
    needs_hashes = True

    def __init__(self, n, params, rng):
        super().__init__(n, params, rng)
        if params["prefix_blocks"] < 1:
            raise ValueError(f"prefix_blocks must be >= 1, got {params['prefix_blocks']!r}")
        self.ring = HashRing(n, params["vnodes"])

    def route(self, t, req, hashes, loads):
        if hashes:
            key = hashes[min(self.params["prefix_blocks"], len(hashes)) - 1]  # chained: covers all before it
        else:
            key = stable_hash64(str(req["segments"][0][0]) if req.get("segments") else str(req.get("id")))
        return self.ring.owner(key)

    def explain(self, d, other=None) -> str:
        k = self.params["prefix_blocks"]
        return self.say(
            d,
            f"the hash of the prompt's first {k} blocks lands on its point of the consistent-hash ring, whatever its load",
        )
