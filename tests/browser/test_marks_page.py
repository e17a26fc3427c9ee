"""The workload's own moments on the charts, in chromium: cache-scan's scans and paging-locality's
phase changes are drawn as marks (ticks over the whole run, labelled rules once zoomed in), and the
chart's data, read from the page, shows what each mark announces: the recent hit ratio drops after
every scan starts, the recent fault rate jumps after every phase change. Virtual time throughout,
so the machine's speed does not matter. Screenshots of the zoomed charts go to test-artifacts/."""

from __future__ import annotations

import pytest
from conftest import screenshot, sim_eval, wait_live

pytestmark = pytest.mark.browser

READ = """
await el.whenLive();
await el.seek(arg.at);
const charts = el.charts;
const drawn = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
charts.flush();
await drawn();
const whole = charts.describe()[0].marks;
charts.zoom(arg.lo, arg.hi);
charts.flush();
await drawn();
return {
  whole,
  zoomed: charts.describe()[0].marks,
  shown: charts.shown,
  window: charts.data.windowSeconds,
  xs: charts.data.xs,
  ys: Object.fromEntries(arg.panels.map((p) => [p, charts.data.values(arg.metric, charts.panels.indexOf(p))])),
};
"""


def _open(page, server, name: str, **arg) -> dict:
    page.goto(f"{server}play/{name}/#panels={','.join(arg['panels'])}&t=0")
    wait_live(page)
    return sim_eval(page, "const el = sim; " + READ, arg)


def _around(r: dict, panel: str, t: float, before: float, after: float) -> tuple[list[float], list[float]]:
    """The panel's values on the chart in (t - before, t] and in [t, t + after]."""
    pts = [(x, y) for x, y in zip(r["xs"], r["ys"][panel], strict=True) if y is not None]
    return [y for x, y in pts if t - before < x <= t], [y for x, y in pts if t <= x <= t + after]


def test_cache_scan_marks_every_scan_and_the_hit_ratio_drops_after_each(page, server):
    r = _open(
        page,
        server,
        "cache-scan",
        at=12.0,
        lo=8.0,
        hi=10.0,
        panels=["lru", "arc"],
        metric="hit_ratio@recent",
    )
    assert r["shown"][0] == "hit_ratio@recent"
    whole = [m for m in r["whole"] if m["kind"] == "workload"]
    assert len(whole) > 200 and {m["label"] for m in whole} == {"scan starts"}
    assert all(m["rule"] == "tick" for m in whole)  # 261 scans over 60 s crowd: ticks, not rules
    scans = [m for m in r["zoomed"] if m["kind"] == "workload" and 8.1 <= m["t"] <= 9.8]
    assert len(scans) >= 7 and all(m["rule"] == "full" for m in scans), scans
    assert any(m["labelled"] for m in scans)
    assert r["window"] < 0.2  # zoomed in, the recent window fits between two scans
    # every policy's hit ratio falls while a scan's never-seen keys pass (the window, 0.15 s, ends
    # past the scan's 0.11 s by 0.2 s): ARC's from the hot set it kept, LRU's from what it reloaded
    for panel, drop in (("arc", 0.15), ("lru", 0.1)):
        drops = 0
        for m in scans:
            hot, scan = _around(r, panel, m["t"], 0.12, 0.2)
            assert hot and scan, m
            drops += min(scan) < max(hot) - drop
        assert drops >= len(scans) - 1, (panel, drops, len(scans))
    screenshot(page, "marks-cache-scan")


def test_paging_locality_marks_every_phase_and_faults_burst_after_each(page, server):
    r = _open(
        page,
        server,
        "paging-locality",
        at=4.0,
        lo=1.0,
        hi=3.0,
        panels=["lru", "lfu"],
        metric="fault_rate@recent",
    )
    assert r["shown"][0] == "fault_rate@recent"
    whole = [m for m in r["whole"] if m["kind"] == "workload"]
    assert len(whole) == 99 and whole[0]["label"] == "phase 2: new working set"
    phases = [m for m in r["zoomed"] if m["kind"] == "workload" and 1.1 <= m["t"] <= 2.9]
    assert len(phases) >= 8 and all(m["rule"] == "full" for m in phases), phases
    assert any(m["labelled"] for m in phases)
    bursts = 0
    for m in phases:
        settled, burst = _around(r, "lru", m["t"], 0.03, 0.06)
        assert settled and burst, m
        bursts += max(burst) > max(settled) + 0.02
    assert bursts >= len(phases) - 1, (bursts, len(phases))
    screenshot(page, "marks-paging-locality")
