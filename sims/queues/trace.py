"""``contention trace queues``: replay a file of ``ARRIVAL SERVICE [CLASS]`` lines through one
discipline with C servers, until every request has been served or dropped."""

from __future__ import annotations

from pathlib import Path

from sims.core.metrics import percentile
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, resolve_params
from sims.core.trace import InputError, TraceArg, TraceError, TraceSpec, lines
from sims.queues.panel import QueuePanel


def _finite(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if x - x == 0 else None  # rejects inf and nan


def read(path: Path) -> list[dict]:
    """The requests of a trace file as stream events; TraceError names the file and line."""
    events = []
    last = 0.0
    for n, text in lines(path):
        fields = text.split()
        if len(fields) not in (2, 3):
            raise TraceError(f"{path}:{n}: expected ARRIVAL SERVICE [CLASS], got {text!r}")
        t, size = _finite(fields[0]), _finite(fields[1])
        if t is None or t < 0:
            raise TraceError(f"{path}:{n}: ARRIVAL must be a finite number of seconds >= 0, got {fields[0]!r}")
        if t < last:
            raise TraceError(f"{path}:{n}: ARRIVAL {fields[0]} is before the previous one ({last!r})")
        if size is None or size < 0:
            raise TraceError(f"{path}:{n}: SERVICE must be a finite number of seconds >= 0, got {fields[1]!r}")
        ev = {"t": t, "kind": "request", "id": len(events), "size": size}
        if len(fields) == 3:
            if not fields[2].isdigit():
                raise TraceError(f"{path}:{n}: CLASS must be an integer >= 0 (0 highest), got {fields[2]!r}")
            ev["cls"] = int(fields[2])
        events.append(ev)
        last = t
    return events


class _Recorder(QueuePanel):
    """A queue panel that notes each request's wait by its index. It runs the plain loop, whose
    steps are methods, so the overrides see every start and every drop."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        n = len(self.ctx.events)
        self.trace_waits = [0.0] * n
        self.trace_dropped: list[int] = []
        self.feed = self.feed_plain

    def _start(self, g, job, t: float) -> None:
        if job.start < 0:
            self.trace_waits[job.id] = t - job.arrival
        super()._start(g, job, t)

    def _drop(self, job, t: float) -> None:
        if job.start < 0:
            self.trace_waits[job.id] = t - job.arrival
        self.trace_dropped.append(job.id)
        super()._drop(job, t)


def replay(policy: str, servers: int, events: list[dict]) -> dict:
    """Run ``events`` through ``policy`` with ``servers`` servers until the system is empty."""
    cls = get_policy("queues", policy)
    if isinstance(servers, bool) or not isinstance(servers, int) or servers < 1:
        raise InputError(f"--servers must be a positive integer, got {servers!r}")
    specs = dict(load_topic("queues").panel_params) | dict(cls.PARAMS)
    params = resolve_params(specs, {"servers": servers}, "trace")
    own = {k: params[k] for k in cls.PARAMS}
    panel = _Recorder(policy, params, PanelContext(0, 0.0, events, policy), lambda: cls(**own))
    end = events[-1]["t"] if events else 0.0
    panel.feed(events, 0, len(events), end)
    while (nt := panel.next_time()) is not None:
        panel.advance(nt)
    panel.check_invariants()
    sojourns = panel.sojourns.values()
    return {
        "policy": policy,
        "servers": servers,
        "waits": panel.trace_waits,
        "sojourn_p50": percentile(sojourns, 0.5, is_sorted=True),
        "sojourn_p99": percentile(sojourns, 0.99, is_sorted=True),
        "dropped": sorted(panel.trace_dropped),
    }


def _run(policy: str, args: dict, path: Path) -> dict:
    get_policy("queues", policy)  # an unknown policy is named before the file is read
    return replay(policy, args["servers"], read(path))


TRACE = TraceSpec(
    help="replay ARRIVAL SERVICE [CLASS] lines (seconds; class 0 highest) through one discipline",
    args=(TraceArg("--servers", int, "number of servers sharing the queue"),),
    run=_run,
)
