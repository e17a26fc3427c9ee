"""The prefix-aware routers: SGLang's cache-aware router (an approximate radix tree per worker),
the Gateway API Inference Extension's estimated prefix scorer (llm-d "estimated"), and llm-d's
precise prefix-cache scheduler fed by KV events. The load-only routers are in ``routers.py``."""

from __future__ import annotations

from sims.cluster.kvindex import EventBus, KVIndex, LRUIndex, prompt_hashes
from sims.cluster.radix import RadixTree
from sims.cluster.routers import _WEIGHT, Router, load_scores, pick_max
from sims.core.registry import Param, register_policy


def _weights(p: dict) -> str:
    """The scorer weights a router was given, as a reader compares them: "prefix 3 : kv 2 : queue 2"."""
    return f"prefix {p['prefix_weight']:g} : kv {p['kv_weight']:g} : queue {p['queue_weight']:g}"


@register_policy("cluster", "sglang_cache_aware")
class SGLangCacheAware(Router):
    """SGLang's cache-aware router. Per worker, an approximate radix tree of what was routed
    there. Imbalanced (max - min > abs and max > rel * min, on in-flight requests) -> the
    shortest queue; else the best prefix match if its match rate > cache_threshold, else the
    worker with the smallest tree. ``router_replicas`` > 1 splits that state over several
    router processes (each request reaches one of them at random)."""

    PARAMS = {
        "cache_threshold": Param(float, 0.3, "match rate above which the best match wins", min=0.0, max=1.0),
        "balance_abs_threshold": Param(int, 64, "imbalance needs max - min in-flight above this", min=0, max=10**9),
        "balance_rel_threshold": Param(float, 1.5, "... and max above this multiple of min", min=0.0, max=1000.0),
        "max_tree_tokens": Param(
            int, 1 << 24, "tokens each worker's tree may hold before LRU eviction", min=1, max=1 << 30
        ),
        "router_replicas": Param(int, 1, "router processes, each learning only from what it routed", min=1, max=256),
    }

    def __init__(self, n, params, rng):
        super().__init__(n, params, rng)
        if params["router_replicas"] < 1:
            raise ValueError(f"router_replicas must be >= 1, got {params['router_replicas']!r}")
        self.views = [
            [RadixTree(params["max_tree_tokens"]) for _ in range(n)] for _ in range(params["router_replicas"])
        ]
        self.trees = self.views[0]
        self.decisions = {"balance": 0, "match": 0, "smallest_tree": 0}

    def route(self, t, req, hashes, loads):
        p = self.params
        if len(self.views) > 1:
            self.trees = self.views[self.rng.randrange(len(self.views))]
        inflight = [x.in_flight for x in loads]
        hi, lo = max(inflight), min(inflight)
        if hi - lo > p["balance_abs_threshold"] and hi > p["balance_rel_threshold"] * lo:
            pick = self._pick_min(inflight)
            self.decisions["balance"] += 1
        else:
            segments = req["segments"]
            matches = [tree.match(segments) for tree in self.trees]
            best = max(matches)
            prompt = req["prompt_len"]
            if prompt and best / prompt > p["cache_threshold"]:
                pick = self._pick_min([(-m, f) for m, f in zip(matches, inflight, strict=True)])
                self.decisions["match"] += 1
            else:
                pick = self._pick_min([tree.size for tree in self.trees])
                self.decisions["smallest_tree"] += 1
        self.trees[pick].insert(req["segments"])
        return pick

    def explain(self, d, other=None) -> str:
        p, branch = self.params, d.facts["branch"]
        if branch == "balance":
            why = f"in-flight requests were imbalanced (max - min > {p['balance_abs_threshold']} and max > {p['balance_rel_threshold']:g} x min), so the shortest queue"
        elif branch == "match":
            why = f"its radix tree of past routes matched the prompt best, above the {p['cache_threshold']:g} match-rate threshold"
        else:
            why = f"no tree matched more than {p['cache_threshold']:g} of the prompt, so the worker with the smallest tree"
        return self.say(d, why)

    def state(self):
        tokens = [sum(view[i].size for view in self.views) for i in range(self.n)]
        return {"tree_tokens": tokens, "router_replicas": len(self.views), "decisions": dict(self.decisions)}

    def check_invariants(self):
        for view in self.views:
            for tree in view:
                tree.check_invariants()


@register_policy("cluster", "approx_prefix")
class ApproxPrefix(SGLangCacheAware):
    """The earlier name of ``sglang_cache_aware``, kept so old links and presets still work."""


@register_policy("cluster", "estimated_prefix")
class EstimatedPrefix(Router):
    """The Gateway API Inference Extension's approximate prefix-cache scorer, as llm-d's
    "estimated" scheduler ran it: no KV events, only an LRU index of its own routing decisions.
    The prompt is hashed in blocks of ``hash_block_size`` characters, at most
    ``max_prefix_blocks`` of them; a pod's prefix score is its matched blocks over the prompt's
    blocks. Every pod is scored ``prefix + kv + queue`` (weights 1 : 1 : 1, the benchmark's), the
    best wins (max-score picker, ties at random), and the chosen pod's entry in the index is
    refreshed with the prompt's blocks."""

    PARAMS = {
        "prefix_weight": Param(float, 1.0, "prefix-cache scorer weight", min=0.0, max=1000.0),
        "kv_weight": Param(float, 1.0, "kv-cache utilization scorer weight", min=0.0, max=1000.0),
        "queue_weight": Param(float, 1.0, "queue scorer weight", min=0.0, max=1000.0),
        "hash_block_size": Param(int, 64, "prompt characters per hashed block (GIE hashBlockSize)", min=1, max=1 << 20),
        "max_prefix_blocks": Param(
            int, 256, "blocks of the prompt that are matched (maxPrefixBlocksToMatch)", min=1, max=1 << 16
        ),
        "lru_capacity_per_server": Param(int, 31250, "index entries per pod before LRU eviction", min=1, max=1 << 24),
    }

    def __init__(self, n, params, rng):
        super().__init__(n, params, rng)
        for name in ("hash_block_size", "max_prefix_blocks"):
            if params[name] < 1:
                raise ValueError(f"{name} must be >= 1, got {params[name]!r}")
        self.index = LRUIndex(n, params["lru_capacity_per_server"])
        self.decisions = {"affine": 0, "outvoted": 0, "cold": 0}

    def block_tokens(self, req: dict) -> int:
        """Tokens per hashed block: the block's characters at the request's characters per token
        (4 when the request does not say)."""
        tokens = req.get("prompt_len", 0)
        chars = req.get("prompt_chars") or 4 * tokens
        if not tokens or not chars:
            return max(1, self.params["hash_block_size"] // 4)
        return max(1, (self.params["hash_block_size"] * tokens + chars // 2) // chars)

    def route(self, t, req, hashes, loads):
        p = self.params
        hashes = prompt_hashes(req["segments"], self.block_tokens(req))[: p["max_prefix_blocks"]]
        cands = list(range(self.n))
        scores = load_scores(loads, cands, p["kv_weight"], p["queue_weight"])
        counts = self.index.match_counts(hashes) if hashes else [0] * self.n
        if hashes:
            pw, total = p["prefix_weight"], len(hashes)
            scores = [s + pw * (c / total) for s, c in zip(scores, counts, strict=True)]
        pick = pick_max(self.rng, cands, scores)
        best = max(counts)
        self.decisions["cold" if not best else "affine" if counts[pick] == best else "outvoted"] += 1
        self.index.add(pick, hashes)
        return pick

    def explain(self, d, other=None) -> str:
        w = _weights(self.params)
        why = {
            "affine": f"the best prefix + kv + queue score ({w}), and its LRU index of past routes matched the most of the prompt",
            "outvoted": f"the best prefix + kv + queue score ({w}): another pod matched more of the prompt but was more loaded",
            "cold": "no pod's index of past routes matched the prompt, so the kv and queue scorers alone chose",
        }[d.facts["branch"]]
        return self.say(d, why)

    def state(self):
        return {
            "indexed_blocks": [len(lru) for lru in self.index.lrus],
            "index_evicted": self.index.evicted,
            "decisions": dict(self.decisions),
        }

    def check_invariants(self):
        self.index.check_invariants()


@register_policy("cluster", "precise_prefix")
class PrecisePrefix(Router):
    """llm-d's precise prefix-cache scheduling. The index (block hash -> pods) follows the
    replicas' KV events, ``event_delay`` late. A pod's prefix score is its longest run of
    cached blocks from the prompt's start, over the prompt's blocks. Filter to pods whose score
    reaches ``affinity_threshold``; if every one of them has ``max_waiting`` or more queued, give
    up stickiness: consider the pods that are not overloaded. Then the weighted scorers (prefix
    3, kv 2, queue 2) pick the best: among pods of similar prefix score, the least loaded."""

    PARAMS = {
        "prefix_weight": Param(float, 3.0, "prefix-cache scorer weight", min=0.0, max=1000.0),
        "kv_weight": _WEIGHT,
        "queue_weight": _WEIGHT,
        "affinity_threshold": Param(
            float, 0.5, "prefix score a pod needs to pass the affinity filter", min=0.0, max=1.0
        ),
        "max_waiting": Param(int, 64, "queued requests at which an affine pod counts as overloaded", min=0, max=10**9),
        "event_delay": Param(float, 0.01, "seconds a KV event takes to reach the router's index", min=0.0, max=60.0),
    }
    needs_hashes = True
    needs_kv_events = True

    def __init__(self, n, params, rng):
        super().__init__(n, params, rng)
        if not 0.0 <= params["affinity_threshold"] <= 1.0:
            raise ValueError(f"affinity_threshold must be in [0, 1], got {params['affinity_threshold']!r}")
        self.index = KVIndex(n)
        self.bus = EventBus(n, params["event_delay"])
        self.decisions = {"affinity": 0, "spill": 0, "cold": 0}

    def route(self, t, req, hashes, loads):
        p = self.params
        self.bus.deliver(t, self.index)
        n = self.n
        if hashes:
            total = len(hashes)
            frac = [h / total for h in self.prefix_hits(t, hashes)]
        else:
            frac = [0.0] * n
        cands = [i for i in range(n) if frac[i] > 0.0 and frac[i] >= p["affinity_threshold"]]
        if not cands:
            cands = list(range(n))
            self.decisions["cold"] += 1
        elif min(loads[i].waiting for i in cands) >= p["max_waiting"]:
            # every affine pod is overloaded: stickiness gives way to the pods that are not
            cands = [i for i in range(n) if loads[i].waiting < p["max_waiting"]] or list(range(n))
            self.decisions["spill"] += 1
        else:
            self.decisions["affinity"] += 1
        scores = load_scores(loads, cands, p["kv_weight"], p["queue_weight"])
        pw = p["prefix_weight"]
        scores = [s + pw * frac[i] for s, i in zip(scores, cands, strict=True)]
        return pick_max(self.rng, cands, scores)

    def prefix_hits(self, t: float, hashes: list[int]) -> list[int]:
        """Each pod's longest run of the prompt's blocks from the start, as the index sees it."""
        return self.index.prefix_hits(hashes)

    def explain(self, d, other=None) -> str:
        p = self.params
        why = {
            "affinity": f"the KV-event index shows it caching at least {p['affinity_threshold']:g} of the prompt's blocks, and among such pods it scored best ({_weights(p)})",
            "spill": f"every pod caching the prompt had {p['max_waiting']} or more waiting, so stickiness gave way to the best-scored pod that was not overloaded",
            "cold": "no pod caches enough of the prompt (by the KV-event index), so the load scorers chose",
        }[d.facts["branch"]]
        return self.say(d, why)

    def state(self):
        return {
            "indexed_blocks": list(self.index.blocks),
            "events_in_flight": self.bus.in_flight(),
            "decisions": dict(self.decisions),
        }

    def check_invariants(self):
        self.index.check_invariants()
