"""Worker operations of the policy editor (web/static/js/editor.js, edited.js). Two workers answer
them: the page's worker lists the policies and writes out their source (our own code); the
edited-policy worker, a worker of its own under the page's Content-Security-Policy, is the only
one that compiles or runs an edit (web/static/js/worker.js refuses those operations elsewhere).
The server has no operation that takes source.

- ``editor_policies {id}``: the session's preset panels, each with whether it can be edited;
- ``editor_source {id, panel}``: ``{source, filename}``, the panel's policy as one file;
- ``editor_check {preset, overrides, base, source}``: compiles the edit only: ``{ok, policy}`` or
  ``{ok: false, error}``;
- ``edited_create {id, preset, seed, overrides}``: a session of the page's stream (its preset, seed
  and parameters) without the preset's own panels; none of an edit's code runs in it;
- ``edited_apply {id, edits: [{base, source}], actions}``: adds each edit as the panel
  ``"<base> (edited)"`` at t = 0, then the page's injected actions; ``{frame, names, errors: {name:
  error}}``. Its chart rows carry every metric the edited panels report (the page picks its own
  columns from them). The bridge's ``advance``, ``seek``, ``snapshot`` and ``drop`` then drive it,
  as they drive the page's session. Here an edited panel may also take at most FRAME_STEPS steps
  per frame;
- ``edited_inject {id, action, t}``: the action the page injected at its time ``t``.

An error is ``{message, line, kind, text}``; ``line`` is in the edited source. A panel that stops
later carries ``view.stopped`` (``sims.core.editpanel.Stop.as_json``) in the frames.
"""

from __future__ import annotations

from typing import Any

from sims.core import editpanel, policysource, presets, userpolicy
from web.pyodide.bridge import _SESSIONS, Session, _session

FRAME_STEPS = 5_000_000  # steps an edited panel may take per frame here (userpolicy.Steps.frame_cap)


def _error(exc: userpolicy.PolicyError) -> dict[str, Any]:
    return {"message": exc.message, "line": exc.line, "kind": exc.kind, "text": str(exc)}


def _filename(preset: Any, base: str | None) -> str:
    by_name = {p.name: p for p in preset.panels}
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
    preset = presets.load(a["preset"])
    if a.get("overrides"):
        preset = preset.with_overrides(a["overrides"])
    try:
        loaded = userpolicy.load(a["source"], preset.topic, _filename(preset, a.get("base")))
    except userpolicy.PolicyError as exc:
        return {"ok": False, "error": _error(exc)}
    return {"ok": True, "policy": loaded.name}


def _op_create(a: dict) -> dict:
    _SESSIONS[a["id"]] = s = Session(a["preset"], a.get("seed"), [], a.get("overrides"))
    return {"t": s.sc.t, "events": len(s.sc.events)}


def _op_apply(a: dict) -> dict:
    s = _session(a)
    names, errors = [], {}
    for edit in a.get("edits") or []:
        base = str(edit["base"])
        name = base + editpanel.SUFFIX
        try:
            loaded = userpolicy.load(edit["source"], s.base.topic, _filename(s.base, base))
            loaded.steps.frame_cap = FRAME_STEPS
            name = editpanel.add_edited(s.sc, loaded, s.base, base)
        except userpolicy.PolicyError as exc:
            errors[name] = _error(exc)
        names.append(name)
    if s.sc.panels:  # a drawn fault names nodes of the panels: with none loaded, nothing runs anyway
        for index, t in a.get("actions") or []:
            s.sc.insert(s._action_event(index, t))
            s.injected.append([index, t])
    s.columns = list(dict.fromkeys(k for m in s.sc.metrics().values() for k in m))
    s.sent = 0
    return {"frame": s.frame(), "names": names, "errors": errors}


def _op_inject(a: dict) -> dict:
    s = _session(a)
    index, t = a["action"], float(a["t"])
    s.sc.insert(s._action_event(index if isinstance(index, str) else int(index), t))
    s.injected.append([index, t])
    return {"frame": s.frame()}


OPS = {
    "editor_policies": _op_policies,
    "editor_source": _op_source,
    "editor_check": _op_check,
    "edited_create": _op_create,
    "edited_apply": _op_apply,
    "edited_inject": _op_inject,
}
