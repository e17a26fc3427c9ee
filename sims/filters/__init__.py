"""Approximate membership filters: Bloom, counting Bloom and cuckoo against an exact set.

Each panel runs one filter (``policies.py``) over the shared stream of inserts, lookups and
deletes (``workload.py``) and counts what it got wrong: "maybe" for a key never inserted (a false
positive), "no" for a key in the set (a false negative), against its size in bits per item and the
formula's false-positive rate (``panel.py``).
"""

from __future__ import annotations

from sims.core.limits import InputError
from sims.core.panel import Panel
from sims.core.registry import Topic, get_policy, register_topic
from sims.filters import policies, workload
from sims.filters.panel import FilterPanel

__all__ = ["FilterPanel", "make_panel", "policies", "workload"]


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    cls = get_policy("filters", policy)
    own = {k: params[k] for k in cls.PARAMS}
    try:
        return FilterPanel(name, params, ctx, cls(**own))
    except InputError as exc:  # a value no single Param can check (the cuckoo's power of two)
        raise InputError(f"panels.{name}.{exc}") from None


register_topic(Topic("filters", make_panel))
