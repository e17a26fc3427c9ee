"""A Lamport space-time diagram of one recorded run on ``sims.net``, as a self-contained SVG.

``svg(panel, title="", until=None)`` draws a consensus, replication or election panel that ran
with ``panel.record()`` on (``sims.net.trace``), up to ``until`` (default: the panel's own time;
a panel recorded further can be drawn at any earlier time, as the page's clock scrubs it):
one horizontal line per node, time left to right; each message copy sent by then an arrow from
(sent, src) to (arrival, dst), one SVG element with ``data-msg`` = its index in
``trace.messages`` (dropped ones end in a cross where they were dropped, messages still in flight
run dashed to the right edge); crashes and pauses as shaded bands, partitions and heals as marks
across the nodes, other faults named on the marks line; a node's line thick while it leads,
dashed while a candidate, with its term (replication: epoch) written at each change; the
topic's client line under the nodes (``sims.net.diagram_rows``: consensus commands, replication
reads and writes with their results, election's leaders over time); each violation as a red
line at its time, numbered, with its sentence under the title; and "now" at the right edge.
A label that would overlap another on its line is left out. Nothing in it runs: no script, no
link, no external reference.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from sims.net.diagram_rows import CHAR as _CHAR
from sims.net.diagram_rows import Labels, client_rows, text, violations

__all__ = ["svg", "time_of"]

_LEFT, _RIGHT, _ROW = 90, 240, 64  # px
_COLOURS = {
    "leader": "#1b6e3a",
    "head": "#1b6e3a",
    "head+tail": "#1b6e3a",
    "candidate": "#b07400",
    "precandidate": "#b07400",
    "out": "#bbb",
}
_THICK = ("leader", "head", "head+tail")
_LEGEND = (
    "thick green: leader; dashed amber: candidate; arrows: messages (x: dropped); grey band: crashed "
    "(blue: paused); purple line: partition (dotted: heal); red line: a violation; "
)
_ROWS_LEGEND = {
    "consensus": "client: command from arrival to commit",
    "replication": "clients: writes (blue), reads (green) from start to answer, red: a stale read",
    "election": "leaders: who acts as leader, red band: split brain",
}
_MSG_COLOURS = {"RV": "#b07400", "RVR": "#d9a441", "AE": "#2b5fad", "AER": "#7fa3d9"}


def svg(panel, title: str = "", until: float | None = None) -> str:
    """The diagram of ``panel``'s recorded run, up to ``until`` (default: its current time)."""
    net = panel.net
    trace = net.trace
    if trace is None:
        raise ValueError("svg: the panel was not recorded; call panel.record() before feeding it")
    now = time_of(panel)
    end = max(min(now, until) if until is not None else now, 1e-9)
    rows_n = net.n
    clients = getattr(panel, "n", rows_n)  # election: node n is the coordination service
    scale = min(1500.0, max(200.0, 4000.0 / end))  # px per second
    why = violations(panel, trace, end)
    top = 56 + 16 * len(why) + 44
    client_y = top + rows_n * _ROW
    lines, client_h = client_rows(panel, trace, end, top, client_y, lambda t: _LEFT + t * scale)
    width = _LEFT + end * scale + _RIGHT
    height = client_y + 30 + client_h

    def x(t: float) -> float:
        return _LEFT + t * scale

    def y(node: int) -> float:
        return top + node * _ROW

    rows = [Labels() for _ in range(rows_n + 1)]  # the nodes, then the marks line above node 0
    # each row's texts sit at one height of their own: a node's terms 6 px above its line, its
    # "crashed" 24 px below, the marks line 24 px above node 0's
    count = sum(1 for m in trace.messages if m[0] <= end)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
        "<style>.t{fill:#333}.v{fill:#b00020}.f{fill:#6a3d9a}.m{fill:#777}</style>",
        '<defs><marker id="a" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" '
        'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="context-stroke"/></marker></defs>',
        '<rect width="100%" height="100%" fill="white"/>',
        text(10, 20, title or f"{panel.name}: {count} messages, {len(why)} violations", "t"),
        text(10, 36, _LEGEND + _ROWS_LEGEND.get(getattr(trace, "kind", "consensus"), ""), "m"),
    ]
    for k, (_, sentence) in enumerate(why):
        out.append(text(10, 56 + 16 * k, f"[{k + 1}] {sentence}", "v"))
    # time axis: a tick every 0.1 s (every 0.5 s when those would crowd)
    step = 0.1 if scale >= 400 else 0.5
    k = 0
    while k * step <= end + 1e-9:
        tx = x(k * step)
        out.append(f'<line x1="{tx:.1f}" y1="{top - 14}" x2="{tx:.1f}" y2="{client_y}" stroke="#eee"/>')
        out.append(text(tx, height - 4, f"{k * step:g} s", "m", "middle"))
        k += 1
    marks = []  # the violations, drawn over everything; their numbers claim the marks line first
    for k, (t, _) in enumerate(why):
        vx = x(t)
        marks.append(
            f'<line class="violation" data-violation="{k + 1}" x1="{vx:.1f}" y1="{top - 34}" x2="{vx:.1f}" '
            f'y2="{client_y}" stroke="#b00020" stroke-width="2"/>'
        )
        label = f"[{k + 1}]"
        if rows[rows_n].fits(vx + 3, len(label) * _CHAR):
            marks.append(text(vx + 3, top - 24, label, "v"))
    nx = x(end)  # "now": where the run stands, the right edge of what happened
    marks.append(
        f'<line class="now" data-now="{end:.6g}" x1="{nx:.1f}" y1="{top - 34}" x2="{nx:.1f}" y2="{height - 16}" '
        f'stroke="#0a58ca" stroke-width="1.5" stroke-dasharray="6,3"/>'
    )
    if rows[rows_n].fits(nx + 3, 20 * _CHAR):
        marks.append(text(nx + 3, top - 24, f"now {end:.3f} s", "t"))
    out += _faults(trace, rows_n, end, x, y, top, client_y, rows)
    out += _lines(trace, rows_n, clients, end, x, y, rows)
    out += _messages(trace, end, x, y, trace.term_word if trace.term_word == "term" else "")
    out += lines
    out += marks
    out.append("</svg>")
    return "\n".join(out) + "\n"


def time_of(panel) -> float:
    """Where a panel stands on the virtual clock."""
    for name in ("t", "now"):  # consensus and election keep ``t``, replication ``now``
        v = getattr(panel, name, None)
        if isinstance(v, float | int):
            return float(v)
    return 0.0


def _faults(trace, n, end, x, y, top, bottom, rows) -> list[str]:
    out = []
    down: dict[int, float] = {}
    stopped: dict[int, float] = {}
    bands = []
    for t, f in trace.faults:
        if t > end:
            break
        kind = f["fault"]
        node = int(f["node"]) if "node" in f else None
        if kind in ("crash", "restart", "pause", "resume"):
            if kind == "crash" and node not in down:
                down[node] = t
                if node in stopped:  # a crash ends a pause
                    bands.append((node, stopped.pop(node), t, "pause"))
            elif kind == "restart" and node in down:
                bands.append((node, down.pop(node), t, "crash"))
            elif kind == "pause" and node not in down and node not in stopped:
                stopped[node] = t
            elif kind == "resume" and node in stopped:
                bands.append((node, stopped.pop(node), t, "pause"))
            continue
        fx = x(t)
        if kind in ("partition", "heal", "oneway"):
            dash = ' stroke-dasharray="2,3"' if kind == "heal" else ""
            out.append(
                f'<line class="fault" x1="{fx:.1f}" y1="{top - 34}" x2="{fx:.1f}" y2="{bottom - _ROW / 2}" '
                f'stroke="#6a3d9a" stroke-width="1.5"{dash}/>'
            )
        label = _fault_label(kind, f, n)
        if rows[n].fits(fx + 3, len(label) * _CHAR):
            out.append(text(fx + 3, top - 24, label, "f"))
    bands += [(node, t, end, "crash") for node, t in down.items()]
    bands += [(node, t, end, "pause") for node, t in stopped.items()]
    for node, a, b, kind in bands:
        if node is None or not 0 <= node < n:
            continue
        fill = "#999" if kind == "crash" else "#2b5fad"
        out.append(
            f'<rect class="{kind}" x="{x(a):.1f}" y="{y(node) - 14}" width="{max(x(b) - x(a), 1):.1f}" height="28" '
            f'fill="{fill}" fill-opacity="{0.3 if kind == "crash" else 0.15}"/>'
        )
        word = "crashed" if kind == "crash" else "paused"
        if rows[node].fits(x(a) + 2, len(word) * _CHAR):
            out.append(text(x(a) + 2, y(node) + 24, word, "m"))
    return out


def _fault_label(kind: str, f: dict, n: int) -> str:
    if kind == "heal":
        return "heal"
    if kind == "partition":
        return "partition " + _sides(f["groups"], n)
    if kind == "oneway":
        return f"one-way: {f['to']} does not hear {f['from']}"
    if "node" in f:
        return f"{kind} node {f['node']}"
    return kind


def _sides(groups: list, n: int) -> str:
    named = [sorted(int(i) for i in g) for g in groups if g]
    rest = sorted(set(range(n)) - {i for g in named for i in g})
    return " | ".join("{" + ",".join(map(str, g)) + "}" for g in named + ([rest] if rest else []))


def _lines(trace, n, clients, end, x, y, rows) -> list[str]:
    out = []
    per_node: list[list] = [[] for _ in range(n)]
    for t, node, up, role, term in trace.states:
        if t <= end and node < n:
            per_node[node].append((t, up, role, term))
    word = trace.term_word
    for node in range(n):
        ny = y(node)
        out.append(text(10, ny + 4, f"node {node}" if node < clients else "service", "t"))
        states = per_node[node]
        last_term = last_role = None
        for k, (t, up, role, term) in enumerate(states):
            t2 = states[k + 1][0] if k + 1 < len(states) else end
            if up and t2 > t:
                colour = _COLOURS.get(role, "#555")
                w = 4 if role in _THICK else 1.2
                dash = ' stroke-dasharray="4,3"' if "candidate" in role else ""
                out.append(
                    f'<line class="role-{escape(role)}" x1="{x(t):.1f}" y1="{ny}" x2="{x(t2):.1f}" y2="{ny}" '
                    f'stroke="{colour}" stroke-width="{w}"{dash}/>'
                )
            label = ""
            if up and term is not None and (term != last_term or role in _THICK):
                label = f"{role + ' ' if role in _THICK else ''}{word} {term}"
                last_term = term
            elif up and term is None and role != last_role and role in _THICK:
                label = role  # a protocol without terms: who leads, from when
            if label and rows[node].fits(x(t), len(label) * _CHAR):
                out.append(text(x(t), ny - 6, label, "t"))
            last_role = role if up else None
    return out


def _messages(trace, end, x, y, word: str) -> list[str]:
    out = []
    for i, (sent, src, dst, kind, term, arrived, fate, *dropped) in enumerate(trace.messages):
        if sent > end:
            break  # in the order they were sent
        at = dropped[0] if dropped else sent
        if fate == "delivered" and arrived > end or fate not in ("delivered", "in flight") and at > end:
            fate = "in flight"  # it arrives (or is dropped) after ``end``
        colour = _MSG_COLOURS.get(kind, "#888")
        x1, y1 = x(sent), y(src)
        about = f" {word} {term}" if word and term is not None else ""
        title = f"<title>{escape(kind)}{about}: {src} -> {dst}, {fate}</title>"
        if fate == "delivered":
            x2, y2, tail = x(arrived), y(dst), ' marker-end="url(#a)"'
        elif fate == "in flight":
            x2, y2, tail = x(end), y1 + (y(dst) - y1) * 0.5, ' stroke-dasharray="3,2"'
        else:
            frac = 1.0 if fate != "loss" else 0.3  # lost when sent: a stub toward dst
            x2, y2 = x(at) + (6 if fate == "loss" else 0), y1 + (y(dst) - y1) * frac
            tail = ""
        out.append(
            f'<g data-msg="{i}" class="msg {fate.replace(" ", "-")}"><line x1="{x1:.1f}" y1="{y1:.1f}" '
            f'x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" stroke-width="0.8"{tail}/>{title}'
        )
        if fate not in ("delivered", "in flight"):
            out.append(
                f'<path d="M{x2 - 3:.1f},{y2 - 3:.1f} L{x2 + 3:.1f},{y2 + 3:.1f} M{x2 - 3:.1f},{y2 + 3:.1f} '
                f'L{x2 + 3:.1f},{y2 - 3:.1f}" stroke="#b00020" stroke-width="1.2"/>'
            )
        out.append("</g>")
    return out
