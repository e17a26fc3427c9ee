"""contention sweep and plan: grids checked before anything runs, rows that depend only on
(preset, params, seed), a resume that recomputes nothing, Ray equal to the local pool, and a
capacity plan with an answer derived by hand. Sizes are bounded and refused at once, jobs are
made as they are run, and the pool's workers die with the sweep."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sims.core import presets
from sweep import cells, executors, grid, plan, run, stats

ROOT = Path(__file__).resolve().parents[1]

# A loop of 20 keys at 100 references/s: LRU hits nothing below 20 slots and everything but the
# 20 first references from 20 slots on. So the smallest size with hit_ratio > 0.5 is exactly 20.
LOOP = """
name = "loop-plan"
topic = "cache"
title = "t"
watch_for = "w"
seed = 3
duration = 10.0
[workload]
kind = "loop"
rate = 100.0
n = 20
[[panels]]
policy = "lru"
size = 5
[[panels]]
policy = "fifo"
size = 5
"""


@pytest.fixture
def loop_preset(tmp_path):
    path = tmp_path / "loop-plan.toml"
    path.write_text(LOOP)
    return presets.load_file(path)


def main(*argv: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "sims", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_ranges_are_decimal_and_inclusive():
    g = grid.parse_grid(["workload.rate=0.1:0.5:0.1", "defaults.replicas=1:4", "workload.kind=a,b"])
    assert g["workload.rate"] == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert g["defaults.replicas"] == [1, 2, 3, 4]
    assert g["workload.kind"] == ["a", "b"]
    assert len(grid.cells(g)) == 5 * 4 * 2


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--grid", "workload.nope=1,2"], "workload.nope"),
        (["--grid", "workload.rate=fast"], "workload.rate"),
        (["--grid", "panels.zzz.size=1"], "no panel 'zzz'"),
        (["--grid", "size=1"], "workload.X, defaults.X or panels.NAME.X"),
        (["--grid", "workload.rate="], "no values"),
        (["--grid", "workload.rate=1:3:0"], "STEP"),
        (["--grid", "workload.rate=1:1000", "--max-cells", "10"], "--yes"),
        (["--grid", "workload.rate=1,2", "--seeds", "0"], "--seeds"),
        (["--grid", "workload.rate=1,2", "--out", "/nonexistent/x.jsonl"], "does not exist"),
        (["--grid", "workload.rate=1,2", "--out", "x.txt"], "suffix"),
        (["--seeds", "100000000"], "--seeds"),
        (["--grid", "workload.rate=1:1000", "--grid", "panels.lru.size=1:1000", "--yes"], "--grid"),
        (["--grid", "panels.lru.size=1:1000", "--seeds", "1000"], "--seeds 1000 over 1000 cells"),
    ],
)
def test_bad_input_is_refused_before_anything_runs(args, needle):
    code, out, err = main("sweep", "cache-zipf", *args)
    assert code == 2, err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "spec, seeds, needle",
    [
        ({}, 100_000_000, "--seeds"),
        ({"panels.lru.size": list(range(1, 1001)), "workload.rate": list(range(1, 1001))}, 1, "--grid"),
        ({"panels.lru.size": list(range(1, 1001))}, 1000, "--seeds 1000 over 1000 cells"),
        ({"panels.lru.size": list(range(1, 2001))}, 1, "--max-cells 1000"),
    ],
)
def test_a_sweep_too_large_is_refused_within_a_second(loop_preset, spec, seeds, needle):
    def never(jobs):
        raise AssertionError("nothing may run")

    t0 = time.monotonic()
    with pytest.raises(grid.SweepError, match=re.escape(needle)):
        run.run(loop_preset, spec, seeds, None, never, yes=needle != "--max-cells 1000")
    assert time.monotonic() - t0 < 1.0


def test_jobs_are_made_as_they_are_run(loop_preset, monkeypatch):
    made = []

    class Counted(cells.Job):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self.seed)

    monkeypatch.setattr(cells, "Job", Counted)

    class Enough(Exception):
        pass

    def first_two(jobs):
        for i, job in enumerate(jobs):
            if i == 2:
                raise Enough
            yield cells.run_job(job)

    with pytest.raises(Enough):
        run.run(loop_preset, {}, 5000, None, first_two)
    assert len(made) == 3  # not 5,000 jobs up front


def test_the_pool_asks_for_jobs_only_as_workers_free_up(loop_preset):
    pulled = []

    def source():
        for job in cells.jobs(loop_preset, [{}], range(100), None):
            pulled.append(job.seed)
            yield job

    results = executors.local(source(), 2)
    next(results)
    assert len(pulled) <= 5  # twice the workers in flight, and the one being submitted
    results.close()


def test_no_grid_is_the_preset_itself_over_the_seeds(loop_preset):
    rows = run.run(loop_preset, {}, 3, ["lru"], executors.pick(None, 1))
    assert [(r["params"], r["seed"], r["panel"]) for r in rows] == [({}, 3, "lru"), ({}, 4, "lru"), ({}, 5, "lru")]


def test_a_panel_parameter_reaches_only_that_panel(loop_preset):
    rows = run.run(loop_preset, {"panels.lru.size": [5, 20]}, 1, None, executors.pick(None, 1))
    by = {(r["params"]["panels.lru.size"], r["panel"]): r["metrics"]["hit_ratio"] for r in rows}
    assert by[(5, "lru")] == 0.0 and by[(20, "lru")] == pytest.approx(0.98)
    assert by[(5, "fifo")] == by[(20, "fifo")] == 0.0  # fifo keeps its own 5 slots


def test_rows_do_not_depend_on_the_executor_or_the_order(loop_preset):
    g = {"panels.lru.size": [10, 20, 30]}
    one = run.run(loop_preset, g, 3, None, executors.pick(None, 1))
    pool = run.run(loop_preset, g, 3, None, executors.pick(None, 2))

    def backwards(jobs):
        yield from (cells.run_job(j) for j in reversed(list(jobs)))

    assert one == pool == run.run(loop_preset, g, 3, None, backwards)
    assert [(r["params"]["panels.lru.size"], r["seed"], r["panel"]) for r in one][:4] == [
        (10, 3, "lru"),
        (10, 3, "fifo"),
        (10, 4, "lru"),
        (10, 4, "fifo"),
    ]
    assert all(set(r) == {"params", "seed", "panel", "metrics", "error"} for r in one)


def test_a_failing_cell_is_recorded_and_the_sweep_goes_on(loop_preset, monkeypatch):
    real = cells.Scenario

    def flaky(preset, seed, **kw):
        if seed == 4:
            raise RuntimeError("boom")
        return real(preset, seed, **kw)

    monkeypatch.setattr(cells, "Scenario", flaky)
    rows = run.run(loop_preset, {"panels.lru.size": [20]}, 3, None, executors.pick(None, 1))
    errs = [r for r in rows if r["error"]]
    assert [r["seed"] for r in errs] == [4, 4] and "boom" in errs[0]["error"]
    assert all(r["metrics"] for r in rows if not r["error"])


@pytest.mark.slow  # a real sweep process killed halfway
def test_resume_after_a_kill_recomputes_nothing(tmp_path):
    out = tmp_path / "res.jsonl"
    journal = out.with_name(out.name + ".journal")
    args = [sys.executable, "-m", "sims", "sweep", "cache-zipf", "--grid", "panels.lru.size=50:400:50", "--seeds", "4"]
    args += ["--workers", "1", "--panels", "lru", "--out", str(out)]
    proc = subprocess.Popen(args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= 5:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    kept = {json.loads(line)["key"] for line in journal.read_text().splitlines() if line.endswith("}")}
    assert 5 <= len(kept) < 32, "kill the sweep halfway"
    assert not out.exists()

    preset = presets.load("cache-zipf")
    g = {"panels.lru.size": list(range(50, 401, 50))}
    asked: list[str] = []

    def recording(jobs):
        for job in jobs:
            asked.append(job.key())
            yield cells.run_job(job)

    rows = run.run(preset, g, 4, ["lru"], recording, out=out, resume=True)
    everything = {j.key() for j in cells.jobs(preset, [c.as_dict() for c in grid.cells(g)], [7, 8, 9, 10], ["lru"])}
    assert set(asked) == everything - kept and not set(asked) & kept
    assert rows == run.run(preset, g, 4, ["lru"], executors.pick(None, 1))
    assert [json.loads(line) for line in out.read_text().splitlines()] == rows
    assert not journal.exists()


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.slow  # a real sweep process, killed
def test_the_pool_workers_die_with_a_killed_sweep(tmp_path):
    out = tmp_path / "res.jsonl"
    journal = out.with_name(out.name + ".journal")
    args = [sys.executable, "-m", "sims", "sweep", "cache-zipf", "--grid", "panels.lru.size=50:400:50", "--seeds", "4"]
    args += ["--workers", "2", "--panels", "lru", "--out", str(out)]
    proc = subprocess.Popen(args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (journal.exists() and journal.read_text().count("\n") >= 1):
            time.sleep(0.05)
        workers = children(proc.pid)
        assert len(workers) >= 2, workers
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 5
        while any(alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in workers if alive(p)], "pool workers outlived the sweep"
    finally:
        proc.kill()
        for pid in workers:  # never leave one behind, even when the test fails
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.slow  # starts a local Ray cluster
def test_ray_gives_the_local_pool_rows(loop_preset):
    ray = pytest.importorskip("ray", reason="ray is not installed here (make test installs the ray extra)")
    g = {"panels.lru.size": [10, 20], "workload.rate": [50.0, 100.0]}
    local = run.run(loop_preset, g, 2, None, executors.pick(None, 2))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        assert run.run(loop_preset, g, 2, None, executors.pick(True, 2)) == local
    finally:
        ray.shutdown()


def test_plan_finds_the_size_derived_by_hand(loop_preset):
    targets = [plan.parse_target("hit_ratio>0.5")]
    result = plan.plan(loop_preset, "panels.lru.size=1:40", targets, 3, "lru", executors.pick(None, 1))
    assert result["feasible"] and result["answer"] == 20
    assert result["margins"]["hit_ratio>0.5"] == pytest.approx(0.98 - 0.5)
    probed = {r["value"]: r["ok"] for r in result["runs"]}
    assert probed[20] and not probed.get(19, False)
    assert len(result["runs"]) <= 7  # bisection, not a scan of 40 values


def test_plan_refuses_too_many_seeds_at_once(loop_preset):
    def never(jobs):
        raise AssertionError("nothing may run")

    t0 = time.monotonic()
    with pytest.raises(grid.SweepError, match="--seeds"):
        plan.plan(loop_preset, "panels.lru.size=1:40", [plan.parse_target("hit_ratio>0.5")], 100_000_000, "lru", never)
    assert time.monotonic() - t0 < 1.0


def test_plan_says_plainly_when_nothing_meets_the_target(loop_preset):
    targets = [plan.parse_target("hit_ratio>0.5")]
    result = plan.plan(loop_preset, "panels.lru.size=1:10", targets, 3, "lru", executors.pick(None, 1))
    assert result == result | {"answer": None, "feasible": False}


def test_plan_cli_json_shape(tmp_path):
    path = tmp_path / "loop-plan.toml"
    path.write_text(LOOP)
    code, out, err = main(
        "plan",
        str(path),
        "--vary",
        "panels.lru.size=1:40",
        "--target",
        "hit_ratio>0.5",
        "--seeds",
        "2",
        "--panel",
        "lru",
        "--workers",
        "1",
        "--json",
    )
    assert code == 0, err
    assert {"answer", "feasible", "margins", "runs"} <= set(json.loads(out)) and json.loads(out)["answer"] == 20
    code, out, err = main(
        "plan", str(path), "--vary", "panels.lru.size=1:40", "--target", "hit_ratio~1", "--panel", "lru"
    )
    assert code == 2 and "--target" in err


def test_t_interval_matches_the_tables():
    assert stats.t_quantile(0.975, 4) == pytest.approx(2.7764, abs=1e-4)
    assert stats.t_quantile(0.975, 29) == pytest.approx(2.0452, abs=1e-4)
    ci = stats.mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert ci["method"] == "t" and ci["mean"] == 3.0
    assert ci["hi"] - 3.0 == pytest.approx(2.7764 * (2.5**0.5) / 5**0.5, abs=1e-4)


def test_plot_is_self_contained(tmp_path):
    if not (ROOT / "node_modules" / "uplot").exists():
        pytest.skip("npm ci has not run (make test runs it)")
    page = tmp_path / "p.html"
    code, _, err = main(
        "sweep",
        "cache-zipf",
        "--grid",
        "panels.lru.size=50,100",
        "--seeds",
        "2",
        "--workers",
        "1",
        "--panels",
        "lru,arc",
        "--plot",
        str(page),
    )
    assert code == 0, err
    text = page.read_text()
    assert "new uPlot(" in text and "<script src" not in text and "<link" not in text  # nothing to fetch
    assert '"metric": "hit_ratio"' in text


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_csv_and_parquet_hold_the_same_rows(loop_preset, tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow", reason="pyarrow is not installed here (make test installs the parquet extra)")
    out = tmp_path / f"r{suffix}"
    rows = run.run(loop_preset, {"panels.lru.size": [10, 20]}, 2, None, executors.pick(None, 1), out=out)
    if suffix == ".csv":
        import csv

        got = list(csv.DictReader(out.open()))
        assert [(int(r["param.panels.lru.size"]), int(r["seed"]), r["panel"]) for r in got] == [
            (r["params"]["panels.lru.size"], r["seed"], r["panel"]) for r in rows
        ]
        assert [float(r["metric.hit_ratio"]) for r in got] == [r["metrics"]["hit_ratio"] for r in rows]
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(out).to_pylist()
        assert [t["metric.hit_ratio"] for t in table] == [r["metrics"]["hit_ratio"] for r in rows]
