"""Replacement policies written once, for every topic that keeps a bounded resident set.

FIFO, LRU, LFU, CLOCK (``classic``) and Bélády's OPT with its one look-ahead (``opt``) serve both
the paging topic (page frames) and the cache topic (objects). As in Hypothesis's
``GenericCache``, the mechanism (``base.Replacement``: the capacity, the hit/miss contract, the
eviction hook, the stream loop) is shared and each policy only decides which resident key goes.
The topics add what is theirs on top: the cache its ``view()`` lists, paging its frame state.
Policies with lists of their own (ARC, LIRS, 2Q, S3-FIFO, SIEVE) live in ``sims.cache``.
"""

from __future__ import annotations

from sims.replace.base import MAX_SCAN, Replacement, references, scan_keys
from sims.replace.classic import FIFO, LFU, LRU, Clock
from sims.replace.opt import OPT, Lookahead

__all__ = ["FIFO", "LFU", "LRU", "MAX_SCAN", "OPT", "Clock", "Lookahead", "Replacement", "references", "scan_keys"]
