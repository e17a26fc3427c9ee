"""``--plot out.html``: one self-contained page, each metric against the swept parameter, one line
per panel with its confidence band. uPlot is inlined from the checkout's node_modules (or a built
site's vendor folder): the page loads nothing from anywhere."""

from __future__ import annotations

import html
import json
from pathlib import Path

from sweep.grid import SweepError

ROOT = Path(__file__).resolve().parents[1]
_UPLOT = ("uPlot.iife.min.js", "uPlot.min.css")


def _uplot() -> tuple[str, str]:
    for folder in (ROOT / "node_modules" / "uplot" / "dist", ROOT / "dist" / "static" / "vendor" / "uplot" / "dist"):
        js, css = (folder / n for n in _UPLOT)
        if js.exists() and css.exists():
            return js.read_text(encoding="utf-8"), css.read_text(encoding="utf-8")
    raise SweepError("--plot needs uPlot: run `npm ci` in the checkout (make serve and make test do)")


def figures(summary: list[dict], key: str, metrics: list[str]) -> list[dict]:
    """For each metric: x values and, per line (panel plus any other swept keys), mean/lo/hi."""
    xs = sorted({s["params"][key] for s in summary}, key=lambda v: (isinstance(v, str), v))
    figs = []
    for m in metrics:
        lines: dict[str, dict] = {}
        for s in summary:
            others = ", ".join(f"{k}={v}" for k, v in s["params"].items() if k != key)
            label = s["panel"] + (f" ({others})" if others else "")
            line = lines.setdefault(
                label, {"label": label, "mean": [None] * len(xs), "lo": [None] * len(xs), "hi": [None] * len(xs)}
            )
            ci = s["metrics"].get(m)
            if ci is None:
                continue
            i = xs.index(s["params"][key])
            line["mean"][i], line["lo"][i], line["hi"][i] = ci["mean"], ci["lo"], ci["hi"]
        figs.append({"metric": m, "x": xs, "lines": list(lines.values())})
    return figs


def page(title: str, summary: list[dict], key: str, metrics: list[str]) -> str:
    """The whole page as text (``contention serve --sweep`` serves it; ``write`` saves it)."""
    js, css = _uplot()
    data = json.dumps({"key": key, "figures": figures(summary, key, metrics)})
    return TEMPLATE.format(title=html.escape(title), css=css, js=js, data=data.replace("</", "<\\/"))


def from_rows(rows: list[dict], title: str) -> str:
    """The page for a finished results file: the first swept key on x, the first four metrics."""
    from sweep import run

    keys = list(rows[0]["params"]) if rows else []
    if not keys:
        raise SweepError(f"{title}: no swept parameters to plot")
    summ = run.summary(rows)
    metrics = [m for m in summ[0]["metrics"]][:4]
    return page(f"{title}: sweep over {', '.join(keys)}", summ, keys[0], metrics)


def write(path: Path, title: str, summary: list[dict], key: str, metrics: list[str]) -> None:
    text = page(title, summary, key, metrics)
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{css}
body {{ font: 14px system-ui, sans-serif; margin: 1.5rem; color: #222; }}
figure {{ margin: 0 0 2rem; }} figcaption {{ font-weight: 600; margin-bottom: .3rem; }}
</style></head>
<body><h1>{title}</h1>
<p>Each point is the mean over seeds; the band is its 95% t interval (two-sided).</p>
<div id="figs"></div>
<script>{js}</script>
<script>
const DATA = {data};
// Okabe-Ito: colour-blind safe, and no two lines of a figure share a colour (cycles past 8 with dashes)
const COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
for (const fig of DATA.figures) {{
  const el = document.createElement("figure");
  el.innerHTML = `<figcaption>${{fig.metric}} against ${{DATA.key}}</figcaption>`;
  document.getElementById("figs").append(el);
  const isNum = fig.x.every((v) => typeof v === "number");
  const xs = isNum ? fig.x : fig.x.map((_, i) => i);
  const data = [xs];
  const series = [{{ label: DATA.key }}];
  const bands = [];
  fig.lines.forEach((line, k) => {{
    const c = COLOURS[k % COLOURS.length];
    const dash = k >= COLOURS.length ? [6, 4] : undefined;
    data.push(line.mean, line.hi, line.lo);
    const at = data.length - 3;
    series.push({{ label: line.label, stroke: c, width: 2, dash, points: {{ show: true }} }});
    series.push({{ label: line.label + " hi", stroke: c + "55", width: 1, points: {{ show: false }} }});
    series.push({{ label: line.label + " lo", stroke: c + "55", width: 1, points: {{ show: false }} }});
    bands.push({{ series: [at + 1, at + 2], fill: c + "22" }});
  }});
  new uPlot({{
    width: Math.min(900, window.innerWidth - 40), height: 320, series, bands,
    scales: {{ x: {{ time: false }} }},
    axes: [
      {{ label: DATA.key, values: isNum ? undefined : (u, ticks) => ticks.map((t) => fig.x[t] ?? "") }},
      {{ label: fig.metric, size: 70 }},
    ],
  }}, data, el);
}}
</script></body></html>
"""
