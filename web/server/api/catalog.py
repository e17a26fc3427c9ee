"""The presets as the API sees them: a preset file that does not load is listed as unavailable
with its error (and logged once), never a 500 for the whole index.

``sims.core.presets`` raises PresetError for a bad file, but a file it does not yet check can
fail with another exception (``controls = 3`` is a TypeError) or only at run time. Here every
failure to load or describe a preset is that preset's error.
"""

from __future__ import annotations

import logging

from sims.core import api, presets
from sims.core.limits import show

log = logging.getLogger("contention.server")
_logged: set[tuple[str, str]] = set()


class Unavailable(presets.PresetError):
    """A preset file that exists but does not load; the message says which file and why."""


def _broken(name: str, exc: Exception) -> Unavailable:
    where = presets.PRESET_DIR / f"{name}.toml"
    message = str(exc) if isinstance(exc, presets.PresetError) else f"{where}: {type(exc).__name__}: {exc}"
    if (name, message) not in _logged:
        _logged.add((name, message))
        log.warning("preset %s is unavailable: %s", name, message)
    return Unavailable(message)


def load(name: str) -> presets.Preset:
    """The preset of the presets folder; PresetError for any other name, Unavailable for a file
    that does not load. Never a path: ``presets.load`` reads a TOML file at a path given to the
    CLI, which a request must not reach (``/etc/x.toml``, or a NUL byte that ``open`` refuses)."""
    names = presets.preset_names()
    if name not in names:
        raise presets.PresetError(f"unknown preset {show(name)}; valid: {', '.join(names)}")
    try:
        return presets.load(name)
    except Exception as exc:  # a preset file is input: any failure is its own error
        raise _broken(name, exc) from None


def describe(name: str) -> dict:
    """``sims.core.api.describe``, with a failure reported as Unavailable."""
    try:
        return api.describe(name)
    except Exception as exc:
        raise _broken(name, exc) from None


def index() -> list[dict]:
    """Every preset: ``{"name", "available": true, "topic", "title", "duration", "panels"}``, or
    ``{"name", "available": false, "error"}`` for one that does not load."""
    out = []
    for name in presets.preset_names():
        try:
            out.append({**api.describe(load(name), summary=True), "available": True})
        except Unavailable as exc:
            out.append({"name": name, "available": False, "error": str(exc)})
    return out
