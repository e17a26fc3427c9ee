"""Shrink a workload that breaks a property to a locally minimal one that still does.

A found workload is rarely the one to show a reader: a 40-reference string with Bélády's anomaly
hides the 12 references that make it. ``shrink`` deletes what it can while the objective stays
above 0 (delta debugging, Zeller & Hildebrandt, TSE 2002: chunks of halving size, then single
elements), and for the other genomes also moves values down: a reference string's pages are
renamed in order of first use (0, 1, 2, ...), each arrival time moved as early as it can go,
each wait after a step of a fault schedule shortened.
A fault schedule's steps also carry time (a step's wait, a pause's length), so deleting one moves
everything after it earlier; a third move keeps the time: it replaces a run of consecutive steps
(the longest runs first) by one step, of a kind in the run first and then of any other kind,
whose wait is the one nearest the run's total time or a longer one. It too removes a step, so
the search for a smaller schedule still ends.
It repeats until a whole pass changes nothing, so the result is locally minimal: no single
element can be removed, no single value lowered, and no run of steps replaced by one, without
losing the violation; and shrinking it again changes nothing. Every step it keeps satisfies the
objective.

Evaluations are bounded (``budget``); a shrink cut short says so (``minimal`` is False).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sims.adversary.evaluate import Problem


@dataclass
class Shrunk:
    genome: list[int]
    score: float
    evaluations: int
    minimal: bool  # a full pass changed nothing within the budget
    steps: list[int] = field(default_factory=list)  # the length after each kept change


class _Budget(Exception):
    pass


def shrink(
    problem: Problem, genome: list[int], budget: int, on_step: Callable[[list[int], float], None] | None = None
) -> Shrunk:
    """``genome`` (which scores above 0) cut down to a locally minimal one scoring above 0;
    ``on_step(genome, score)`` sees each smaller workload kept on the way."""
    state = {"evals": 0}
    steps: list[int] = []

    def breaks(g: list[int]) -> float | None:
        if state["evals"] >= budget:
            raise _Budget
        state["evals"] += 1
        score = problem.score(g)
        return score if score > 0 else None

    best = list(genome)
    score = problem.score(best)
    if not score > 0:
        raise ValueError("shrink: the workload does not break the property (objective <= 0)")
    kind = problem.spec.genome
    try:
        changed = True
        while changed:
            changed = False
            for move in (_deletions, _LOWER.get(kind), _MERGE.get(kind)):
                if move is None:
                    continue
                for cand in move(best, problem):
                    s = breaks(cand)
                    if s is not None:
                        best, score, changed = cand, s, True
                        steps.append(len(best))
                        if on_step is not None:
                            on_step(best, s)
                        break  # restart the moves from the smaller workload
                if changed:
                    break
        minimal = True
    except _Budget:
        minimal = False
    return Shrunk(best, score, state["evals"], minimal, steps)


def _deletions(g: list[int], problem: Problem):
    """Chunks of halving size removed, largest first, down to single elements."""
    n = len(g)
    size = n // 2
    while size >= 1:
        for start in range(0, n, size):
            cand = g[:start] + g[start + size :]
            if cand:
                yield cand
        size //= 2


def _relabel(g: list[int], problem: Problem):
    """Pages renamed in order of first use (0, 1, 2, ...), when that is not already so."""
    names: dict[int, int] = {}
    cand = [names.setdefault(x, len(names)) for x in g]
    if cand != g:
        yield cand


def _earlier(g: list[int], problem: Problem):
    """One arrival time moved earlier: to its predecessor's time, or halfway there."""
    for i, t in enumerate(g):
        lo = g[i - 1] if i else 1
        for to in (lo, (lo + t) // 2):
            if lo <= to < t:
                yield g[:i] + [to] + g[i + 1 :]


def _sooner(g: list[int], problem: Problem):
    """One step of a fault schedule followed by the next shorter wait (so what follows comes sooner)."""
    gaps = len(problem.layout.gaps)
    for i, gene in enumerate(g):
        step, gap = divmod(gene, gaps)
        if gap > 0:
            yield g[:i] + [step * gaps + gap - 1] + g[i + 1 :]


def _merges(g: list[int], problem: Problem):
    """A run of two or more consecutive steps (the longest first) replaced by one step that takes
    about as long: of each kind in the run (in order), then of every other kind, with the wait
    (a pause: the length) nearest the run's total, then each longer one."""
    layout = problem.layout
    gaps = len(layout.gaps)
    kinds = layout.universe // gaps
    n = len(g)
    for width in range(n, 1, -1):
        for start in range(n - width + 1):
            run = g[start : start + width]
            total = sum(layout.step_time(gene) for gene in run)
            own = list(dict.fromkeys(gene // gaps for gene in run))
            for step in own + [s for s in range(kinds) if s not in own]:
                durations = layout.step_times(step)
                near = min(range(gaps), key=lambda i: (abs(durations[i] - total), -i))
                for gap in range(near, gaps):
                    yield g[:start] + [step * gaps + gap] + g[start + width :]


_LOWER = {"keys": _relabel, "times": _earlier, "schedule": _sooner}
_MERGE = {"schedule": _merges}
