"""``Allocator``: the KV manager interface every allocator implements (``kv.py``, ``paged.py``).

The KV manager is the only code that touches blocks (vLLM v1's ``KVCacheManager``): the engine
asks it for room with ``allocate_slots`` (a ``KVBlocks`` record of what it gave, or None when it
does not fit), ``grow``/``grow_one``/``decode_grow`` as decodes cross their reservation, ``fork``
and ``release``, and reads the aggregates ``held``, ``reserved_sum``, ``useful_sum`` and
``usage()`` (always ``held / capacity``); it never reads a block pool.
"""

from __future__ import annotations

from typing import NamedTuple

from sims.core.panel import Checkpointed


class KVBlocks(NamedTuple):
    """What one ``allocate_slots`` gave a request (vLLM's ``KVCacheBlocks``): ``blocks``, the
    block ids newly taken from the free queue (paged; empty for a contiguous range), ``slots``,
    the token slots it now holds, and ``hit_tokens``, the leading tokens found in the prefix cache
    (already computed: its prefill starts there)."""

    blocks: tuple[int, ...]
    slots: int
    hit_tokens: int


class Allocator(Checkpointed):
    """The KV manager's interface (checkpoints copy an allocator field by field)."""

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

    def allocate_slots(self, seq, target: int, hashes: list[int] | None, watermark: int) -> KVBlocks | None:
        """Room for ``target + 1`` tokens of ``seq`` (``hashes``: its prompt's block hashes for a
        prefix-cache match), keeping ``watermark`` units free; None when it does not fit."""
        raise NotImplementedError

    def external(self) -> int:
        return 0

    def usage(self) -> float:
        return self.held / self.capacity

    @property
    def num_cached(self) -> int:
        """Blocks holding a cached prefix (paged with caching only)."""
        return 0

    def check_sums(self, holders: list) -> None:
        """The aggregates behind the memory breakdown equal a recount over the holders."""
        assert self.reserved_sum == sum(s.reserved for s in holders), "reserved_sum drifted"
        assert self.useful_sum == sum(min(s.reserved, s.final_len) for s in holders), "useful_sum drifted"
        assert self.usage() == self.held / self.capacity, "usage() is not held / capacity"

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

    def decode_grow(self, crossings: list, cal: dict, step: int) -> bool:
        """One decode-only step's reservation crossings in bulk (the decode-run fast path,
        ``decode.py``): each live ``(epoch, seq)`` of ``crossings``, all due at ``step``, grows by
        one unit and its next crossing goes on ``cal`` (step -> entries), all or nothing. False,
        with nothing done, hands the step to the general one (``Engine._grow``: ``grow_one``,
        preempting when it fails); a contiguous range cannot tell in advance whether every growth
        fits, so here it always does."""
        return False
