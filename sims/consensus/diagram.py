"""A Lamport space-time diagram of one recorded consensus run, as a self-contained SVG.

``svg(panel, title="")`` draws a panel that ran with ``panel.record()`` on (``sims.net.trace``):
one horizontal line per node, time left to right; each message copy an arrow from (sent, src) to
(arrival, dst), one SVG element with ``data-msg`` = its index in ``trace.messages`` (dropped ones
end in a cross where they were dropped, messages still in flight at the end run dashed to the
right edge); crashes as shaded bands, partitions and heals as marks across the nodes; a node's
line thick while it leads, dashed while a candidate, with its term written at each change; client
commands as intervals from arrival to commit on a client line; and each safety violation the
checker caught as a red line at its time, numbered, with its sentence (the one ``contention
search`` prints) under the title. A label that would overlap another on its line is left out.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

_LEFT, _RIGHT, _ROW, _CHAR = 90, 240, 64, 6.2  # px; _CHAR: the width of one 11px character
_COLOURS = {"leader": "#1b6e3a", "candidate": "#b07400", "follower": "#555", "precandidate": "#b07400"}
_LEGEND = (
    "thick green: leader; dashed amber: candidate; arrows: messages (x: dropped); grey band: crashed; "
    "purple line: partition (dotted: heal); red line: a violation; client: command from arrival to commit"
)
_MSG_COLOURS = {"RV": "#b07400", "RVR": "#d9a441", "AE": "#2b5fad", "AER": "#7fa3d9"}


class _Labels:
    """Texts on one line (a row), left to right: ``fits`` says whether [x, x + width) is free."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []

    def fits(self, x: float, width: float) -> bool:
        if any(a < x + width and x < b for a, b in self.spans):
            return False
        self.spans.append((x - 2, x + width + 2))
        return True


def _text(x: float, y: float, s: str, cls: str = "", anchor: str = "start") -> str:
    c = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}"{c} text-anchor="{anchor}">{escape(s)}</text>'


def _sentences(panel) -> list[tuple[float, str]]:
    from sims.adversary.evaluate import violation_sentence

    found = panel.checker.violations
    return [(t, violation_sentence(key, t)) for key, t in sorted(found.items(), key=lambda kv: (kv[1], kv[0]))]


def svg(panel, title: str = "") -> str:
    """The diagram of ``panel``'s recorded run, up to its current time."""
    trace = panel.net.trace
    if trace is None:
        raise ValueError("svg: the panel was not recorded; call panel.record() before feeding it")
    n, end = panel.n, max(panel.t, 1e-9)
    scale = min(1500.0, max(200.0, 4000.0 / end))  # px per second
    why = _sentences(panel)
    top = 56 + 16 * len(why) + 44
    width = _LEFT + end * scale + _RIGHT
    client_y = top + n * _ROW
    height = client_y + 30 + 14 * max(1, len(trace.ops))

    def x(t: float) -> float:
        return _LEFT + t * scale

    def y(node: int) -> float:
        return top + node * _ROW

    rows = [_Labels() for _ in range(n + 2)]  # nodes, the client line, the marks line above node 0
    # each row's texts sit at one height of their own: a node's terms 6 px above its line, its
    # "crashed" 24 px below, the marks line 24 px above node 0's
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="11">',
        "<style>.t{fill:#333}.v{fill:#b00020}.f{fill:#6a3d9a}.m{fill:#777}</style>",
        '<defs><marker id="a" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" '
        'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="context-stroke"/></marker></defs>',
        '<rect width="100%" height="100%" fill="white"/>',
        _text(10, 20, title or f"{panel.name}: {len(trace.messages)} messages, {len(why)} violations", "t"),
    ]
    out.append(_text(10, 36, _LEGEND, "m"))
    for k, (_, sentence) in enumerate(why):
        out.append(_text(10, 56 + 16 * k, f"[{k + 1}] {sentence}", "v"))
    # time axis: a tick every 0.1 s (every 0.5 s when those would crowd)
    step = 0.1 if scale >= 400 else 0.5
    k = 0
    while k * step <= end + 1e-9:
        tx = x(k * step)
        out.append(f'<line x1="{tx:.1f}" y1="{top - 14}" x2="{tx:.1f}" y2="{client_y}" stroke="#eee"/>')
        out.append(_text(tx, height - 4, f"{k * step:g} s", "m", "middle"))
        k += 1
    marks = []  # the violations, drawn over everything; their numbers claim the marks line first
    for k, (t, _) in enumerate(why):
        vx = x(t)
        marks.append(
            f'<line class="violation" data-violation="{k + 1}" x1="{vx:.1f}" y1="{top - 34}" x2="{vx:.1f}" '
            f'y2="{client_y}" stroke="#b00020" stroke-width="2"/>'
        )
        label = f"[{k + 1}]"
        if rows[n + 1].fits(vx + 3, len(label) * _CHAR):
            marks.append(_text(vx + 3, top - 24, label, "v"))
    out += _faults(trace, n, end, x, y, top, client_y, rows)
    out += _lines(trace, n, end, x, y, rows)
    out += _messages(trace, end, x, y)
    out += _ops(trace, end, x, client_y, rows[n])
    out += marks
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _faults(trace, n, end, x, y, top, bottom, rows) -> list[str]:
    out = []
    down: dict[int, float] = {}
    bands = []
    for t, f in trace.faults:
        kind = f["fault"]
        if kind == "crash" and f["node"] not in down:
            down[f["node"]] = t
        elif kind == "restart" and f["node"] in down:
            bands.append((f["node"], down.pop(f["node"]), t))
        elif kind in ("partition", "heal"):
            fx = x(t)
            dash = ' stroke-dasharray="2,3"' if kind == "heal" else ""
            out.append(
                f'<line class="fault" x1="{fx:.1f}" y1="{top - 34}" x2="{fx:.1f}" y2="{bottom - _ROW / 2}" '
                f'stroke="#6a3d9a" stroke-width="1.5"{dash}/>'
            )
            label = "heal" if kind == "heal" else "partition " + _sides(f["groups"], n)
            if rows[n + 1].fits(fx + 3, len(label) * _CHAR):
                out.append(_text(fx + 3, top - 24, label, "f"))
    bands += [(node, t, end) for node, t in down.items()]
    for node, a, b in bands:
        out.append(
            f'<rect class="crash" x="{x(a):.1f}" y="{y(node) - 14}" width="{max(x(b) - x(a), 1):.1f}" height="28" '
            f'fill="#999" fill-opacity="0.3"/>'
        )
        if rows[node].fits(x(a) + 2, 7 * _CHAR):
            out.append(_text(x(a) + 2, y(node) + 24, "crashed", "m"))
    return out


def _sides(groups: list, n: int) -> str:
    named = [sorted(int(i) for i in g) for g in groups if g]
    rest = sorted(set(range(n)) - {i for g in named for i in g})
    return " | ".join("{" + ",".join(map(str, g)) + "}" for g in named + ([rest] if rest else []))


def _lines(trace, n, end, x, y, rows) -> list[str]:
    out = []
    per_node: list[list] = [[] for _ in range(n)]
    for t, node, up, role, term in trace.states:
        per_node[node].append((t, up, role, term))
    for node in range(n):
        ny = y(node)
        out.append(_text(10, ny + 4, f"node {node}", "t"))
        states = per_node[node]
        last_term = None
        for k, (t, up, role, term) in enumerate(states):
            t2 = states[k + 1][0] if k + 1 < len(states) else end
            if up and t2 > t:
                colour = _COLOURS.get(role, "#555")
                w = 4 if role == "leader" else 1.2
                dash = ' stroke-dasharray="4,3"' if "candidate" in role else ""
                out.append(
                    f'<line class="role-{role}" x1="{x(t):.1f}" y1="{ny}" x2="{x(t2):.1f}" y2="{ny}" '
                    f'stroke="{colour}" stroke-width="{w}"{dash}/>'
                )
            if up and (term != last_term or role == "leader"):
                label = f"{'leader ' if role == 'leader' else ''}term {term}"
                if rows[node].fits(x(t), len(label) * _CHAR):
                    out.append(_text(x(t), ny - 6, label, "t"))
                last_term = term
    return out


def _messages(trace, end, x, y) -> list[str]:
    out = []
    for i, (sent, src, dst, kind, term, arrived, fate, *dropped) in enumerate(trace.messages):
        colour = _MSG_COLOURS.get(kind, "#888")
        x1, y1 = x(sent), y(src)
        title = f"<title>{escape(kind)} term {term}: {src} -> {dst}, {fate}</title>"
        if fate == "delivered":
            x2, y2, tail = x(arrived), y(dst), ' marker-end="url(#a)"'
        elif fate == "in flight":
            x2, y2, tail = x(end), y1 + (y(dst) - y1) * 0.5, ' stroke-dasharray="3,2"'
        else:
            at = dropped[0] if dropped else sent
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


def _ops(trace, end, x, cy, labels) -> list[str]:
    out = [_text(10, cy + 4, "client", "t")]
    for k, (op, arrived, committed) in enumerate(sorted(trace.ops.values())):
        oy = cy + 14 * k
        stop = committed if committed is not None else end
        dash = "" if committed is not None else ' stroke-dasharray="2,2"'
        out.append(
            f'<line class="op" x1="{x(arrived):.1f}" y1="{oy}" x2="{x(stop):.1f}" y2="{oy}" stroke="#333" '
            f'stroke-width="3"{dash}/>'
        )
        label = f"op {op}: " + (f"committed at {committed:.3f} s" if committed is not None else "never committed")
        if labels.fits(x(stop) + 4, len(label) * _CHAR):
            out.append(_text(x(stop) + 4, oy + 4, label, "t"))
    return out
