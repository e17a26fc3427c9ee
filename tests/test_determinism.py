"""Determinism is a contract: every preset gives the same stream hash and the same metrics in
CPython and in Pyodide (Python 3.14, under Node, loaded from node_modules)."""

from __future__ import annotations

import json

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
