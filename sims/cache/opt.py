"""Bélády's OPT for the cache topic: ``sims.replace.OPT`` (shared with paging) and its view."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from sims import replace
from sims.cache.base import CachePolicy, seq
from sims.core.registry import register_policy
from sims.replace.opt import Lookahead


@register_policy("cache", "opt")
class OPT(replace.OPT, CachePolicy):
    __doc__ = replace.OPT.__doc__

    def __init__(self, size: int, ahead: Lookahead | Iterable[Hashable] = (), **_: Any) -> None:
        super().__init__(size, ahead)

    def lists(self) -> list[dict]:
        ranked = sorted(self.next_use, key=self.next_use.__getitem__)  # view() only
        now, never = self.pos, self.ahead.never

        def distance(k: Hashable) -> int | None:  # references until the next use; None = never
            v = self.next_use[k]
            return v - now if v < never else None

        return [seq("by next use", ranked, len(ranked), "soonest first", marks=distance)]
