"""Hardening, for presets: every workload parameter has a declared range checked at load,
panel range errors fail at load (not at run time), messages name the file and the field, and a
broken preset is listed as unavailable (with its reason) instead of breaking the index.

The properties at the end feed random bytes and random mutations of every preset to the loader
and, when one loads, to a short run: the only outcomes are a clean result or exit 2 with one line.
The last draws huge values for every parameter and for pairs of them: a refusal
names the field, in under a second of CPU and with little memory; a preset that loads runs.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims import cli as cli_mod
from sims.core import presets, registry
from sims.core.limits import InputError
from sims.core.params import Param
from sims.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ROOT / "sims" / "presets"
NAMES = sorted(p.stem for p in PRESETS.glob("*.toml"))


def variant(tmp_path: Path, base: str, edit, name: str | None = None) -> Path:
    """A copy of preset ``base`` in tmp_path, its text passed through ``edit``."""
    name = name or base
    text = (PRESETS / f"{base}.toml").read_text()
    text = re.sub(r'^name = ".*"$', f'name = "{name}"', text, count=1, flags=re.M)
    f = tmp_path / f"{name}.toml"
    f.write_text(edit(text))
    return f


def sub(pattern: str, repl: str):
    def edit(text: str) -> str:
        assert re.search(pattern, text, re.M), pattern
        return re.sub(pattern, repl, text, count=1, flags=re.M)

    return edit


def prepend(line: str):
    return lambda text: line + "\n" + text


def replace_table(table: str, line: str):
    """Drop every [[table]] and put ``line`` (e.g. ``controls = 3``) at the top instead."""

    def edit(text: str) -> str:
        text = re.sub(rf"^\[\[{table}\]\]\n(?:(?!\[).*\n?)*", "", text, flags=re.M)
        return line + "\n" + text

    return edit


def append(block: str):
    return lambda text: text + "\n" + block + "\n"


def load_error(path: Path) -> str:
    with pytest.raises(presets.PresetError) as info:
        presets.load_file(path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg
    return msg


def test_every_preset_loads_from_the_package():
    assert PRESETS.is_dir() and len(NAMES) >= 33
    assert presets.PRESET_DIR == PRESETS or "CONTENTION_PRESETS" in os.environ
    index = presets.load_index()
    assert [p.name for p in index.available] == NAMES and index.unavailable == []


# -- the ~19 preset values accepted before, each refused at load naming its field -------------
CASES = [
    ("cache-scan", sub(r"^scan_len = .*$", "scan_len = -1"), "workload.scan_len: expected >= 0"),
    ("cache-scan", sub(r"^scan_every = .*$", "scan_every = 0"), "workload.scan_every: expected >= 1"),
    ("cache-scan", sub(r"^hot_n = .*$", "hot_n = 0"), "workload.hot_n: expected >= 1"),
    ("cache-scan", sub(r"^rate = .*$", "rate = 0.0"), "workload.rate: expected > 0"),
    ("cache-scan", sub(r"^rate = .*$", "rate = -1.0"), "workload.rate: expected > 0"),
    ("cache-scan", sub(r"^rate = .*$", "rate = nan"), "workload.rate: expected a finite number"),
    ("cache-scan", sub(r"^rate = .*$", "rate = inf"), "workload.rate: expected a finite number"),
    ("cache-scan", sub(r"^rate = .*$", "rate = 1e300"), "workload.rate: expected > 0 and <= 1e+06"),
    ("ratelimit-burst", sub(r"^period = .*$", "period = 0.0"), "workload.period: expected > 0"),
    ("scheduling-sjf", sub(r"^\[workload\]$", "[workload]\nlong_frac = 2.0"), "workload.long_frac"),
    ("scheduling-sjf", sub(r"^max_len = .*$", "max_len = 0"), "workload.max_len: expected >= 2"),
    ("cache-scan", append('[[events]]\nt = nan\nkind = "scan"'), "field 'events[0]'.t: expected a finite number"),
    (
        "cache-scan",
        append('[[events]]\nt = -1.0\nkind = "scan"'),
        "field 'events[0]'.t: expected a number of seconds >= 0",
    ),
    ("cache-scan", sub(r'^target = ".*"$', 'target = "workload.bogus"'), ".target: expected workload.X or defaults.X"),
    ("cache-scan", sub(r'^target = ".*"$', 'target = "nonsense"'), ".target: expected workload.X or defaults.X"),
    ("cache-zipf", prepend("sample_dt = -1.0"), "field 'sample_dt': expected a number of seconds >= 0"),
    ("cache-scan", prepend("ci_duration = nan"), "field 'ci_duration': expected a finite number"),
    ("cache-scan", sub(r"^seed = .*$", "seed = -1"), "field 'seed': expected a seed between 0"),
    ("cache-scan", sub(r"^seed = .*$", f"seed = {2**53}"), "field 'seed': expected a seed between 0"),
    ("cache-scan", sub(r"^duration = .*$", "duration = inf"), "field 'duration': expected a finite number"),
    (
        "cache-scan",
        sub(r"^duration = .*$", "duration = 1e308"),
        "field 'duration': expected a positive number of seconds (at most 86400)",
    ),
    ("cache-scan", sub(r"^title = .*$", "title = 5"), "field 'title': expected str, got int 5"),
    ("cache-scan", replace_table("controls", "controls = 3"), "field 'controls': expected list"),
    ("cache-scan", replace_table("actions", "actions = 3"), "field 'actions': expected list"),
    ("cache-scan", sub(r"^min = .*$", "min = -5.0"), ".min: defaults.size: expected >= 1"),
    ("alloc-shred", sub(r"^classes = .*$", "classes = [[1, 2]]"), "workload.classes: expected [min_bytes"),
    ("alloc-growing", sub(r"^prompt = .*$", 'prompt = ["a", "b"]'), "workload.prompt: expected [min, max] integers"),
    ("paging-locality", sub(r"^ws = .*$", "ws = 100000"), "workload.ws: expected <= pages"),
]


@pytest.mark.parametrize("base, edit, needle", CASES, ids=[c[2][:40] for c in CASES])
def test_bad_preset_values_fail_at_load(tmp_path, base, edit, needle):
    f = variant(tmp_path, base, edit)
    assert needle in load_error(f)


@pytest.mark.parametrize("key", ["hot_n", "hot_s"])
def test_a_5000_digit_integer_names_its_line_and_is_not_echoed(tmp_path, key):
    f = variant(tmp_path, "cache-scan", sub(rf"^{key} = .*$", f"{key} = " + "9" * 5000))
    line = next(i for i, text in enumerate(f.read_text().splitlines(), 1) if text.startswith(f"{key} ="))
    msg = load_error(f)
    assert f"{f}:{line}: an integer of 5000 digits is too long" in msg and len(msg) < 300


def test_a_40_digit_integer_names_its_field(tmp_path):
    f = variant(tmp_path, "cache-scan", sub(r"^hot_n = .*$", "hot_n = " + "9" * 40))
    msg = load_error(f)
    assert "workload.hot_n: expected >= 1 and <= 1e+06, got an integer of 40 digits" in msg


# -- panel range errors fail when the preset loads --------------------------------------------
PANEL_CASES = [
    ("cache-scan", r"^size = .*$", "size = 0", "panel.size: expected >= 1"),
    ("paging-loop", r"^frames = .*$", "frames = 0", "panel.frames: expected >= 1"),
    ("alloc-shred", r"^heap = .*$", "heap = 0", "panel.heap: expected >= 1"),
    ("ratelimit-burst", r"^measure_window = .*$", "measure_window = 0.0", "panel.measure_window: expected > 0"),
    ("ratelimit-burst", r"^window = .*$", "window = 0.0", "window"),
    ("hashing-vnodes", r"^nodes = .*$", "nodes = 0", "nodes"),
]


@pytest.mark.parametrize("base, pattern, repl, needle", PANEL_CASES, ids=[c[3][:30] for c in PANEL_CASES])
def test_panel_range_errors_fail_at_load(tmp_path, base, pattern, repl, needle):
    f = variant(tmp_path, base, sub(pattern, repl))
    msg = load_error(f)
    assert needle in msg and "panels[" in msg


def _numeric_panel_params(name: str):
    p = presets.load(name)
    topic = registry.load_topic(p.topic)
    for spec in p.panels:
        cls = registry.get_policy(p.topic, spec.policy)
        specs = dict(topic.panel_params) | dict(getattr(cls, "PARAMS", {}))
        for key, s in specs.items():
            if s.type in (int, float):
                yield spec.name, key


@pytest.mark.slow
@pytest.mark.parametrize("bad", [0, -1])
@pytest.mark.parametrize("name", NAMES)  # one test a preset: the workers share them out
def test_a_panel_value_that_loads_also_runs(name, bad):
    """Every numeric panel parameter of the preset, set to 0 and to -1: the preset either fails
    at load or runs (a prefix of 0.5 s: a bad value fails at its first events). It never loads
    and then fails at run time."""
    failures = []
    for panel, key in _numeric_panel_params(name):
        p = presets.load(name)
        raw = {k: (dict(v) if isinstance(v, dict) else v) for k, v in p.raw.items()}
        raw["panels"] = [dict(x) for x in p.raw["panels"]]
        for x in raw["panels"]:
            if x.get("name", x.get("policy")) == panel:
                x[key] = bad
        try:
            q = presets.parse_preset(raw, p.path)
        except presets.PresetError:
            continue
        try:
            Scenario(presets.select_panels(q, [panel]), None, min(q.duration, 0.5)).run()
        except Exception as exc:  # noqa: BLE001 (collect them all, then report)
            failures.append(f"{name}/{panel}.{key}={bad}: {type(exc).__name__}: {exc}"[:200])
    assert not failures, "\n".join(failures)


# -- the index: one broken preset never breaks the others -------------------------------------
@pytest.fixture
def preset_dir(tmp_path, monkeypatch):
    """A presets folder with two good presets and three broken ones, as CONTENTION_PRESETS."""
    d = tmp_path / "presets"
    d.mkdir()
    for n in ("cache-scan", "ratelimit-burst"):
        (d / f"{n}.toml").write_text((PRESETS / f"{n}.toml").read_text())
    variant(d, "cache-scan", sub(r"^title = .*$", "title = 5"), "title-five")
    variant(d, "cache-scan", replace_table("controls", "controls = 3"), "controls-three")
    variant(d, "cache-scan", sub(r"^rate = .*$", "rate = 0.0"), "rate-zero")
    monkeypatch.setattr(presets, "PRESET_DIR", d)
    monkeypatch.setattr(presets, "_CACHE", {})
    return d


def test_load_index_keeps_broken_presets_apart(preset_dir):
    index = presets.load_index()
    assert [p.name for p in index.available] == ["cache-scan", "ratelimit-burst"]
    assert [e["name"] for e in index.unavailable] == ["controls-three", "rate-zero", "title-five"]
    for e in index.unavailable:
        assert set(e) == {"name", "available", "error"} and e["available"] is False
        assert f"{e['name']}.toml" in e["error"]
    assert [p.name for p in presets.all_presets()] == ["cache-scan", "ratelimit-burst"]
    assert "field 'title'" in index.unavailable[2]["error"]


def test_list_shows_broken_presets_as_unavailable_and_exits_0(preset_dir, capsys):
    assert cli_mod.main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 5
    assert [line.split()[0] for line in out] == [
        "cache-scan",
        "controls-three",
        "rate-zero",
        "ratelimit-burst",
        "title-five",
    ]
    bad = {line.split()[0]: line for line in out if "unavailable:" in line}
    assert set(bad) == {"controls-three", "rate-zero", "title-five"}
    assert "workload.rate: expected > 0" in bad["rate-zero"]


def test_list_json_marks_availability(preset_dir, capsys):
    assert cli_mod.main(["list", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in entries] == [
        "cache-scan",
        "controls-three",
        "rate-zero",
        "ratelimit-burst",
        "title-five",
    ]
    assert [e["available"] for e in entries] == [True, False, False, True, False]
    assert all("error" in e for e in entries if not e["available"])


def test_run_of_a_broken_preset_is_one_line(preset_dir, capsys):
    assert cli_mod.main(["run", "controls-three"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "controls-three.toml: field 'controls'" in err


def test_contention_presets_override_via_the_environment(preset_dir):
    env = dict(os.environ, PYTHONPATH=str(ROOT), CONTENTION_PRESETS=str(preset_dir))
    out = subprocess.run([sys.executable, "-m", "sims", "list"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stderr == ""
    assert len(out.stdout.splitlines()) == 5 and "unavailable" in out.stdout


# -- the property: random bytes and random mutations of every preset ---------------------------
def check_outcome(rc: int, err: str) -> None:
    assert rc in (0, 2), err
    if rc == 2:
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
def test_random_bytes_to_the_loader(tmp_path, capsys, data):
    f = tmp_path / "cache-scan.toml"
    f.write_bytes(data)
    try:
        presets.load_file(f)
    except presets.PresetError as exc:
        assert "\n" not in str(exc) and str(f) in str(exc)
    check_outcome(cli_mod.main(["run", str(f), "--duration", "0.05"]), capsys.readouterr().err)


EDGE = st.one_of(
    st.sampled_from([0, -1, 1, 2, 3, 100, 0.0, -0.5, 0.5, 1.5, 1e308, -1e308, 10**30, 2**53, True, False]),
    st.sampled_from([math.nan, math.inf, -math.inf, "", "x", "lru", [], [1], [[1, 2]], {}, {"a": 1}]),
    st.integers(-5, 20),
    st.floats(-10, 1e4),
    st.text(max_size=8),
)


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(obj, list) and obj and isinstance(obj[0], (dict, list)):
        for i, v in enumerate(obj):
            yield from _leaves(v, (*path, i))
    yield path


def _mutate(raw, path, value, how):
    obj = raw
    for k in path[:-1]:
        obj = obj[k]
    key = path[-1]
    if how == "delete" and isinstance(obj, dict):
        del obj[key]
    elif how == "add" and isinstance(obj, dict):
        obj[f"{key}_extra"] = value
    else:
        obj[key] = value


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(NAMES), pick=st.integers(0, 10**6), value=EDGE, how=st.sampled_from(["set", "delete", "add"])
)
def test_random_mutations_of_every_preset(capsys, name, pick, value, how):
    raw = tomllib.loads((PRESETS / f"{name}.toml").read_text())
    leaves = [p for p in _leaves(raw) if p]
    path = leaves[pick % len(leaves)]
    if path[0] == "site":
        return  # free-form extras for the website, not read by the simulations
    _mutate(raw, path, value, how)
    try:
        p = presets.parse_preset(raw, str(PRESETS / f"{name}.toml"))
    except presets.PresetError as exc:
        assert "\n" not in str(exc) and f"{name}.toml" in str(exc)
        return
    # it loaded: a short run (through the CLI's error path) must succeed or refuse in one line
    duration = min(p.duration, 0.5 if p.topic in ("engine", "cluster") else 2.0)
    try:
        Scenario(p, None, duration).run()
        rc, err = 0, ""
    except (presets.PresetError, ValueError) as exc:
        rc, err = 2, str(exc)
        assert "\n" not in err
    check_outcome(rc, err)
    capsys.readouterr()


# -- huge values for every parameter, and for pairs of them --------------------------------------
def _numeric_targets(name: str) -> list[tuple[str, Param]]:
    """Every numeric parameter a preset may set: ``workload.X`` and ``panels.NAME.X``."""
    p = presets.load(name)
    out = [(f"workload.{k}", spec) for k, spec in registry.get_workload(p.workload_kind).params.items()]
    topic = registry.load_topic(p.topic)
    for panel in p.panels:
        cls = registry.get_policy(p.topic, panel.policy)
        specs = dict(topic.panel_params) | dict(getattr(cls, "PARAMS", {}))
        out += [(f"panels.{panel.name}.{k}", spec) for k, spec in specs.items()]
    return [(t, spec) for t, spec in out if spec.type in (int, float, list)]


TARGETS = {name: _numeric_targets(name) for name in NAMES}
HUGE = st.one_of(
    st.sampled_from([10**6, 10**9, 10**12, 2**53, 2**63 - 1, 10**30, 1e15, 1e300]),
    st.just("max"),  # the declared maximum: must load and run, or be refused by the budget
    st.just("max*10"),
)


def _huge(spec: Param, pick):
    if spec.type is list:
        n = (spec.max_items or 10) * 10 if pick != "max" else spec.max_items or 10
        return [1] * n
    if pick == "max":
        return spec.max if spec.type is float else int(spec.max)
    if pick == "max*10":
        return spec.max * 10 if spec.type is float else int(spec.max) * 10
    return float(pick) if spec.type is float and isinstance(pick, int) and pick < 2**63 else pick


def _address_space() -> int:
    """The bytes this process maps now (VmSize): the cap below is counted from here, not from 0."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


class _Slow(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Slow()


@settings(max_examples=examples(200), deadline=None)
@given(name=st.sampled_from(NAMES), picks=st.lists(st.tuples(st.integers(0, 10**6), HUGE), min_size=1, max_size=2))
def test_huge_values_are_refused_naming_the_field_or_run(name, picks):
    """The refusal comes within a second of CPU, with little memory, and names a field the example
    set (or the duration or a panel, which they drive); a preset that loads builds and runs a
    short prefix. A 30 s alarm and a cap of 3 GiB beyond what the process maps turn an explosion
    into a failure."""
    import resource
    import signal
    import time

    targets = TARGETS[name]
    overrides = {}
    for k, pick in picks:
        target, spec = targets[k % len(targets)]
        overrides[target] = _huge(spec, pick)
    set_keys = {t.rpartition(".")[2] for t in overrides}
    base = presets.load(name)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _address_space() + (3 << 30)  # 3 GiB more than this process maps already (a full run maps over 2)
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    try:
        before_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.process_time()
        try:
            p = base.with_overrides(overrides)
        except presets.PresetError as exc:
            msg = str(exc)
            cpu = time.process_time() - t0
            grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before_mb
            assert "\n" not in msg and f"{name}.toml" in msg, msg
            assert any(k in msg for k in set_keys | {"duration", "panels["}), (overrides, msg)
            assert cpu < 1.0, (overrides, cpu, msg)
            assert grew < 1024, (overrides, grew, msg)
            return
        duration = min(p.duration, 0.05)
        try:
            Scenario(p, None, duration).run()
        except InputError as exc:  # e.g. the stream passing its event cap: one line, as the CLI shows it
            assert "\n" not in str(exc), str(exc)
        grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before_mb
        assert grew < 1024, (overrides, grew)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
