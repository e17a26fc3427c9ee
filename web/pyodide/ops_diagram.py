"""Worker operations for the space-time diagram of a consensus, replication or election page
(``sims.net.diagram``).

``diagram_info {id}`` returns ``{panels}``: the page's panels that can be drawn (those whose
topic records its network: consensus, replication, election). ``diagram {id, panel, t}`` draws
that panel's run from the start of the session's own stream (its seed, its parameters, the
"break it" events injected so far) up to ``t`` (at most ``MAX_SECONDS``, so the picture stays a
size a tab can hold), and returns ``{svg, messages, t}``: the SVG text and how many message
copies it draws (one element with ``data-msg`` each). The live run is not touched.

The page asks again as its clock moves or is sought (scrubbing), so the recorded replay is kept
per session and panel: a later ``t`` feeds it on from where it stands, an earlier one draws the
same recording cut at ``t`` (``svg(..., until=t)``: what happened by then depends on nothing
later). It is replayed from the start only when the events it took in changed (a fault injected
before the time it stands at).
"""

from __future__ import annotations

from bisect import bisect_right

from sims.core import registry
from sims.core.panel import PanelContext

MAX_SECONDS = 20.0  # 200-400 px a second: about 8,000 px at most


def _drawable(panel) -> bool:
    return callable(getattr(getattr(panel, "inner", panel), "record", None))


def _op_diagram_info(a: dict) -> dict:
    from web.pyodide import bridge  # the bridge imports this module while it loads

    s = bridge._session(a)
    return {"panels": [n for n, p in s.sc.panels.items() if _drawable(p)], "max_seconds": MAX_SECONDS}


def _recorded(s, name: str, t: float):
    """The panel ``name`` of session ``s`` replayed with recording on to at least ``t``."""
    from sims.net.diagram import time_of

    events = s.sc.events
    kept = s.__dict__.setdefault("diagrams", {})  # panel name -> (recorded panel, the events it took in)
    panel, taken = kept.get(name, (None, []))
    if panel is not None:
        n = len(taken)
        if events[:n] != taken or (n < len(events) and events[n]["t"] < time_of(panel)):
            panel = None  # an event came in before where the recording stands: it is another run now
    if panel is None:
        spec = {p.name: p for p in s.sc.preset.panels}[name]
        ctx = PanelContext(s.seed, s.sc.duration, events, name, s.sc.preset)
        panel = registry.load_topic(s.sc.preset.topic).make_panel(spec.policy, name, dict(spec.params), ctx)
        panel.record()
        taken = []
    if time_of(panel) < t:
        k = bisect_right([ev["t"] for ev in events], t)
        panel.feed(events, len(taken), k, t)  # the events up to t, then to t
        taken = [dict(ev) for ev in events[:k]]
    kept[name] = (panel, taken)
    return panel


def _op_diagram(a: dict) -> dict:
    from sims.net.diagram import svg
    from web.pyodide import bridge

    s = bridge._session(a)
    name = str(a["panel"])
    specs = {p.name: p for p in s.sc.preset.panels}
    if name not in specs or not _drawable(s.sc.panels[name]):
        drawable = [n for n, p in s.sc.panels.items() if _drawable(p)]
        raise ValueError(f"diagram: panel {name!r} cannot be drawn; these can: {', '.join(drawable) or 'none'}")
    t = min(float(a.get("t", s.sc.t)), s.sc.duration, MAX_SECONDS)
    if not t > 0.0:
        raise ValueError("diagram: play the simulation first (nothing has happened at t = 0)")
    panel = _recorded(s, name, t)
    drawn = sum(1 for m in panel.net.trace.messages if m[0] <= t)
    return {"svg": svg(panel, f"{name}: the first {t:g} s", until=t), "messages": drawn, "t": t}


OPS = {"diagram": _op_diagram, "diagram_info": _op_diagram_info}
