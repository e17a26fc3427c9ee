"""``contention trace gc``: replay ``alloc ID SIZE``, ``ptr FROM TO``, ``unptr FROM TO``,
``drop ID`` and ``gc`` lines through one collector, then force a full collection and report what
is still alive and what leaked.

A trace is checked against the program it describes before any collector sees it: the mutator
can only name objects it can reach, so ``ptr``/``unptr`` must name reachable objects (``unptr``
one that points to the other), ``drop`` a root, ``alloc`` a new id.
"""

from __future__ import annotations

from pathlib import Path

from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, resolve_params
from sims.core.trace import TraceArg, TraceError, TraceSpec, bad_token, lines, show
from sims.gc.panel import GCPanel

SHAPES = {"alloc": 3, "ptr": 3, "unptr": 3, "drop": 2, "gc": 1}
EXPECTED = "'alloc ID SIZE', 'ptr FROM TO', 'unptr FROM TO', 'drop ID' or 'gc'"


class _Program:
    """The mutator's own view: roots and pointers, every allocation succeeding."""

    def __init__(self) -> None:
        self.refs: dict[str, list[str]] = {}  # every object ever allocated that is reachable or was
        self.roots: dict[str, None] = {}
        self.ever: set[str] = set()
        self._reach: dict | None = None  # reachable ids, None when a drop or unptr may have changed it

    def reachable(self, oid: str) -> bool:
        if oid in self.roots:
            return True
        if self._reach is None:
            seen = dict.fromkeys(self.roots)
            queue = list(seen)
            for x in queue:
                for r in self.refs[x]:
                    if r not in seen:
                        seen[r] = None
                        queue.append(r)
            self._reach = seen
        return oid in self._reach


def read(path: Path) -> list[dict]:
    """The trace as stream events (``{"kind": "gc"}`` for a forced collection); TraceError names
    the file and line of the first line that is malformed or names what the program cannot reach."""
    prog = _Program()
    events: list[dict] = []
    for n, text in lines(path):
        parts = text.split()
        op = parts[0]
        if SHAPES.get(op) != len(parts):
            raise bad_token(path, n, EXPECTED, text)
        if op == "alloc":
            oid = parts[1]
            size = int(parts[2]) if parts[2].isdigit() and len(parts[2]) <= 15 else 0
            if size < 1:
                raise bad_token(path, n, "a positive integer SIZE (bytes)", parts[2])
            if oid in prog.ever:
                raise TraceError(f"{path}:{n}: id {show(oid)} was allocated before")
            prog.ever.add(oid)
            prog.refs[oid] = []
            prog.roots[oid] = None
            if prog._reach is not None:
                prog._reach[oid] = None
            events.append({"t": 0.0, "kind": "alloc", "id": oid, "size": size})
        elif op in ("ptr", "unptr"):
            src, dst = parts[1], parts[2]
            for oid in (src, dst):
                if oid not in prog.ever:
                    raise TraceError(f"{path}:{n}: {op} names {show(oid)}, which was never allocated")
                if not prog.reachable(oid):
                    raise TraceError(f"{path}:{n}: {op} names {show(oid)}, which the program can no longer reach")
            if op == "ptr":
                prog.refs[src].append(dst)
            else:
                if dst not in prog.refs[src]:
                    raise TraceError(f"{path}:{n}: unptr {show(src)} {show(dst)}: {show(src)} does not point to it")
                prog.refs[src].remove(dst)
                prog._reach = None
            events.append({"t": 0.0, "kind": op, "from": src, "to": dst})
        elif op == "drop":
            oid = parts[1]
            if oid not in prog.roots:
                raise TraceError(f"{path}:{n}: drop {show(oid)}: not a root (never allocated, or dropped already)")
            del prog.roots[oid]
            prog._reach = None
            events.append({"t": 0.0, "kind": "drop", "id": oid})
        else:
            events.append({"t": 0.0, "kind": "gc"})
    return events


def _order(ids) -> list:
    """Ids sorted as numbers when they all are, else as text."""
    ids = list(ids)
    if all(i.isdigit() for i in ids):
        return sorted(ids, key=lambda i: (len(i.lstrip("0")), i.lstrip("0"), i))
    return sorted(ids)


def replay(collector: str, heap: int, events: list[dict]) -> dict:
    """Run ``events`` through ``collector`` on a heap of ``heap`` bytes; a final full collection,
    then the survivors (``live``) and the unreachable objects it kept (``leaked``)."""
    cls = get_policy("gc", collector)
    specs = dict(load_topic("gc").panel_params) | dict(cls.PARAMS)
    params = resolve_params(specs, {"heap": heap}, "trace")
    own = {k: params[k] for k in cls.PARAMS}
    panel = GCPanel(collector, params, PanelContext(0, 0.0, events, collector), lambda h: cls(h, **own))
    lo = 0
    for i, ev in enumerate(events + [{"kind": "gc"}]):
        if ev["kind"] == "gc":
            panel.feed(events, lo, i, 0.0)
            panel.collector.collect(True)
            panel.check_invariants()
            lo = i + 1
    h = panel.heap
    reach = h.reachable()
    return {
        "collector": collector,
        "failed": list(panel.failed),
        "live": _order(h.objects),
        "leaked": _order(oid for oid in h.objects if oid not in reach),
        "pauses": list(h.pause_len),
        "peak_heap": h.peak,
    }


def _run(collector: str, args: dict, path: Path) -> dict:
    get_policy("gc", collector)  # an unknown collector is named before the file is read
    return replay(collector, args["heap"], read(path))


TRACE = TraceSpec(
    help="replay alloc/ptr/unptr/drop/gc lines through one collector",
    args=(TraceArg("--heap", int, "heap size in bytes"),),
    run=_run,
    policy_flag="--collector",
)
