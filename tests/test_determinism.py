"""Determinism is a contract: every preset gives the same stream hash and the same metrics in
CPython and in Pyodide (Python 3.14, under Node, loaded from node_modules)."""

from __future__ import annotations

import json
import subprocess

import pytest

from sims.core import api, presets

TOPICS = sorted({p.topic for p in presets.all_presets()})


def _jobs() -> list[dict]:
    jobs = []
    for p in presets.all_presets():
        job = {"preset": p.name, "seed": p.seed, "duration": None}
        if p.ci_duration:
            # a stated prefix of a long preset (at least 10% of it)
            assert p.ci_duration >= 0.1 * p.duration, f"{p.name}: ci_duration below 10% of duration"
            job["duration"] = p.ci_duration
        jobs.append(job)
        if p.topic in ("ratelimit", "cache", "paging"):  # a second seed where runs are cheap
            jobs.append({"preset": p.name, "seed": p.seed + 1, "duration": job["duration"]})
    return jobs


@pytest.mark.parametrize("topic", TOPICS)  # one Pyodide run per topic: `-k queues` checks one
def test_every_preset_matches_between_cpython_and_pyodide(pyodide_runner, topic):
    jobs = [j for j in _jobs() if presets.load(j["preset"]).topic == topic]
    assert jobs, "no presets found"
    report = pyodide_runner(jobs)
    assert report["python"].startswith("3.14"), report["python"]
    mismatches = []
    for job, res in zip(jobs, report["results"], strict=True):
        assert res["ok"], f"{job}: failed in Pyodide: {res.get('error')}"
        expected = json.loads(json.dumps(api.run(job["preset"], job["seed"], job["duration"])))
        if res["result"] != expected:
            mismatches.append((job, expected, res["result"]))
    assert not mismatches, "CPython and Pyodide disagree:\n" + "\n".join(
        f"{j}: cpython={e}\n  pyodide={r}" for j, e, r in mismatches[:3]
    )


def test_pyodide_started_from_the_site_snapshot_matches_cpython(pyodide_runner, tmp_path):
    """The site's worker starts Python from a memory snapshot (sitebuild/snapshot.py): from it, the
    first preset of every topic gives the same stream hash and metrics as in CPython."""
    import sitebuild

    archive, snap = tmp_path / "snap" / "sims.zip", tmp_path / "snap" / "snapshot.bin.gz"
    sitebuild.pack_python(archive)  # the bytes pyodide_runner packs too (a deterministic zip)
    script = sitebuild.ROOT / "sitebuild" / "snapshot.mjs"
    pyodide_dir = sitebuild.ROOT / "node_modules" / "pyodide"
    subprocess.run(["node", str(script), str(pyodide_dir), str(archive), str(snap)], check=True, timeout=600)
    firsts: dict[str, dict] = {}
    for job in _jobs():
        firsts.setdefault(presets.load(job["preset"]).topic, job)
    jobs = list(firsts.values())
    report = pyodide_runner(jobs, snapshot=snap)
    for job, res in zip(jobs, report["results"], strict=True):
        assert res["ok"], f"{job}: failed in Pyodide from the snapshot: {res.get('error')}"
        assert res["result"] == json.loads(json.dumps(api.run(job["preset"], job["seed"], job["duration"]))), job
