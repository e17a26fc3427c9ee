"""Every parameter has an upper bound that fits a tab and a laptop.

Each numeric parameter of every topic, policy and workload declares a maximum (each list a most
number of items), and ``sims.core.budget`` estimates a run's stream, state and CPU before anything
is built. The values that once exploded run in a child process with its memory and CPU capped, so
one that explodes again fails here in seconds instead of taking the machine with it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sims.core import api, budget, presets, registry
from sims.core.params import Param
from sims.core.presets import PresetError
from sims.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ROOT / "sims" / "presets"

# a child that runs the CLI, then reports its exit status, CPU seconds and peak memory
CHILD = """
import json, os, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
cpu = int(os.environ.get("CHILD_CPU", "20"))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
from sims.cli import main
try:
    rc = main(sys.argv[1:])
except SystemExit as exc:
    rc = exc.code
except MemoryError:
    rc = "MemoryError"
use = resource.getrusage(resource.RUSAGE_SELF)
# the peak of this process's own memory: ru_maxrss keeps the parent's across fork and exec (Linux)
with open("/proc/self/status") as f:
    hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
print(json.dumps({"rc": rc, "cpu": use.ru_utime + use.ru_stime, "mb": hwm / 1024}), file=sys.stderr)
"""


def child(*args: str, presets_dir: Path | None = None, cpu: int = 20) -> tuple[object, str, float, float, str]:
    """(exit status, the error line, CPU seconds, peak MB, stdout) of ``contention ARGS`` in a child
    with 3 GiB of address space and ``cpu`` seconds of CPU at most."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), CHILD_CPU=str(cpu))
    if presets_dir is not None:
        env["CONTENTION_PRESETS"] = str(presets_dir)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, timeout=10 * cpu, cwd=ROOT
    )
    lines = out.stderr.strip().splitlines()
    report = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {"rc": out.returncode, "cpu": 0, "mb": 0}
    return report["rc"], "\n".join(lines[:-1]), report["cpu"], report["mb"], out.stdout


def variant(tmp_path: Path, base: str, pattern: str, line: str) -> Path:
    """Preset ``base`` with the line matching ``pattern`` replaced (or added under ``[workload]``);
    ``line`` may hold several lines, each replacing the line of its own key."""
    text = (PRESETS / f"{base}.toml").read_text()
    for i, one in enumerate(line.split("\n")):
        pat = pattern if i == 0 else rf"^{one.split(' = ')[0]} = .*$"
        if re.search(pat, text, re.M):
            text = re.sub(pat, one, text, count=1, flags=re.M)
        else:
            text = text.replace("[workload]\n", f"[workload]\n{one}\n", 1)
    folder = tmp_path / "presets"
    folder.mkdir(exist_ok=True)
    f = folder / f"{base}.toml"
    f.write_text(text)
    return f


def refused_fast(rc, err: str, cpu: float, mb: float, field: str) -> None:
    assert rc == 2, (rc, err)
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert field in err, err
    assert "out of memory" not in err
    assert cpu < 1.0, f"{cpu:.2f} s of CPU before refusing: {err}"
    assert mb < 300, f"{mb:.0f} MB before refusing: {err}"


# -- every parameter is declared with a maximum --------------------------------------------------
def _declared():
    for t in registry.topic_names():
        topic = registry.load_topic(t)
        yield f"{t} panel", topic.panel_params
        for name, cls in registry.policies(t).items():
            yield f"{t}/{name}", getattr(cls, "PARAMS", {})
    for kind, w in registry.workloads().items():
        yield f"workload {kind}", w.params


def test_every_parameter_declares_its_maximum():
    missing = []
    for where, specs in _declared():
        for key, spec in specs.items():
            assert isinstance(spec, Param), f"{where}.{key}"
            if spec.type in (int, float) and spec.max is None:
                missing.append(f"{where}.{key}")
            if spec.type is list and spec.max_items is None:
                missing.append(f"{where}.{key} (list)")
    assert not missing, missing


def test_every_topic_states_its_cost():
    for t in registry.topic_names():
        info = registry.topic_info(t)
        assert info.budget.get("event_us", 0) > 0, t


def test_every_preset_fits_its_budgets_at_its_own_duration():
    for name in presets.preset_names():
        est = budget.estimate(presets.load(name))
        assert est.over() <= 0.5, (name, est.over())


# -- values that once exploded, each refused naming its field, fast and small ---------------------
CASES = [
    ("routing-llmd-short", r"^replicas = .*$", "replicas = 1000000", "replicas"),
    ("routing-llmd-short", r"^groups = .*$", "groups = 100000000", "workload.groups"),
    ("preemption", r"^samples = .*$", "samples = 1000000000", "workload.samples"),
    ("routing-llmd-short", r"^prefix_len = .*$", "prefix_len = 1000000000", "workload.prefix_len"),
    ("cache-scan", r"^size = .*$", "size = 9223372036854775807", "size"),
    ("routing-llmd-short", r"^kv_tokens = .*$", "kv_tokens = 1000000000000000", "kv_tokens"),
    ("routing-llmd-short", r"^kv_tokens = .*$", "kv_tokens = 67108864\nblock_size = 1", "kv_tokens"),
    ("hashing-vnodes", r"^nodes = .*$", "nodes = 10000", "vnodes"),
]


@pytest.mark.parametrize("base, pattern, line, field", CASES, ids=[c[2].split("\n")[0] for c in CASES])
def test_a_value_that_would_explode_is_refused_naming_its_field(tmp_path, base, pattern, line, field):
    f = variant(tmp_path, base, pattern, line)
    rc, err, cpu, mb, _ = child("run", str(f), "--json")
    refused_fast(rc, err, cpu, mb, field)
    assert str(f) in err


def test_list_builds_nothing_big(tmp_path):
    f = variant(tmp_path, "routing-llmd-short", r"^replicas = .*$", "replicas = 1000000")
    rc, err, cpu, mb, out = child("list", presets_dir=f.parent)
    assert rc == 0 and "unavailable" in out and "replicas" in out, (rc, err, out)
    assert cpu < 2.0 and mb < 300, (cpu, mb)


@pytest.mark.parametrize(
    "preset", ["prefix-sharing", "routing-llmd", "consensus-flaky-network", "cache-scan", "gc-thrash"]
)
def test_the_documented_longest_duration_is_refused_at_once(preset):
    rc, err, cpu, mb, _ = child("run", preset, "--duration", "86400")
    refused_fast(rc, err, cpu, mb, "field 'duration'")
    assert "ask for at most" in err


def test_the_duration_a_refusal_suggests_is_accepted():
    preset = presets.load("cache-scan")
    with pytest.raises(PresetError) as info:
        budget.check(preset, 86400.0)
    most = float(re.search(r"ask for at most ([\d,.]+) s", str(info.value)).group(1).replace(",", ""))
    assert 600 < most < 86400
    assert budget.check(preset, most).over() <= 1.0


def test_a_link_override_is_checked_before_the_preset_is_built():
    """The site's links go through ``with_overrides`` (o.defaults.replicas=1000000 filled the tab)."""
    p = presets.load("routing-llmd-short")
    with pytest.raises(PresetError, match=r"replicas: expected >= 1 and <= 256"):
        p.with_overrides({"defaults.replicas": 1_000_000})
    with pytest.raises(PresetError, match=r"field 'panels\[\d\]\.kv_tokens'"):
        p.with_overrides({"defaults.kv_tokens": 1 << 26, "defaults.block_size": 1})


def test_the_api_and_the_worker_share_the_check():
    with pytest.raises(PresetError, match="field 'duration'"):
        api.run("routing-llmd", duration=86400.0)
    with pytest.raises(PresetError, match="field 'duration'"):
        Scenario(presets.load("cache-scan"), duration=86400.0)


def test_the_site_worker_refuses_an_oversized_override():
    bridge = pytest.importorskip("web.pyodide.bridge")
    out = json.loads(
        bridge.call(
            "create",
            json.dumps({"id": "b1", "preset": "routing-llmd-short", "overrides": {"defaults.replicas": 1_000_000}}),
        )
    )
    assert "error" in out and "replicas" in json.dumps(out), out


@pytest.mark.slow
def test_the_longest_run_a_refusal_suggests_stays_under_a_gigabyte():
    """cache-scan at the duration its refusal suggests (the stream's budget binds): it runs, in
    bounded memory and within the CPU budget."""
    rc, err, cpu, mb, _ = child("run", "cache-scan", "--duration", "86400")
    most = re.search(r"at most ([\d,]+) s", err).group(1).replace(",", "")
    rc, err, cpu, mb, _ = child("run", "cache-scan", "--duration", most, "--json", cpu=120)
    assert rc == 0, err
    assert mb < 1024 and cpu < budget.MAX_WORK_S, (mb, cpu)


def test_work_grows_with_the_parameters_that_declare_it():
    p = presets.load("consensus-flaky-network")
    base = budget.estimate(p).work.value
    faster = budget.estimate(p.with_overrides({"defaults.heartbeat": 0.005})).work.value
    assert faster > 5 * base
    with pytest.raises(PresetError, match=r"panels\[\d\]\.heartbeat"):
        budget.check(p.with_overrides({"defaults.heartbeat": 0.0001}), 600.0)


def test_no_slider_of_any_preset_reaches_a_refusal():
    """The site's sliders go through ``with_overrides``: each end of each control stays within budget."""
    for name in presets.preset_names():
        p = presets.load(name)
        for c in p.controls:
            for end in ("min", "max"):
                p.with_overrides({c["target"]: c[end]})
