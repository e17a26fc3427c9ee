"""The topic's own parts of a space-time diagram (``sims.net.diagram``): the rows under the nodes'
lines and the violations with their sentences, read from a recorded ``sims.net.trace.Trace``.

- consensus: one "client" line, each command from its arrival to its commit; violations are the
  safety checker's, in the sentence ``contention search`` prints;
- replication (``trace.kind == "replication"``, ``sims.replication.record``): each read and write
  as an interval from its start to its answer (packed into as few lanes as overlap allows; a
  write labelled with its id, a read with the write it returned), given-up ones dashed; the
  oracle's stale reads in red, each a violation saying which acknowledged write it missed, and
  each acknowledged write that no node holds any more a violation from when it was lost;
- election (``trace.kind == "election"``): a "leaders" line naming who acts as leader when, and
  every split-brain window as a red band across the nodes and a violation.

Everything is cut at ``end``: what happened later is not drawn (an operation answered later is
still pending, a split brain still open).
"""

from __future__ import annotations

from xml.sax.saxutils import escape

CHAR = 6.2  # px: the width of one 11px character
_LANE = 14  # px between client lanes


class Labels:
    """Texts on one line (a row), left to right: ``fits`` says whether [x, x + width) is free."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []

    def fits(self, x: float, width: float) -> bool:
        if any(a < x + width and x < b for a, b in self.spans):
            return False
        self.spans.append((x - 2, x + width + 2))
        return True


def text(x: float, y: float, s: str, cls: str = "", anchor: str = "start") -> str:
    c = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}"{c} text-anchor="{anchor}">{escape(s)}</text>'


# violations ---------------------------------------------------------------------------------
def violations(panel, trace, end: float) -> list[tuple[float, str]]:
    """(time, sentence) of each violation caught by ``end``, in time order."""
    kind = getattr(trace, "kind", "consensus")
    if kind == "replication":
        found = _stale(trace, end) + _lost(trace, end)
    elif kind == "election":
        found = [(a, _split_sentence(panel, a, b, who, end)) for a, b, who in _splits(trace, end)]
    else:
        from sims.adversary.evaluate import violation_sentence

        checked = getattr(getattr(panel, "checker", None), "violations", {})
        found = [(t, violation_sentence(key, t)) for key, t in checked.items() if t <= end]
    return sorted(found)


def _stale(trace, end: float) -> list[tuple[float, str]]:
    writes = [o for o in trace.ops.values() if o[1] == "write" and o[5] is not None]
    out = []
    for op, kind, key, node, start, done, value, stale, _ in sorted(trace.ops.values()):
        if kind != "read" or not stale or done is None or done > end:
            continue
        seen = next((w[5] for w in writes if w[0] == value), None)
        missed = [w for w in writes if w[2] == key and w[5] < start and (seen is None or w[4] > seen)]
        returned = "the initial value" if value is None else f"write {value}"
        why = ""
        if missed:
            w = max(missed, key=lambda w: (w[5], w[0]))
            why = f": write {w[0]} was acknowledged at t = {w[5]:.3f} s, before the read began at {start:.3f} s"
        out.append((done, f"read {op} of key {key} at node {node} returned {returned} at t = {done:.3f} s, stale{why}"))
    return out


def _lost(trace, end: float) -> list[tuple[float, str]]:
    state: dict[int, float | None] = {}
    for t, wid, lost in trace.lost:
        if t > end:
            break
        state[wid] = t if lost else None
    out = []
    for wid, t in state.items():
        if t is None:
            continue
        op = trace.ops.get(wid)
        acked = f", acknowledged at t = {op[5]:.3f} s," if op and op[5] is not None else ""
        out.append((t, f"write {wid}{acked} is held by no node from t = {t:.3f} s (an acknowledged write lost)"))
    return out


def _segments(trace, end: float) -> list[tuple[float, float, list]]:
    """(from, to, leaders) of each stretch with one set of acting leaders, cut at ``end``."""
    marks = [m for m in trace.leaders if m[0] <= end]
    return [(t, marks[k + 1][0] if k + 1 < len(marks) else end, who) for k, (t, who) in enumerate(marks)]


def _splits(trace, end: float) -> list[tuple[float, float, list]]:
    return [(a, b, who) for a, b, who in _segments(trace, end) if len(who) > 1 and b >= a]


def _split_sentence(panel, a: float, b: float, who: list, end: float) -> str:
    why = getattr(getattr(panel, "protocol", None), "SPLIT", "")
    span = f"from t = {a:.3f} s to {b:.3f} s" if b < end else f"from t = {a:.3f} s on"
    return f"split brain {span}: nodes {', '.join(map(str, who))} all act as leader" + (f" ({why})" if why else "")


# the rows under the nodes -------------------------------------------------------------------
def client_rows(panel, trace, end: float, top: float, cy: float, x) -> tuple[list[str], float]:
    """The SVG of the topic's rows from ``cy`` down, and their height."""
    kind = getattr(trace, "kind", "consensus")
    if kind == "replication":
        return _reads_writes(trace, end, cy, x)
    if kind == "election":
        return _leaders(trace, end, top, cy, x)
    return _commands(trace, end, cy, x)


def _commands(trace, end: float, cy: float, x) -> tuple[list[str], float]:
    out = [text(10, cy + 4, "client", "t")]
    labels = Labels()
    ops = [o for o in sorted(trace.ops.values()) if o[1] <= end]
    for k, (op, arrived, committed) in enumerate(ops):
        oy = cy + _LANE * k
        if committed is not None and committed > end:
            committed = None
        stop = committed if committed is not None else end
        dash = "" if committed is not None else ' stroke-dasharray="2,2"'
        out.append(
            f'<line class="op" x1="{x(arrived):.1f}" y1="{oy}" x2="{x(stop):.1f}" y2="{oy}" stroke="#333" '
            f'stroke-width="3"{dash}/>'
        )
        label = f"op {op}: " + (f"committed at {committed:.3f} s" if committed is not None else "never committed")
        if labels.fits(x(stop) + 4, len(label) * CHAR):
            out.append(text(x(stop) + 4, oy + 4, label, "t"))
    return out, _LANE * max(1, len(ops))


def _reads_writes(trace, end: float, cy: float, x) -> tuple[list[str], float]:
    out = [text(10, cy + 4, "clients", "t")]
    lanes: list[float] = []  # each lane's last stop, px: lanes are packed by the intervals alone
    spans = []  # (lane, x1, x2) of each interval
    named = []  # (not stale, start, label x, lane, label): stale reads claim their label's room first
    for op, kind, key, node, start, done, value, stale, gave_up in sorted(
        trace.ops.values(), key=lambda o: (o[4], o[0])
    ):
        if start > end:
            continue
        answered = done is not None and done <= end
        quit_ = not answered and gave_up is not None and gave_up <= end
        stop = done if answered else gave_up if quit_ else end
        x1, x2 = x(start), max(x(stop), x(start) + 1)
        lane = next((k for k, last in enumerate(lanes) if last + 2 < x1), len(lanes))
        if lane == len(lanes):
            lanes.append(x2)
        lanes[lane] = x2
        stale = stale and answered
        colour = "#b00020" if stale else "#2b5fad" if kind == "write" else "#1b6e3a"
        dash = "" if answered else ' stroke-dasharray="2,2"'
        oy = cy + _LANE * lane
        if kind == "write":
            label = f"w{op} k{key}" + ("" if answered else " gave up" if quit_ else " ...")
        else:
            got = ("init" if value is None else f"w{value}") if answered else ("gave up" if quit_ else "...")
            label = f"r{op} k{key} = {got}" + (" stale" if stale else "")
        cls = f"op {kind}" + (" stale" if stale else "") + ("" if answered else " pending" if not quit_ else " gave-up")
        out.append(
            f'<line class="{cls}" data-op="{op}" x1="{x1:.1f}" y1="{oy}" x2="{x2:.1f}" y2="{oy}" stroke="{colour}" '
            f'stroke-width="3"{dash}><title>{escape(label)} (node {node})</title></line>'
        )
        named.append((not stale, start, x2 + 4, lane, label))
        spans.append((lane, x1, x2))
    labels = [Labels() for _ in lanes]
    for lane, x1, x2 in spans:  # a label goes only where no interval of its lane is
        labels[lane].spans.append((x1, x2))
    for fine, _, lx, lane, label in sorted(named):
        if labels[lane].fits(lx, len(label) * CHAR):
            out.append(text(lx, cy + _LANE * lane + 4, label, "t" if fine else "v"))
    return out, _LANE * max(1, len(lanes))


def _leaders(trace, end: float, top: float, cy: float, x) -> tuple[list[str], float]:
    out = [text(10, cy + 4, "leaders", "t")]
    labels = Labels()
    for a, b, who in _segments(trace, end):
        if len(who) > 1:
            out.append(
                f'<rect class="split" x="{x(a):.1f}" y="{top - 20}" width="{max(x(b) - x(a), 1):.1f}" '
                f'height="{cy - top + 28}" fill="#b00020" fill-opacity="0.12"/>'
            )
        if who and b > a:
            colour = "#b00020" if len(who) > 1 else "#1b6e3a"
            out.append(
                f'<line class="leaders" x1="{x(a):.1f}" y1="{cy}" x2="{x(b):.1f}" y2="{cy}" stroke="{colour}" '
                f'stroke-width="4"/>'
            )
        label = "none" if not who else f"node {who[0]}" if len(who) == 1 else f"nodes {', '.join(map(str, who))}"
        room = x(b) - x(a) >= len(label) * CHAR or len(who) > 1  # a blink of a segment goes unnamed
        if room and labels.fits(x(a) + 2, len(label) * CHAR):
            out.append(text(x(a) + 2, cy - 6, label, "v" if len(who) > 1 else "t"))
    return out, _LANE
