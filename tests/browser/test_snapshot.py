"""The worker starts Python from the build's memory snapshot (sitebuild/snapshot.py) when its
manifest matches, and the ordinary way otherwise: a stale manifest, a missing or broken snapshot
each fall back with no page error, and both paths give the same run."""

from __future__ import annotations

import json

import pytest
from conftest import sim_eval, wait_live

from sims.core import api

PRESET, T = "ratelimit-burst", 6.0


def _has_snapshot(site) -> bool:
    return bool(json.loads((site / "static" / "py" / "snapshot.json").read_text())["file"])


def live_run(page, server: str) -> tuple[str, dict]:
    """Open the preset, wait until Python is live, and return how it started and its metrics at T."""
    page.goto(f"{server}play/{PRESET}/")
    wait_live(page)
    got = sim_eval(
        page,
        "sim.pause(); await sim.seek(arg); return {start: sim.worker.info.start, state: sim.dataset.state,"
        " error: sim.dataset.error || null, snap: await sim.snapshot()};",
        T,
    )
    assert got["state"] != "error", got
    assert not page.errors, page.errors
    return got["start"], got["snap"]


def expected(panels) -> dict:
    """``contention run`` of the page's panels to T, through JSON as the page sees it."""
    return {"t": T, "panels": json.loads(json.dumps(api.run(PRESET, None, T, list(panels))["panels"]))}


def test_the_page_goes_live_from_the_snapshot(page, server, site):
    if not _has_snapshot(site):
        pytest.skip("this build has no snapshot (no node, or CONTENTION_NO_SNAPSHOT)")
    start, snap = live_run(page, server)
    assert start == "snapshot"
    assert snap == expected(snap["panels"])


def _serve_instead(context, pattern: str, edit) -> None:
    """Serve ``edit(response)``'s (status, body) for requests matching ``pattern``."""

    def handle(route) -> None:
        status, body = edit(route.fetch())
        route.fulfill(status=status, body=body, headers={"content-type": "application/octet-stream"})

    context.route(pattern, handle)


def _stale(response) -> tuple[int, bytes]:
    manifest = response.json()
    manifest["sims_sha256"] = "0" * 64  # made from another sims.zip
    return 200, json.dumps(manifest).encode()


def _another_pyodide(response) -> tuple[int, bytes]:
    return 200, json.dumps({**response.json(), "pyodide": "0.0.0"}).encode()


def _missing(response) -> tuple[int, bytes]:
    return 404, b""


def _broken(response) -> tuple[int, bytes]:
    return 200, b"\x1f\x8b not a snapshot"  # gzip's magic, then garbage: the restore throws


@pytest.mark.parametrize(
    "pattern,edit",
    [
        ("**/py/snapshot.json", _stale),
        ("**/py/snapshot.json", _another_pyodide),
        ("**/py/snapshot.bin.gz", _missing),
        ("**/py/snapshot.bin.gz", _broken),
    ],
    ids=["stale-manifest", "another-pyodide", "missing-snapshot", "broken-snapshot"],
)
def test_without_a_usable_snapshot_python_starts_fresh_and_runs_the_same(context, server, site, pattern, edit):
    if not _has_snapshot(site):
        pytest.skip("this build has no snapshot (no node, or CONTENTION_NO_SNAPSHOT)")
    _serve_instead(context, pattern, edit)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    start, snap = live_run(page, server)
    assert start == "fresh"
    assert snap == expected(snap["panels"])
