"""The Pareto front of a deployment search (AIConfigurator's picture): tokens/s per GPU, what a
configuration earns for its bill, against tokens/s per user, how fast each user's reply streams
(1 / TPOT). Aggregated (one engine does prefill and decode) and disaggregated configurations are
two series. ``--plot F.html`` writes it as one self-contained page: inline SVG, no script, nothing
loaded from anywhere."""

from __future__ import annotations

import html
from pathlib import Path

from sweep.deploy import mean_of

SERIES = ("aggregated", "disaggregated")
COLORS = {"aggregated": "#1f77b4", "disaggregated": "#d62728"}


def point(probe: dict) -> dict | None:
    """One configuration's point, from its seeds' means; None when it produced no tokens."""
    tput = mean_of(s.get("throughput_tok_s") for s in probe["per_seed"])
    tpot = mean_of(s.get("tpot_p50") for s in probe["per_seed"])
    if not tput or not tpot or not probe["gpus"]:
        return None
    deployment = next((v for k, v in probe["config"].items() if k.endswith("deployment")), "")
    return {
        "series": "disaggregated" if deployment == "disaggregated" else "aggregated",
        "x": tput / probe["gpus"],  # tokens/s per GPU
        "y": 1.0 / tpot,  # tokens/s per user
        "ok": probe["ok"],
        "config": probe["config"],
    }


def front(probes: list[dict]) -> dict:
    """``{series: {"points": [...], "front": [...]}}``: every point, and those no other point of
    the series beats on both axes, by tokens/s per GPU."""
    out = {s: {"points": [], "front": []} for s in SERIES}
    for p in probes:
        pt = point(p)
        if pt is not None:
            out[pt["series"]]["points"].append(pt)
    for s in SERIES:
        pts = out[s]["points"]
        best = [p for p in pts if not any(q["x"] >= p["x"] and q["y"] >= p["y"] and q != p for q in pts)]
        out[s]["front"] = sorted(best, key=lambda p: p["x"])
    return out


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1.0
    while mag > raw:
        mag /= 10
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = (lo // step) * step
    return [first + k * step for k in range(int((hi - first) / step) + 2) if first + k * step <= hi + step]


def svg(data: dict, width: int = 640, height: int = 420) -> str:
    pts = [p for s in SERIES for p in data[s]["points"]]
    left, right, top, bottom = 70, 20, 20, 50
    xs = _ticks(0.0, max((p["x"] for p in pts), default=1.0))
    ys = _ticks(0.0, max((p["y"] for p in pts), default=1.0))
    sx = (width - left - right) / (xs[-1] or 1.0)
    sy = (height - top - bottom) / (ys[-1] or 1.0)

    def at(x: float, y: float) -> tuple[float, float]:
        return left + x * sx, height - bottom - y * sy

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
    ]
    for t in xs:
        x, _ = at(t, 0)
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}" stroke="#eee"/>')
        parts.append(f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle" font-size="11">{t:g}</text>')
    for t in ys:
        _, y = at(0, t)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{t:g}</text>')
    parts.append(
        f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle" font-size="12">'
        "tokens/s per GPU</text>"
    )
    parts.append(
        f'<text transform="translate(16 {(top + height - bottom) / 2}) rotate(-90)" text-anchor="middle" '
        'font-size="12">tokens/s per user (1 / TPOT)</text>'
    )
    for s in SERIES:
        color = COLORS[s]
        parts.append(f'<g class="series" data-series="{s}">')
        line = " ".join("{:.1f},{:.1f}".format(*at(p["x"], p["y"])) for p in data[s]["front"])
        if line:
            parts.append(f'<polyline class="front" points="{line}" fill="none" stroke="{color}" stroke-width="2"/>')
        for p in data[s]["points"]:
            x, y = at(p["x"], p["y"])
            label = html.escape(", ".join(f"{k.rpartition('.')[2]}={v}" for k, v in p["config"].items()))
            fill = color if p["ok"] else "white"
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{fill}" stroke="{color}" '
                f'data-x="{p["x"]:.6g}" data-y="{p["y"]:.6g}"><title>{label}'
                f"{'' if p['ok'] else ' (misses a target)'}</title></circle>"
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def page(title: str, data: dict) -> str:
    counts = ", ".join(f"{s}: {len(data[s]['points'])} configurations" for s in SERIES)
    legend = " ".join(f'<span style="color:{COLORS[s]}">&#9679; {s}</span>' for s in SERIES)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{html.escape(title)}</title></head>"
        '<body style="font-family: system-ui, sans-serif; margin: 1.5em">'
        f'<h1 style="font-size: 1.2em">{html.escape(title)}: the Pareto front</h1>'
        f"<p>Each point is one configuration, the mean of its seeds; filled points meet every target. "
        f"The line joins the configurations no other of its series beats on both axes. {legend} ({counts})</p>"
        f"{svg(data)}</body></html>\n"
    )


def write(path: Path, title: str, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(page(title, data), encoding="utf-8")
    tmp.replace(path)
