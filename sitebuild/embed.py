"""The embeds' part of the build (called from ``sitebuild.build``).

Writes ``embed.js`` (the one-tag entry point: it imports the element's modules from ``static/``,
so every asset resolves relative to it), ``embed/PRESET/index.html`` (the iframe fallback, one per
preset), ``examples/blog-post.html`` (a post with five widgets) and ``docs/embedding.md`` into the
build. The committed ``docs/embedding.md`` is never rewritten by a build: a test checks it equals
``render_doc``, and ``python -m sitebuild docs`` refreshes it. ``module_closure`` lists the
JavaScript an embed loads before Pyodide, in the order the entry point imports it.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path
from typing import Any

from sitebuild.pack import ROOT

STATIC = ROOT / "web" / "static"
DOC = ROOT / "docs" / "embedding.md"  # the committed copy of render_doc()
ENTRY = "js/embed.js"  # relative to static/
FIRST = "embed/defer-define.js"  # must evaluate before sim-element.js defines the element
SHADOW_CSS = ("css/sim.css", "vendor/uplot/uPlot.min.css")  # what the element links in its shadow root
BUDGET_GZIP = 30 * 1024
_IMPORT = re.compile(r"""^\s*(?:import|export)\s(?:[^"';]*?\sfrom\s)?["'](\.{1,2}/[^"']+)["']""", re.M)


def module_closure(static: Path = STATIC, entry: str = ENTRY) -> list[str]:
    """Static imports reachable from ``entry`` (paths relative to ``static``), dependencies first;
    dynamic ``import()`` is not followed (charts.js and uPlot load only on the site's pages)."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(rel: str) -> None:
        if rel in seen:
            return
        seen.add(rel)
        path = static / rel
        if not path.exists():
            raise ValueError(f"{path}: imported by the embed but missing")
        for spec in _IMPORT.findall(path.read_text(encoding="utf-8")):
            dep = (Path(rel).parent / spec).as_posix()
            visit(_normalize(dep))
        order.append(rel)

    visit(entry)
    return order


def _normalize(rel: str) -> str:
    parts: list[str] = []
    for p in rel.split("/"):
        if p == "..":
            parts.pop()
        elif p not in (".", ""):
            parts.append(p)
    return "/".join(parts)


def entry_script(closure: list[str]) -> str:
    """dist/embed.js: imports every module of the closure at once (no request waterfall), the
    define-later flag first."""
    rest = [m for m in closure if m != FIRST]
    lines = [
        '// Contention embed: <script type="module" src=".../embed.js"></script>, then',
        '// <contention-sim preset="cache-scan" seed="7"></contention-sim>. See docs/embedding.md.',
        f'import "./static/{FIRST}";',
        *(f'import "./static/{m}";' for m in rest),
        "",
    ]
    return "\n".join(lines)


def gzip_sizes(out: Path) -> dict[str, Any]:
    """Raw and gzip -9 bytes of what a page with one embed loads before Pyodide: embed.js, the
    modules it imports and the styles the element links (not the worker, Pyodide or sims.zip)."""
    files = ["embed.js", *(f"static/{m}" for m in module_closure(out / "static"))]
    css = [f"static/{c}" for c in SHADOW_CSS]
    per = {f: (len(b := (out / f).read_bytes()), len(gzip.compress(b, 9, mtime=0))) for f in files + css}
    js_gz = sum(per[f][1] for f in files)
    css_gz = sum(per[f][1] for f in css)
    return {
        "files": {f: {"raw": r, "gzip": g} for f, (r, g) in per.items()},
        "js_gzip": js_gz,
        "css_gzip": css_gz,
        "total_gzip": js_gz + css_gz,
        "budget_gzip": BUDGET_GZIP,
    }


def build_embeds(out: Path, env, presets: list, metas: dict[str, dict], common: dict[str, Any]) -> None:
    """Write the embed entry point, the iframe pages, the example post and docs/embedding.md
    (into ``out`` only)."""
    out = Path(out)
    for sub in ("embed", "examples"):
        shutil.rmtree(out / sub, ignore_errors=True)
    closure = module_closure(out / "static")
    (out / "embed.js").write_text(entry_script(closure), encoding="utf-8")
    page = env.get_template("embed.html")
    for p in presets:
        _write(out / "embed" / p.name / "index.html", page.render(root="../../", preset=p, meta=metas.get(p.name, {})))
    _write(
        out / "examples" / "blog-post.html", env.get_template("examples/blog-post.html").render(embed_src="../embed.js")
    )
    _write(out / "docs" / "embedding.md", render_doc(env, presets, common))


def render_doc(env, presets: list, common: dict[str, Any]) -> str:
    """docs/embedding.md: how to embed, with the preset list of this build."""
    return env.get_template("docs/embedding.md").render(presets=presets, budget_kb=BUDGET_GZIP // 1024, **common)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
