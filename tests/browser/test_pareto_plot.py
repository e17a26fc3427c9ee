"""``contention plan --space --plot``: chromium reads the Pareto page's two series, every point
drawn inside the plot, and the page asks for nothing (sweep/pareto.py)."""

from __future__ import annotations

import pytest

from sweep import pareto

pytestmark = pytest.mark.browser


def _probe(x: int, tput: float, tpot: float, deployment: str = "", ok: bool = True) -> dict:
    config = {"defaults.deployment": deployment, "defaults.replicas": x}
    return {"config": config, "gpus": 2, "ok": ok, "per_seed": [{"throughput_tok_s": tput, "tpot_p50": tpot}]}


def test_the_plot_has_two_series_read_by_the_browser(page):
    probes = [
        _probe(1, 200.0, 0.02),
        _probe(2, 100.0, 0.01),
        _probe(3, 90.0, 0.02, ok=False),
        _probe(4, 600.0, 0.05, "disaggregated"),
        _probe(5, 300.0, 0.03, "disaggregated"),
    ]
    data = pareto.front(probes)
    page.set_content(pareto.page("tiny", data))
    got = page.evaluate(
        """() => {
        const svg = document.querySelector('svg').getBoundingClientRect();
        const out = {};
        for (const g of document.querySelectorAll('g.series')) {
          const pts = [...g.querySelectorAll('circle')].map((c) => {
            const r = c.getBoundingClientRect();
            return {x: +c.dataset.x, inside: r.left >= svg.left && r.right <= svg.right && r.top >= svg.top && r.bottom <= svg.bottom};
          });
          out[g.dataset.series] = {points: pts, front: g.querySelectorAll('polyline.front').length};
        }
        return out;
    }"""
    )
    assert set(got) == {"aggregated", "disaggregated"}
    assert len(got["aggregated"]["points"]) == 3 and len(got["disaggregated"]["points"]) == 2
    assert all(p["inside"] for s in got.values() for p in s["points"])
    assert got["aggregated"]["front"] == 1 and got["disaggregated"]["front"] == 1
    assert not page.errors
