"""A Jupyter widget (anywidget, the ``notebook`` extra): ``Sim("cache-scan", seed=7)``.

The widget renders the site's ``<contention-sim>`` element (the embed's Shadow-DOM variant) in the
notebook, but its simulations run in the kernel's Python, not in Pyodide: the element's worker
requests (``create``, ``advance``, ``seek``, ...) travel as widget messages to
``web.pyodide.bridge.call`` here. From Python, ``advance``/``seek``/``step`` drive the widget's own
session and publish ``t`` and ``metrics`` (equal to ``contention run --duration t``); the element
follows ``t``. Its front end is ``widget.js`` beside this file.

The element's ES modules ship inside the widget (``_modules``: the embed's static import closure
and every topic's renderer, dependencies first, with relative imports rewritten to
``contention:PATH`` for the front end to link as blob URLs), so a notebook needs neither the site
nor a network.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

try:
    import anywidget
    import traitlets
except ModuleNotFoundError as exc:  # pragma: no cover - depends on the extra
    raise ImportError(
        f"web.notebook needs the notebook extra: pip install 'contention[notebook]' ({exc.name})"
    ) from None

from sims.core import api
from sims.core import presets as presets_mod
from sitebuild import embed
from web.pyodide import bridge

_ESM = (Path(__file__).resolve().parent / "widget.js").read_text(encoding="utf-8")  # the front end

_SPEC = re.compile(r"""((?:^|\n)\s*(?:import|export)\s(?:[^"';]*?\sfrom\s)?)(["'])(\.{1,2}/[^"']+)\2""")


def element_modules() -> list[list[str]]:
    """``[[path, source], ...]`` of the embed's modules, dependencies first, relative imports as
    ``contention:PATH`` and ``import.meta.url`` pinned to a placeholder base (nothing is fetched
    from it: the preset data and the styles come inline)."""
    order = embed.module_closure()
    for topic in sorted((embed.STATIC / "js" / "topics").glob("*.js")):  # loaded by name
        order += [m for m in embed.module_closure(entry=f"js/topics/{topic.name}") if m not in order]
    out = []
    for rel in order:
        src = (embed.STATIC / rel).read_text(encoding="utf-8")
        base = rel.rsplit("/", 1)[0]

        def spec(m: re.Match, base: str = base) -> str:
            return f"{m.group(1)}{m.group(2)}contention:{embed._normalize(f'{base}/{m.group(3)}')}{m.group(2)}"

        src = _SPEC.sub(spec, src)
        src = src.replace("import.meta.url", json.dumps(f"https://contention.invalid/static/{rel}"))
        out.append([rel, src])
    return out


def _metrics(snapshot: dict) -> dict[str, dict[str, float]]:
    return {name: dict(m) for name, m in snapshot["panels"].items()}


class Sim(anywidget.AnyWidget):
    """A live preset in a notebook: ``Sim(preset, seed=None, panels=None, speed=None)``.

    ``t`` is the virtual time the kernel-side session reached (never past ``duration``);
    ``metrics`` maps panel name -> metric -> value at ``t``.
    """

    _esm = _ESM
    preset = traitlets.Unicode().tag(sync=True)
    seed = traitlets.Int().tag(sync=True)
    panels = traitlets.List(traitlets.Unicode()).tag(sync=True)
    speed = traitlets.Float(1.0).tag(sync=True)
    theme = traitlets.Unicode("").tag(sync=True)
    height = traitlets.Int(0).tag(sync=True)
    duration = traitlets.Float(0.0).tag(sync=True)
    t = traitlets.Float(0.0).tag(sync=True)
    metrics = traitlets.Dict().tag(sync=True)
    meta = traitlets.Dict().tag(sync=True)
    _modules = traitlets.List().tag(sync=True)
    _css = traitlets.Unicode("").tag(sync=True)
    _preset_names = traitlets.List(traitlets.Unicode()).tag(sync=True)

    def __init__(
        self,
        preset: str,
        seed: int | None = None,
        panels: list[str] | str | None = None,
        speed: float | None = None,
        *,
        theme: str = "",
        height: int = 0,
    ) -> None:
        if isinstance(panels, str):
            panels = [p.strip() for p in panels.split(",") if p.strip()]
        if theme not in ("", "light", "dark"):
            raise ValueError(f'theme must be "light" or "dark", got {theme!r}')
        session = bridge.Session(preset, seed, panels or None)  # ValueError names a bad preset/panel
        base = session.base
        names = list(session.sc.panels)
        super().__init__(
            preset=base.name,
            seed=session.seed,
            panels=names,
            speed=float(speed) if speed else api.default_speed(base),
            theme=theme,
            height=int(height),
            duration=float(session.sc.duration),
            meta={**api.describe(base, metrics=session.sc.metrics()), "poster": []},
            _modules=element_modules(),
            _css=(embed.STATIC / "css" / "sim.css").read_text(encoding="utf-8"),
            _preset_names=presets_mod.preset_names(),
        )
        self._session = session
        self.metrics = _metrics(session.sc.snapshot())
        self.on_msg(self._on_msg)

    # -- the front end's worker requests --------------------------------------------------------
    def _on_msg(self, _widget: Any, content: dict, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "request":
            return
        self.send({"type": "reply", "id": content.get("id"), **self.handle(content.get("op"), content.get("args"))})

    def handle(self, op: str, args: dict | None) -> dict:
        """One request in the worker's protocol: ``{"ok": true, "result": …}`` or ``{"ok": false,
        "error": …}`` (``web.pyodide.bridge.call`` in this kernel)."""
        return json.loads(bridge.call(str(op), json.dumps(args or {})))

    # -- Python API ------------------------------------------------------------------------------
    def advance(self, t: float) -> dict[str, dict[str, float]]:
        """Run forward to virtual time ``t`` (clamped to the duration); returns ``metrics``."""
        t = float(t)
        if not t >= self.t:
            raise ValueError(f"advance goes forward: t={t:g} is before {self.t:g} (use seek)")
        self._session.sc.advance(min(t, self.duration))
        return self._publish()

    def seek(self, t: float) -> dict[str, dict[str, float]]:
        """Jump to virtual time ``t``, backwards included (restores a checkpoint, replays)."""
        t = float(t)
        if not 0.0 <= t:
            raise ValueError(f"seek: t must be >= 0, got {t:g}")
        self._session.sc.seek(min(t, self.duration))
        return self._publish()

    def step(self) -> dict[str, dict[str, float]]:
        """Process the next event (or engine step)."""
        self._session.sc.step()
        return self._publish()

    def run(self) -> dict[str, dict[str, float]]:
        """Run to the end."""
        return self.advance(self.duration)

    def snapshot(self) -> dict:
        """``{t, panels: {name: {metric: value}}}``, as the element's ``snapshot()``."""
        return self._session.sc.snapshot()

    def _publish(self) -> dict[str, dict[str, float]]:
        snap = self._session.sc.snapshot()
        self.metrics = _metrics(snap)
        self.t = float(snap["t"])
        return self.metrics
