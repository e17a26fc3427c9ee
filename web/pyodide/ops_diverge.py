"""Worker operations for divergence: where two panels of a page's simulation first
decide differently, and each policy's reason, from ``sims.core.diverge``.

``diverge {id, a, b, restart}`` returns the next divergence of panels ``a`` and ``b`` after the
last one this session asked for (``restart``: from the start of the stream) as
``{divergence: {index, t, event, a: {decision, reason}, b: {...}, keys} | null, count, compared, end}``
(``keys``: what the two decisions moved, the victims of an eviction say, for the page to mark);
``count`` is the divergences found so far, the returned one included. The engine replays the
session's own stream (its seed, its parameters, the "break it" events injected so far) in
recording mode, apart from the live run, and is kept between calls, so "next" costs only the
events up to the next divergence.
"""

from __future__ import annotations

from typing import Any

from sims.core.diverge import Diverge, records

_ENGINES: dict[str, tuple[tuple, Diverge, object]] = {}  # session id -> (built from, engine, session)


def _op_diverge(a: dict) -> dict:
    from web.pyodide import bridge  # the bridge imports this module while it loads

    s = bridge._session(a)
    first, second = str(a["a"]), str(a["b"])
    events = s.sc.events
    key = (id(s), first, second, len(events), len(s.injected))  # a new session (new parameters) starts over
    held = _ENGINES.get(a["id"])
    if a.get("restart") or held is None or held[0] != key:
        engine = Diverge(s.base, first, second, seed=s.seed, duration=s.sc.duration, events=list(events))
        _ENGINES[a["id"]] = held = (key, engine, s)  # holding s keeps id(s) from being reused
    engine = held[1]
    found = next(engine, None)
    out: dict[str, Any] = {"divergence": found.as_json() if found else None}
    if found:  # the keys the two decisions moved (victims, placed objects): the page marks them in the views
        moved = {
            x for d in (found.a, found.b) if d for x in d.detail if isinstance(x, int | str) and not isinstance(x, bool)
        }
        out["divergence"]["keys"] = sorted(moved, key=str)
    out.update(count=engine.found, compared=engine.compared, end=engine.end)
    return out


def _op_diverge_info(a: dict) -> dict:
    """``{records}``: whether this topic's panels record decisions (a page whose topic does not,
    consensus for example, gets no divergence controls: they could only answer with an error)."""
    from web.pyodide import bridge

    return {"records": any(records(p) for p in bridge._session(a).sc.panels.values())}


def _op_diverge_drop(a: dict) -> dict:
    _ENGINES.pop(a["id"], None)
    return {}


OPS = {"diverge": _op_diverge, "diverge_info": _op_diverge_info, "diverge_drop": _op_diverge_drop}
