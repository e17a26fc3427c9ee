"""Shared fixtures: the repo root and the Pyodide-under-Node runner. Marks the tests that need more
than CPython (``pyodide``, ``triton``; ``browser`` is set by its modules) so that ``make check``
can leave them out; ``make test`` runs everything."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
SESSION_START = time.time()  # before any build of the session (tests/test_sitebuild.py)

# Property tests draw the same examples on every machine (a seed from each test's own hash): a
# failure CI meets is one this checkout meets too, and replays from the test alone. Set
# HYPOTHESIS_PROFILE=explore to draw fresh examples (and keep failures in .hypothesis/).
settings.register_profile("repro", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repro"))


@pytest.fixture(scope="session")
def session_start() -> float:
    """When this test process imported its conftest: before anything of the session was built."""
    return SESSION_START


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The built site, built once per test session: a build runs every preset for its poster and
    takes minutes. Under xdist the workers share one build through a lock in the run's common
    temporary folder. ``CONTENTION_TEST_SITE=DIR`` uses a site already built there (for a quick
    loop over one browser test; ``make test`` never sets it)."""
    import sitebuild

    if not pyodide_available():
        pytest.fail("Pyodide is not installed: run `npm ci` (make test does)")
    given = os.environ.get("CONTENTION_TEST_SITE")
    if given:
        return Path(given)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return sitebuild.build(tmp_path_factory.mktemp("site") / "dist")
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent  # one folder per run, common to its workers
    dist = shared / "site" / "dist"
    with FileLock(str(shared / "site.lock")):
        if not (dist / sitebuild.STAMP).is_file():
            sitebuild.build(dist)
    return dist


def pyodide_available() -> bool:
    return shutil.which("node") is not None and (ROOT / "node_modules" / "pyodide" / "pyodide.mjs").exists()


def run_in_pyodide(jobs: list[dict], tmp_path: Path, timeout: float = 1800, snapshot: Path | None = None) -> dict:
    """Run ``api.run`` jobs in Pyodide under Node; returns the runner's JSON report. With
    ``snapshot`` (sitebuild/snapshot.mjs's, made from the same archive) Python starts from it."""
    import sitebuild

    archive = tmp_path / "sims.zip"
    sitebuild.pack_python(archive)
    jobs_file = tmp_path / "jobs.json"
    jobs_file.write_text(json.dumps(jobs))
    proc = subprocess.run(
        ["node", str(ROOT / "tests" / "node" / "pyodide_run.mjs"), str(archive), str(jobs_file)]
        + ([str(snapshot)] if snapshot else []),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    if proc.returncode != 0:
        raise AssertionError(f"node runner failed ({proc.returncode}): {proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


@pytest.fixture
def pyodide_runner(tmp_path):
    if not pyodide_available():
        pytest.fail("Pyodide is not installed: run `npm ci` (make test does)")
    return lambda jobs, snapshot=None: run_in_pyodide(jobs, tmp_path, snapshot=snapshot)


def _sample_for_check(items) -> None:
    """A test over many presets or seeds runs them all in ``make test``; ``make check`` keeps a
    sample and marks the others ``slow``. ``every_preset("arg")``: the first preset of each topic it
    is given; ``every_concept("arg")``: the first concept ("topic/name") of each topic;
    ``every_seed("arg")``: the first seed, for each value of the other parameters."""
    from sims.core import presets

    topics: dict[str, str] = {}
    seen: set[tuple] = set()
    for item in items:
        for kind in ("every_preset", "every_concept", "every_seed"):
            mark = item.get_closest_marker(kind)
            if mark is None:
                continue
            arg = mark.args[0]
            params = item.callspec.params
            others = tuple(sorted((k, repr(v)) for k, v in params.items() if k != arg))
            group = None
            if kind == "every_preset":
                if params[arg] not in topics:
                    topics[params[arg]] = presets.load(params[arg]).topic
                group = topics[params[arg]]
            elif kind == "every_concept":
                group = params[arg].split("/")[0]
            key = (item.module.__name__, item.originalname, kind, group, others)
            if key in seen:
                item.add_marker(pytest.mark.slow)
            seen.add(key)


def pytest_collection_modifyitems(config, items):
    gpu_dir = ROOT / "tests" / "gpu"
    _sample_for_check(items)
    for item in items:
        if "pyodide_runner" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.pyodide)
        if gpu_dir in Path(item.fspath).parents:
            item.add_marker(pytest.mark.triton)
