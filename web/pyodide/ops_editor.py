"""Worker operations of the policy editor (web/static/js/editor.js): a policy's source, a check of
an edit, and the edited panels of a session. The edited code runs here, in the reader's own worker
(``sims.core.userpolicy``); the server has no operation that takes source.

- ``editor_policies {id}``: the session's preset panels, each with whether it can be edited;
- ``editor_source {id, panel}``: ``{source, filename}``, the panel's policy as one file;
- ``editor_check {id, source}``: compiles the edit only: ``{ok, policy}`` or ``{ok: false, error}``;
- ``editor_apply {id, edits: [{base, source}]}``: adds each as the panel ``"<base> (edited)"``,
  replayed from 0 to the session's time; ``{frame, names, errors: {name: error}}``. The frame
  resends the chart rows from 0, so the new panel's line starts at 0. Here an edited panel may
  also take at most FRAME_STEPS steps per frame (the catch-up goes in frames of 1% of the run).

An error is ``{message, line, kind, text}``; ``line`` is in the edited source. A panel that stops
later carries ``view.stopped`` (``sims.core.editpanel.Stop.as_json``) in the frames.
"""

from __future__ import annotations

from typing import Any

from sims.core import editpanel, policysource, userpolicy
from web.pyodide.bridge import _session

FRAME_STEPS = 5_000_000  # steps an edited panel may take per frame here (userpolicy.Steps.frame_cap)


def _error(exc: userpolicy.PolicyError) -> dict[str, Any]:
    return {"message": exc.message, "line": exc.line, "kind": exc.kind, "text": str(exc)}


def _filename(s: Any, base: str | None) -> str:
    by_name = {p.name: p for p in s.base.panels}
    return f"{by_name[base].policy}.py" if base in by_name else "edited.py"


def _op_policies(a: dict) -> dict:
    s = _session(a)
    out = []
    for p in s.base.panels:
        entry: dict[str, Any] = {"panel": p.name, "policy": p.policy, "editable": True}
        try:
            policysource.policy_source(s.base.topic, p.policy)
        except Exception as exc:  # noqa: BLE001 - a policy we cannot write out is listed, greyed out
            entry.update(editable=False, reason=str(exc))
        out.append(entry)
    return {"topic": s.base.topic, "panels": out}


def _op_source(a: dict) -> dict:
    s = _session(a)
    spec = editpanel.base_panel(s.base, None, str(a["panel"]))
    return {"source": policysource.policy_source(s.base.topic, spec.policy), "filename": f"{spec.policy}.py"}


def _op_check(a: dict) -> dict:
    s = _session(a)
    try:
        loaded = userpolicy.load(a["source"], s.base.topic, _filename(s, a.get("base")))
    except userpolicy.PolicyError as exc:
        return {"ok": False, "error": _error(exc)}
    return {"ok": True, "policy": loaded.name}


def _op_apply(a: dict) -> dict:
    s = _session(a)
    names, errors = [], {}
    for edit in a.get("edits") or []:
        base = str(edit["base"])
        name = base + editpanel.SUFFIX
        try:
            loaded = userpolicy.load(edit["source"], s.base.topic, _filename(s, base))
            loaded.steps.frame_cap = FRAME_STEPS
            name = editpanel.add_edited(s.sc, loaded, s.base, base)
        except userpolicy.PolicyError as exc:
            errors[name] = _error(exc)
        names.append(name)
    s.sent = 0  # the new panels' chart rows start at 0: send every row again
    return {"frame": s.frame(), "names": names, "errors": errors}


OPS = {
    "editor_policies": _op_policies,
    "editor_source": _op_source,
    "editor_check": _op_check,
    "editor_apply": _op_apply,
}
