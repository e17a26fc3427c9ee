"""Divergence: the first events at which two panels decide differently, and why.

The engine (sims/core/diverge.py) is checked against independent recomputations: the plain policy
objects stepped reference by reference, outside any panel. Recording mode must not change a run.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sims.cache import build_policy
from sims.core import presets
from sims.core.diverge import Diverge, first_divergence
from sims.core.registry import get_policy, policies
from sims.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
TOPICS = ("cache", "paging", "alloc", "ratelimit", "balance", "hashing", "cluster", "breakers", "filters", "election")
SEEDS = (7, 8, 9, 10, 11)


def victims_by_reference(policy: str, keys: list, size: int) -> list:
    """What a bare policy object does on each reference: "hit", "admit" or the victim."""
    cache = build_policy(policy, size)
    out: list = []
    for key in keys:
        gone: list = []
        cache.on_evict = gone.append
        hit = cache.access(key)
        out.append("hit" if hit else (gone[0] if gone else "admit"))
    return out


def first_difference(xs: list, ys: list) -> int | None:
    return next((i for i, (x, y) in enumerate(zip(xs, ys, strict=False)) if x != y), None)


@pytest.mark.parametrize("seed", SEEDS)
def test_cache_scan_lru_arc_first_divergence_found_and_explained(seed: int) -> None:
    d = first_divergence("cache-scan", "lru", "arc", seed=seed)
    assert d is not None
    events = Scenario("cache-scan", seed).run_events()
    keys = [ev["key"] for ev in events]  # cache-scan's stream is all refs: index = reference
    lru, arc = victims_by_reference("lru", keys, 100), victims_by_reference("arc", keys, 100)
    k = first_difference(lru, arc)
    assert d.index == k and d.t == events[k]["t"]
    assert (d.a.action, d.b.action) == ("evict", "evict")
    assert d.a.subject == f"k{lru[k]}" and d.b.subject == f"k{arc[k]}"
    assert d.reason_a.startswith(f"LRU evicted k{lru[k]}") and "least recently used" in d.reason_a
    assert d.reason_b.startswith(f"ARC evicted k{arc[k]}") and "T1" in d.reason_b
    # the key LRU evicted is one ARC keeps, in T2: it was seen twice
    assert f"kept k{lru[k]} in T2" in d.reason_b


def test_lru_and_fifo_agree_until_a_hit_reorders_them() -> None:
    """LRU and FIFO evict alike until LRU's order differs from FIFO's: the engine's first
    divergence is where the bare policies first differ, recomputed here."""
    keys = Scenario("cache-zipf", 3).run_events()
    keys = [ev["key"] for ev in keys if ev["kind"] == "ref"]
    size = presets.load("cache-zipf").panels[0].params["size"]
    names = {s.policy: s.name for s in presets.load("cache-zipf").panels}
    d = first_divergence("cache-zipf", names["lru"], names["fifo"], seed=3)
    k = first_difference(victims_by_reference("lru", keys, size), victims_by_reference("fifo", keys, size))
    assert k is not None and k > size  # identical for a long prefix: the cache fills alike
    assert d is not None and d.index == k


def test_belady_fifo_three_and_four_frames_split_at_the_fourth_reference() -> None:
    d = first_divergence("paging-belady", "fifo-3", "fifo-4")
    assert d is not None and d.index == 3  # 1, 2, 3, then 4: three frames must evict, four admit
    assert (d.a.text, d.b.text) == ("evict page 1", "admit page 4")
    assert "page 1" in d.reason_a and "oldest" in d.reason_a


def _twin_preset(tmp_path: Path, second_size: int) -> Path:
    text = (ROOT / "sims/presets/cache-scan.toml").read_text()
    head = text.split("[[panels]]")[0].replace('name = "cache-scan"', 'name = "twins"')
    panels = (
        f'[[panels]]\npolicy = "lru"\nname = "one"\n\n[[panels]]\npolicy = "lru"\nname = "two"\nsize = {second_size}\n'
    )
    path = tmp_path / "twins.toml"
    path.write_text(head + panels)
    return path


def test_identical_panels_never_diverge_and_a_different_size_does(tmp_path: Path) -> None:
    same = Diverge(presets.load(str(_twin_preset(tmp_path, 100))), "one", "two", duration=10.0)
    assert same.count_rest() == 0 and same.end > 1000
    other = Diverge(presets.load(str(_twin_preset(tmp_path, 99))), "one", "two", duration=10.0)
    keys = [ev["key"] for ev in other.events[: other.end]]
    k = first_difference(victims_by_reference("lru", keys, 100), victims_by_reference("lru", keys, 99))
    assert next(other).index == k  # the smaller cache must evict one distinct key earlier


def _panel_for(topic: str, policy: str):
    """A preset of ``topic`` with a panel running ``policy`` (a sibling's panel, renamed, when no
    preset has one), and that panel's name."""
    cls = get_policy(topic, policy)
    for p in presets.all_presets():
        if p.topic == topic:
            for s in p.panels:
                if s.policy == policy:
                    return p, s.name
    for p in presets.all_presets():
        if p.topic == topic:
            for s in p.panels:
                if all(k in s.params for k in getattr(cls, "PARAMS", {})):
                    spec = dataclasses.replace(s, policy=policy, name=policy)
                    return dataclasses.replace(p, panels=(spec, *p.panels)), policy
    raise AssertionError(f"no preset to run {topic}/{policy}")


@pytest.mark.parametrize("topic,policy", [(t, n) for t in TOPICS for n in policies(t)])
def test_every_policy_explains_its_decisions_naming_their_subject(topic: str, policy: str) -> None:
    preset, name = _panel_for(topic, policy)
    sc = Scenario(preset, duration=min(preset.duration, 30.0))
    panel, events, end = sc.panels[name], sc.events, len(sc.run_events())
    said, fallback = [], None
    for k in range(end):
        d = panel.decide(events, k)
        if d is None:
            continue
        if d.action in ("hit", "admit", "scan", "remap", "burst"):
            fallback = fallback or (d, panel.explain(d))
            continue
        said.append((d, panel.explain(d)))
        if len(said) == 3:
            break
    said = said or [fallback]
    assert said[0], f"{topic}/{policy} decided nothing in {end} events"
    for d, sentence in said:
        assert d.subject in sentence, (sentence, d.subject)
        if d.action in ("route", "place", "grow"):
            assert d.target in sentence, (sentence, d.target)
        assert sentence.lower().startswith((policy.lower(), {"twoq": "2q", "s3fifo": "s3-fifo"}.get(policy, "-")))
        assert "explain" not in sentence and "\n" not in sentence


@pytest.mark.parametrize(
    "preset",
    [
        "cache-scan",
        "cache-writes",
        "cache-ttl-short",
        "paging-belady",
        "paging-aging-nru",
        "alloc-shred",
        "ratelimit-burst",
        "tpm-shared-budget",
        "balance-slow-server",
        "hashing-add-node",
        "routing-llmd-short",
        "election-partition",
    ],
)
def test_recording_changes_no_result(preset: str) -> None:
    """Two panels replayed in recording mode end with exactly the metrics of a normal run."""
    a, b = presets.load(preset).panel_names()[:2]
    duration = min(presets.load(preset).duration, 20.0)
    engine = Diverge(preset, a, b, duration=duration)
    engine.count_rest()
    engine.pa.advance(duration)
    engine.pb.advance(duration)
    plain = Scenario(preset, duration=duration, panels=[a, b]).run().metrics()
    assert engine.pa.metrics() == plain[a] and engine.pb.metrics() == plain[b]
    engine.pa.check_invariants()
    engine.pb.check_invariants()


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "sims", *args], capture_output=True, text=True, env=env, cwd=ROOT)


def test_cli_diff_json_and_table() -> None:
    out = _cli("diff", "cache-scan", "--panels", "lru,arc", "--limit", "3", "--json", "--seed", "8")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    first = first_divergence("cache-scan", "lru", "arc", seed=8)
    assert len(doc["divergences"]) == 3 and doc["divergences"][0] == first.as_json()
    assert [d["index"] for d in doc["divergences"]] == sorted({d["index"] for d in doc["divergences"]})
    assert doc["count"] >= 3 and set(doc["divergences"][0]) == {"index", "t", "event", "a", "b"}
    assert set(doc["divergences"][0]["a"]) == {"decision", "reason"}
    table = _cli("diff", "cache-scan", "--panels", "lru,arc", "--limit", "1", "--seed", "8")
    assert table.returncode == 0 and f"#{first.index}" in table.stdout and first.reason_b in table.stdout
    assert "divergences in" in table.stdout.splitlines()[-1]


@pytest.mark.parametrize(
    "args,needle",
    [
        (("cache-scan", "--panels", "lru,nope"), "unknown panel 'nope'"),
        (("cache-scan", "--panels", "lru"), "expected two panel names"),
        (("cache-scan", "--panels", "lru,lru"), "named twice"),
        (("cache-scan", "--panels", "lru,arc", "--limit", "0"), "--limit"),
        (("preemption", "--panels", "recompute,swap"), "record no decisions"),
    ],
)
def test_cli_diff_refuses_bad_input_in_one_line(args: tuple, needle: str) -> None:
    out = _cli("diff", *args)
    assert out.returncode == 2 and needle in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr
