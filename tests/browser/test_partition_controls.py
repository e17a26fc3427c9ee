"""Faults drawn on the consensus view in chromium (web/static/js/faults.js): a line dragged across
the servers partitions them, the link reproduces it in a fresh page, a click crashes a server,
Heal joins everything again, and a link naming a server that does not exist is a readable error."""

from __future__ import annotations

import json

import pytest
from conftest import screenshot, sim_eval, wait_live

from sims.core import api

pytestmark = pytest.mark.browser

PRESET = "consensus-leader-partition"
CANVAS = "figure[data-panel=raft] canvas"


def views(page) -> dict:
    return sim_eval(page, "return Object.fromEntries(sim.panelNames.map((n) => [n, sim.frame.panels[n].view]));")


def targets(page) -> list[dict]:
    """Where the raft panel drew its servers, in page pixels."""
    page.wait_for_function(f"() => document.querySelector('{CANVAS}')?.csTargets?.length === 5")
    return page.evaluate(
        f"""() => {{ const c = document.querySelector('{CANVAS}'); const r = c.getBoundingClientRect();
        return c.csTargets.map((t) => ({{ id: t.id, x: r.left + t.x, y: r.top + t.y }})); }}"""
    )


def wait_actions(page, n: int) -> None:
    page.wait_for_function(f"() => document.querySelector('contention-sim').actions.length === {n}")
    page.wait_for_function("() => { const s = document.querySelector('contention-sim'); return s.channel.idle; }")


def test_drag_a_partition_link_it_click_to_crash_and_heal(page, server):
    page.goto(f"{server}play/{PRESET}/#seed=3&speed=1&t=1")
    wait_live(page)
    assert sim_eval(page, "return sim.dataset.state;") == "paused"
    assert page.locator(CANVAS).get_attribute("data-faults") == "draw"
    pos = {t["id"]: t for t in targets(page)}
    # the page says what the servers take, and offers one way to heal
    assert "drag a line across them" in page.locator(".cs-hint").inner_text()
    assert page.locator(".cs-extras button", has_text="Heal").count() == 1
    # a line through the midpoints of the edges S5-S1 and S2-S3 cuts {0, 1} from {2, 3, 4}
    a = ((pos[4]["x"] + pos[0]["x"]) / 2, (pos[4]["y"] + pos[0]["y"]) / 2)
    b = ((pos[1]["x"] + pos[2]["x"]) / 2, (pos[1]["y"] + pos[2]["y"]) / 2)
    page.mouse.move(*a)
    page.mouse.down()
    page.mouse.move(*b, steps=8)
    page.wait_for_function(f"() => document.querySelector('{CANVAS}').csDrag")
    screenshot(page, "partition-controls-drag")  # the line being drawn (test-artifacts/)
    page.mouse.up()
    wait_actions(page, 1)
    assert sim_eval(page, "return sim.actions;") == [["p0.1-2.3.4", 1]]
    t = sim_eval(page, "return sim.t;")
    for name, v in views(page).items():
        assert v["partitioned"] and [nd["group"] for nd in v["nodes"]] == [0, 0, 1, 1, 1], name
    after = sim_eval(page, "return await sim.snapshot();")
    plain = json.loads(json.dumps(api.run(PRESET, 3, t, list(after["panels"]))["panels"]))
    assert after["panels"] != plain  # the drawn partition changed the run
    screenshot(page, "partition-controls-cut")
    # the link reproduces it in a fresh page
    page.click("[data-copy-link]")
    url = page.url
    assert "actions=p0.1-2.3.4@1" in url, url
    page.goto("about:blank")
    page.goto(url)
    wait_live(page)
    assert sim_eval(page, "return await sim.snapshot();") == after
    assert all(v["partitioned"] for v in views(page).values())
    # a click on S3 (node 2) crashes it, a second click restarts it
    pos = {t["id"]: t for t in targets(page)}
    page.mouse.click(pos[2]["x"], pos[2]["y"])
    wait_actions(page, 2)
    assert sim_eval(page, "return sim.actions.map(([k]) => k);") == ["p0.1-2.3.4", "c2"]
    assert all(not v["nodes"][2]["up"] for v in views(page).values())
    page.wait_for_function(f"() => document.querySelector('{CANVAS}').csTargets[2].up === false")
    page.mouse.click(pos[2]["x"], pos[2]["y"])
    wait_actions(page, 3)
    assert all(v["nodes"][2]["up"] for v in views(page).values())
    # Heal
    page.click(".cs-heal")
    wait_actions(page, 4)
    assert sim_eval(page, "return sim.actions.map(([k]) => k);") == ["p0.1-2.3.4", "c2", "r2", "h"]
    assert not any(v["partitioned"] for v in views(page).values())
    assert not page.errors, page.errors


def test_a_link_to_a_server_that_does_not_exist_is_a_readable_error(page, server):
    page.goto(f"{server}play/{PRESET}/#seed=3&t=1&actions=c9@0.5")
    wait_live(page)
    s = sim_eval(page, "return {state: sim.dataset.state, error: sim.dataset.error || ''};")
    assert s["state"] == "error" and "node 9 does not exist" in s["error"], s
