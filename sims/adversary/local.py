"""Seeded local search over candidate workloads, run in chunks so a caller can show progress.

Each evaluation mutates the current candidate (change, insert or delete a reference, swap two,
duplicate a segment elsewhere, repeat a window over another stretch) and keeps the mutant when it
ranks at least as well: by the objective, then, among equals at or below 0, by the sum of the
terms the objective rewards (``Objective.rewarded``). Sideways moves and that tie-break let the walk cross
the plateaus most objectives have: of 3.4 million reference strings of length 12 over 6 pages
(up to renaming), 6 show Bélády's anomaly for 3 and 4 frames, and nearly all the rest score 0 or
less; more faults with 4 frames is the slope towards them. After ``patience`` evaluations without a strict improvement it restarts from a fresh
random candidate; the best candidate ever seen is kept. The first candidate may be given (the
CLI's ``--from PRESET``: the start of a preset's own stream). Every draw comes from one generator
derived from the seed, so a (problem, seed, budget) names one result, in chunks of any size.
"""

from __future__ import annotations

import math
from random import Random

from sims.adversary.evaluate import Problem
from sims.core.limits import InputError
from sims.core.rng import derive

MAX_BUDGET = 10_000_000


class Search:
    def __init__(
        self, problem: Problem, seed: int, budget: int, patience: int | None = None, start: list[int] | None = None
    ) -> None:
        if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
            raise InputError(f"--budget must be an integer in [1, {MAX_BUDGET}], got {budget!r}")
        self.problem = problem
        self.budget = budget
        self.patience = patience or max(200, min(2000, budget // 20))
        self.rng: Random = derive(seed, "adversary")
        self.evals = 0
        self.restarts = 0
        self.current: list[int] | None = None
        self.current_rank = (-math.inf, -math.inf)
        self.stale = 0  # evaluations since the current candidate last improved
        self.best: list[int] = []
        self.best_score = -math.inf
        self.best_rank = (-math.inf, -math.inf)
        self.best_at = 0  # the evaluation that found the best
        self._start = (
            None if start is None else list(start)[: problem.length]
        )  # the first candidate; restarts are random

    @property
    def done(self) -> bool:
        return self.evals >= self.budget

    def run(self, n: int | None = None, until_found: bool = False) -> Search:
        """Spend ``n`` more evaluations (all that are left by default); ``until_found``: stop
        after the first evaluation that scores above 0."""
        stop = self.budget if n is None else min(self.budget, self.evals + n)
        while self.evals < stop and not (until_found and self.found):
            if self.current is None or self.stale >= self.patience:
                cand, self._start = (self._start, None) if self._start else (self._fresh(), None)
                if self.current is not None:
                    self.restarts += 1
                self.current, self.current_rank, self.stale = cand, self._rank(cand), 0
                continue
            cand = self._mutate(self.current)
            rank = self._rank(cand)
            if rank > self.current_rank:
                self.current, self.current_rank, self.stale = cand, rank, 0
            else:
                self.stale += 1
                if rank == self.current_rank:
                    self.current = cand
        return self

    @property
    def found(self) -> bool:
        """Whether the best candidate breaks the property: its objective is above 0."""
        return self.best_score > 0

    def _rank(self, genome: list[int]) -> tuple[float, float]:
        self.evals += 1
        score, rewarded = self.problem.rank(genome)
        if score == -math.inf:
            rank = (-math.inf, -math.inf)  # undefined: never preferred, whatever its terms
        else:  # the tie-break leads to the first score above 0; past it the objective is the slope
            rank = (score, rewarded if score <= 0 else 0.0)
        if rank > self.best_rank:
            self.best, self.best_rank, self.best_at = list(genome), rank, self.evals
            self.best_score = rank[0]
        return rank

    # -- candidates --------------------------------------------------------------------------
    def _gene(self, genome: list[int]) -> int:
        p = self.problem
        if p.spec.genome == "times":
            return self.rng.randint(1, p.universe)
        g = self.rng.randrange(p.universe)
        if p.spec.genome == "set":
            present = set(genome)
            while g in present:
                g = self.rng.randrange(p.universe)
        return g

    def _fresh(self) -> list[int]:
        out: list[int] = []
        for _ in range(self.problem.length):
            out.append(self._gene(out))
        return sorted(out) if self.problem.spec.genome == "times" else out

    def _mutate(self, genome: list[int]) -> list[int]:
        rng, kind = self.rng, self.problem.spec.genome
        g = list(genome)
        n, cap = len(g), self.problem.length
        op = rng.randrange(6 if kind in ("keys", "schedule") else 5)
        if kind == "set" and op in (1, 2, 4):  # a key set keeps its size: --length distinct keys
            op = 0
        if op == 1 and n < cap:  # insert
            g.insert(rng.randrange(n + 1), self._gene(g))
        elif op == 2 and n > 1:  # delete
            del g[rng.randrange(n)]
        elif op == 3 and n > 1:  # swap two (times: move one next to another, bunching them)
            i, j = rng.randrange(n), rng.randrange(n)
            if kind == "times":
                g[i] = min(self.problem.universe, max(1, g[j] + rng.randint(-20, 20)))
            else:
                g[i], g[j] = g[j], g[i]
        elif op == 4 and n > 1:  # duplicate a segment elsewhere
            a = rng.randrange(n)
            b = min(n, a + 1 + rng.randrange(max(1, n // 4)))
            seg = g[a:b]
            if kind == "times":
                shift = rng.randint(-self.problem.universe // 2, self.problem.universe // 2)
                g += [t + shift for t in seg if 1 <= t + shift <= self.problem.universe]
                if len(g) > cap:
                    drop = set(rng.sample(range(len(g)), len(g) - cap))
                    g = [t for i, t in enumerate(g) if i not in drop]
            else:
                at = rng.randrange(n + 1)
                g[at:at] = seg
                del g[cap:]
        elif op == 5 and n > 1:  # repeat a window over another stretch (a loop of references or faults)
            w = 1 + rng.randrange(n // 2)
            a = rng.randrange(n - w + 1)
            at = rng.randrange(n)
            g[at : at + w] = g[a : a + w]
            del g[cap:]
        else:  # change one
            g[rng.randrange(n)] = self._gene(g)
        return sorted(g) if kind == "times" else g

    def state(self) -> dict:
        """Progress as JSON: evaluations done of the budget, the best score and where it was found."""
        return {
            "evaluations": self.evals,
            "budget": self.budget,
            "restarts": self.restarts,
            "best_score": self.best_score if math.isfinite(self.best_score) else None,
            "found": self.found,
            "found_at": self.best_at,
            "length": len(self.best),
            "done": self.done,
        }
