"""Worker operations for the space-time diagram of a consensus page (``sims.consensus.diagram``).

``diagram_info {id}`` returns ``{panels}``: the page's panels that can be drawn (those with a
network to record: the consensus topic's). ``diagram {id, panel, t}`` replays that panel alone
from the start of the session's own stream (its seed, its parameters, the "break it" events
injected so far) with recording on, to ``t`` (at most ``MAX_SECONDS``, so the picture stays a size
a tab can hold), and returns ``{svg, messages, t}``: the SVG text and how many message copies it
draws (one element with ``data-msg`` each). The live run is not touched.
"""

from __future__ import annotations

from bisect import bisect_right

from sims.core import registry
from sims.core.panel import PanelContext

MAX_SECONDS = 20.0  # 400 px a second and one row per client command: about 8,000 px at most


def _drawable(panel) -> bool:
    return callable(getattr(getattr(panel, "inner", panel), "record", None))


def _op_diagram_info(a: dict) -> dict:
    from web.pyodide import bridge  # the bridge imports this module while it loads

    s = bridge._session(a)
    return {"panels": [n for n, p in s.sc.panels.items() if _drawable(p)], "max_seconds": MAX_SECONDS}


def _op_diagram(a: dict) -> dict:
    from sims.consensus.diagram import svg
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
    spec = specs[name]
    events = s.sc.events
    ctx = PanelContext(s.seed, s.sc.duration, events, name, s.sc.preset)
    panel = registry.load_topic(s.sc.preset.topic).make_panel(spec.policy, name, dict(spec.params), ctx)
    panel.record()
    panel.feed(events, 0, bisect_right([ev["t"] for ev in events], t), t)  # the events up to t, then to t
    return {"svg": svg(panel, f"{name}: the first {t:g} s"), "messages": len(panel.net.trace.messages), "t": t}


OPS = {"diagram": _op_diagram, "diagram_info": _op_diagram_info}
