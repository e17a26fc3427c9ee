"""The filters panel: one filter over the stream of inserts, lookups and deletes.

The stream says which lookups ask for a key in the set (``present``): a "maybe" for an absent key
is a false positive, a "no" for a present one a false negative. With every absent lookup the panel
adds the filter's formula at that moment (``formula(n)``, n the keys in the set), so
``fp_expected`` is the rate the formula predicts for exactly the lookups made, and
``formula_gap`` how far the measured rate is from it (relative). ``fp_recent`` is the measured
rate over the last ``RECENT`` absent lookups, which the view and the charts set against the
formula at the present n (``fp_formula``).
"""

from __future__ import annotations

from collections import deque

from sims.core.diverge import Decision, name_key
from sims.core.metrics import ratio
from sims.core.panel import Panel

RECENT = 1000  # absent lookups in fp_recent
SAMPLE = 0.25  # seconds between points of the view's history
HISTORY = 160  # points kept


class FilterPanel(Panel):
    topic = "filters"

    def __init__(self, name: str, params: dict, ctx, policy) -> None:
        super().__init__(name, params, ctx)
        self.policy = policy
        self.rng = ctx.rng("kicks")  # the cuckoo filter's victims
        self.t = 0.0
        self.n = 0  # keys in the set
        self.inserts = self.deletes = self.failures = 0
        self.present_lookups = self.absent_lookups = 0
        self.false_positives = self.false_negatives = 0
        self.expected = 0.0  # sum of formula(n) over the absent lookups
        self.recent: deque[int] = deque(maxlen=RECENT)  # 1 for each absent lookup answered maybe
        self.recent_fp = 0
        self.history: deque[tuple] = deque(maxlen=HISTORY)  # (t, fp_recent, fp_formula)
        self.next_sample = 0.0

    # -- the mechanism --------------------------------------------------------------------------
    def advance(self, until: float) -> None:
        while self.next_sample <= until:
            self.history.append((self.next_sample, self._recent(), self.policy.formula(self.n)))
            self.next_sample += SAMPLE
        self.t = until

    def on_event(self, ev: dict) -> None:
        kind = ev["kind"]
        f = self.policy
        if kind == "lookup":
            maybe = f.lookup(ev["key"])
            if ev["present"]:
                self.present_lookups += 1
                self.false_negatives += not maybe
                return
            self.absent_lookups += 1
            self.expected += f.formula(self.n)
            recent = self.recent
            if len(recent) == RECENT:
                self.recent_fp -= recent[0]
            recent.append(int(maybe))
            self.recent_fp += maybe
            self.false_positives += maybe
        elif kind == "insert":
            self.inserts += 1
            self.n += 1
            if not f.insert(ev["key"], self.rng):
                self.failures += 1
        elif kind == "delete":
            self.deletes += 1
            self.n -= 1
            f.delete(ev["key"], self.rng)

    def _recent(self) -> float:
        return ratio(self.recent_fp, len(self.recent))

    def decide(self, events: list[dict], k: int) -> Decision | None:
        ev = events[k]
        if ev["kind"] != "lookup":
            self.feed(events, k, k + 1, ev["t"])
            return None
        facts = self.policy.probe(ev["key"])
        fp = self.false_positives
        fn = self.false_negatives
        self.feed(events, k, k + 1, ev["t"])
        if ev["present"]:
            maybe = self.false_negatives == fn
        else:
            maybe = self.false_positives > fp
        facts["present"] = ev["present"]
        return Decision("maybe" if maybe else "no", name_key(ev["key"]), facts=facts)

    def explain(self, decision: Decision, other: Decision | None = None) -> str:
        text = self.policy.explain(decision, other)
        present = decision.facts.get("present")
        if decision.action == "maybe" and not present:
            return text + "; the key was never inserted: a false positive"
        if decision.action == "no" and present:
            return text + "; the key is in the set: a false negative"
        return text

    # -- reading --------------------------------------------------------------------------------
    def metrics(self) -> dict[str, float]:
        f = self.policy
        n = self.n
        measured = ratio(self.false_positives, self.absent_lookups)
        expected = ratio(self.expected, self.absent_lookups)
        bits = f.bits(n)
        return {
            "inserts": self.inserts,
            "deletes": self.deletes,
            "lookups": self.present_lookups + self.absent_lookups,
            "items": n,
            "absent_lookups": self.absent_lookups,
            "false_positives": self.false_positives,
            "fp_rate": measured,
            "fp_expected": expected,
            "formula_gap": abs(measured - expected) / expected if expected else 0.0,
            "fp_recent": self._recent(),
            "fp_formula": f.formula(n),
            "present_lookups": self.present_lookups,
            "false_negatives": self.false_negatives,
            "insert_failures": self.failures,
            "bits": bits,
            "bits_per_item": ratio(bits, n),
            "load_factor": f.load(),
            "overflows": f.overflows,
            "kicks": f.kicks,
        }

    def view(self) -> dict:
        f = self.policy
        return {
            "kind": "filter",
            "t": self.t,
            "word": f.word,
            "per_cell": f.per_cell,
            "entries": f.entries,
            "cells": list(f.cells) if f.entries else [],
            "full": list(f.full_cells) if f.overflows or any(f.full_cells) else [],
            "items": self.n,
            "bits": f.bits(self.n),
            "load": f.load(),
            "fp_recent": self._recent(),
            "fp_formula": f.formula(self.n),
            "false_negatives": self.false_negatives,
            "failures": self.failures,
            "overflows": f.overflows,
            "history": [list(h) for h in self.history],
            **f.state(),
        }

    def check_invariants(self) -> None:
        self.policy.check_invariants()
        assert self.n == self.inserts - self.deletes >= 0
        assert self.recent_fp == sum(self.recent)
        assert self.false_positives <= self.absent_lookups and self.false_negatives <= self.present_lookups
        if self.policy.policy_name in ("exact", "counting_bloom") and not self.policy.overflows:
            assert self.false_negatives == 0, "a filter without overflows answered no for a key in the set"
        if self.policy.policy_name == "exact":
            assert self.false_positives == 0
