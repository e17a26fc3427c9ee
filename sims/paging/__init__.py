"""Page replacement: FIFO, LRU, CLOCK, LFU, random and Bélády's OPT over ``frames`` page frames.

Each policy (``policies.py``) is registered by name; ``PagingPanel`` runs one over the shared
reference stream and counts faults. Sizes count pages.
"""

from __future__ import annotations

from pathlib import Path

from sims.core.panel import Panel, PanelContext
from sims.core.registry import Param, Topic, get_policy, register_topic
from sims.core.trace import TraceArg, TraceError, TraceSpec, lines
from sims.paging import policies as _policies  # noqa: F401  (registers the policies)
from sims.paging.panel import PagingPanel


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    return PagingPanel(name, params, ctx, get_policy("paging", policy))


def read_pages(path: Path) -> list[int]:
    """Page numbers (integers), whitespace-separated, any number per line; '#' starts a comment line."""
    pages = []
    for n, text in lines(path):
        for tok in text.split():
            try:
                pages.append(int(tok))
            except ValueError:
                raise TraceError(f"{path}:{n}: expected a page number (integer), got {tok!r}") from None
    return pages


def _run_trace(policy: str, args: dict, path: Path) -> dict:
    frames = args["frames"]
    if frames is None or frames < 1:
        raise ValueError(f"--frames must be a positive integer, got {frames!r}")
    cls = get_policy("paging", policy)
    events = [{"t": float(i), "kind": "ref", "key": p} for i, p in enumerate(read_pages(path), 1)]
    ctx = PanelContext(seed=0, duration=float(len(events)), events=events, panel_name=policy)
    panel = PagingPanel(policy, {"frames": frames}, ctx, cls)
    panel.feed(events, 0, len(events), float(len(events)))
    return {"policy": policy, "faults": panel.refs - panel.hits, "hits": panel.hits}


TRACE = TraceSpec(
    help="replay page numbers (whitespace-separated integers) through one replacement policy",
    args=(TraceArg("--frames", int, "page frames (resident pages)"),),
    run=_run_trace,
)

register_topic(
    Topic(
        "paging",
        make_panel,
        panel_params={"frames": Param(int, 4, "page frames: how many pages fit in memory")},
        trace=TRACE,
    )
)
