"""Collectors: policies over the heap mechanism (``heap.py``). Each one decides where an object is
placed, when and how to collect, and what its write barrier records; the heap keeps the objects,
the roots and the pause log.

``alloc(obj)`` places an object or returns False (no collection); ``collect(full)`` runs a
collection and returns True when it was a complete one (every unreachable object found); the
panel calls ``collect(False)``, then ``collect(True)``, before it fails an allocation.

One module per family: ``tracing`` (mark_sweep, mark_compact), ``copying`` (copying,
generational), ``refcount``, ``incremental``, ``concurrent`` (concurrent_mark_sweep); ``base`` holds ``Collector`` and the shared
marking and sliding. Importing the package registers every collector.
"""

from __future__ import annotations

from sims.gc.collectors.base import Collector
from sims.gc.collectors.concurrent import ConcurrentMarkSweep
from sims.gc.collectors.copying import Copying, Generational
from sims.gc.collectors.incremental import Incremental
from sims.gc.collectors.refcount import RefCount
from sims.gc.collectors.tracing import MarkCompact, MarkSweep

__all__ = [
    "COLLECTORS",
    "Collector",
    "ConcurrentMarkSweep",
    "Copying",
    "Generational",
    "Incremental",
    "MarkCompact",
    "MarkSweep",
    "RefCount",
]

COLLECTORS = (
    "mark_sweep",
    "mark_compact",
    "copying",
    "generational",
    "refcount",
    "incremental",
    "concurrent_mark_sweep",
)
