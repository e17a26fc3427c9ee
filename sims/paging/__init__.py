"""Page replacement: FIFO, LRU, CLOCK, LFU, random and Bélády's OPT, and the textbook's second
chance, aging and NRU, over ``frames`` page frames.

Each policy (``policies.py``, ``variants.py``) is registered by name; ``PagingPanel`` runs one over the shared
reference stream and counts faults. Sizes count pages.
"""

from __future__ import annotations

from array import array
from pathlib import Path

from sims.core.panel import Panel, PanelContext
from sims.core.registry import Param, State, Topic, get_policy, register_topic
from sims.core.trace import InputError, TraceArg, TraceSpec, bad_token, lines
from sims.paging import policies as _policies  # noqa: F401  (registers the policies)
from sims.paging import variants as _variants  # noqa: F401  (second chance, aging, NRU)
from sims.paging.panel import PagingPanel
from sims.replace.edit import ReplacementEdits


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    return PagingPanel(name, params, ctx, get_policy("paging", policy))


def read_pages(path: Path) -> array:
    """Page numbers (integers), whitespace-separated, any number per line; '#' starts a comment
    line. Read line by line into 8 bytes a page, so memory stays near the size of the file."""
    pages = array("q")
    for n, text in lines(path):
        try:
            pages.extend(map(int, text.split()))  # the fast path: a line of plain integers
            if text.isascii():
                continue
        except (ValueError, OverflowError):
            pass
        for tok in text.split():  # find the token at fault (or refuse digits int() reads but we do not)
            if not (tok.isascii() and len(tok) <= 20):
                raise bad_token(path, n, "a page number (a 64-bit integer)", tok)
            try:
                array("q", [int(tok)])
            except (ValueError, OverflowError):
                raise bad_token(path, n, "a page number (a 64-bit integer)", tok) from None
    return pages


class _Refs:
    """The trace as a read-only stream of ref events, made one at a time from ``pages``, so a
    5M-reference trace never holds 5M event dicts. Indexing returns one reused dict: the
    replacement policies read an event's fields at once and keep none of them."""

    __slots__ = ("pages", "_ev")

    def __init__(self, pages: array) -> None:
        self.pages = pages
        self._ev = {"t": 0.0, "kind": "ref", "key": 0}

    def __len__(self) -> int:
        return len(self.pages)

    def __getitem__(self, k: int) -> dict:
        ev = self._ev
        ev["t"] = float(k + 1)
        ev["key"] = self.pages[k]
        return ev

    def __iter__(self):
        for k in range(len(self.pages)):
            yield self[k]


def _run_trace(policy: str, args: dict, path: Path) -> dict:
    frames = args["frames"]
    if frames is None or frames < 1:
        raise InputError(f"--frames must be a positive integer, got {frames!r}")
    cls = get_policy("paging", policy)
    events = _Refs(read_pages(path))
    ctx = PanelContext(seed=0, duration=float(len(events)), events=events, panel_name=policy)
    hits = cls(frames, events, ctx.rng("evict")).run(events.pages)  # the batch loop: no event per reference
    return {"policy": policy, "faults": len(events) - hits, "hits": hits}


TRACE = TraceSpec(
    help="replay page numbers (whitespace-separated integers) through one replacement policy",
    args=(TraceArg("--frames", int, "page frames (resident pages)"),),
    run=_run_trace,
)

register_topic(
    Topic(
        "paging",
        make_panel,
        panel_params={
            "frames": Param(
                int, 4, "page frames: how many pages fit in memory", min=1, max=1 << 22, state=State(bytes=16, fill=150)
            )
        },
        trace=TRACE,
        edit=ReplacementEdits(),
    )
)
