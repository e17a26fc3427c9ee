"""``Allocator``: what every KV allocator keeps and answers (``kv.py``, ``paged.py``)."""

from __future__ import annotations


class Allocator:
    kind = ""
    paged = False

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity  # token slots
        self.held = 0
        self.reserved_sum = 0
        self.useful_sum = 0

    def _set_reserved(self, seq, new: int) -> None:
        self.reserved_sum += new - seq.reserved
        self.useful_sum += min(new, seq.final_len) - min(seq.reserved, seq.final_len)
        seq.reserved = new

    def external(self) -> int:
        return 0

    def check_sums(self, holders: list) -> None:
        """The aggregates behind the memory breakdown equal a recount over the holders."""
        assert self.reserved_sum == sum(s.reserved for s in holders), "reserved_sum drifted"
        assert self.useful_sum == sum(min(s.reserved, s.final_len) for s in holders), "useful_sum drifted"

    def register(self, seq, tokens: int) -> list[int]:
        """Cache the full blocks of ``seq`` below ``tokens`` (paged only); returns new hashes."""
        return []

    def prompt_hashes(self, seq, target: int) -> list[int] | None:
        """The block hashes an admission matches against a prefix cache (paged only)."""
        return None

    def cached_prefix(self, segments: list, prompt_len: int) -> int:
        """Prompt tokens a prefix-cache hit would cover now (paged with caching only)."""
        return 0

    def grow_one(self, seq) -> bool:
        """Room for one more token past ``seq.reserved`` (a decode crossing its reservation)."""
        return self.grow(seq, seq.reserved + 1)
