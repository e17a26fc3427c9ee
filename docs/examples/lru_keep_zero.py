"""LRU that never evicts key 0: `contention run cache-scan --policy-file docs/examples/lru_keep_zero.py`.

Key 0 is the hottest key of the preset's zipf-like hot set; pinning it gives LRU a few more hits.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from sims.cache.base import CachePolicy, seq
from sims.core.registry import register_policy


@register_policy("cache", "lru")
class LRUKeepZero(CachePolicy):
    """LRU, except that key 0 stays once it is in. ``od`` holds the resident keys, least recent first."""

    def __init__(self, size: int, **_) -> None:
        super().__init__(size)
        self.od: OrderedDict[Hashable, None] = OrderedDict()

    def access(self, key: Hashable) -> bool:
        od = self.od
        if key in od:
            od.move_to_end(key)
            return True
        if len(od) >= self.size:
            victim = next(k for k in od if k != 0)  # the least recent key that is not 0
            del od[victim]
            self._evicted(victim)
        od[key] = None
        return False

    def resident(self) -> list[Hashable]:
        return list(self.od)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.od

    def __len__(self) -> int:
        return len(self.od)

    def lists(self) -> list[dict]:
        return [seq("recency", self.od, len(self.od), "LRU first")]
