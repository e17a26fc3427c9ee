"""Topics describe themselves: core discovers them by their ``topic.toml``, every caller reads a
preset's meta from ``api.describe``, and each topic's renderer draws the view kinds it declares."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sims.core import api, presets, registry
from sims.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "presets.jsonl"
SUFFIXES = ("_censored", "_completed")  # flags and completed-only twins of a declared metric


def test_topics_are_discovered_in_declared_order():
    names = registry.topic_names()
    assert {"alloc", "paging", "cache", "ratelimit", "balance", "hashing", "engine", "cluster"} <= set(names)
    infos = [registry.topic_info(n) for n in names]
    assert [(i.order, i.name) for i in infos] == sorted((i.order, i.name) for i in infos)
    assert {p.topic for p in presets.all_presets()} <= set(names)
    with pytest.raises(ValueError, match="unknown topic 'nope'; valid: alloc"):
        registry.topic_info("nope")


def test_a_bad_descriptor_names_the_file_and_field(tmp_path):
    bad = tmp_path / "topic.toml"
    bad.write_text('order = "first"\n')
    with pytest.raises(ValueError, match=r"topic.toml: field 'order': expected an integer"):
        registry._read_info("x", bad)
    bad.write_text("[metrics]\nhit_ratio = 1\n")
    with pytest.raises(ValueError, match=r"metrics.hit_ratio: expected"):
        registry._read_info("x", bad)
    bad.write_text('[[pages]]\nslug = "../up"\ntitle = "Up"\n')
    with pytest.raises(ValueError, match=r"pages\[0\].slug: letters"):
        registry._read_info("x", bad)
    bad.write_text('[[controls]]\nname = "partition"\n')
    with pytest.raises(ValueError, match=r"controls\[0\].kind: expected a non-empty string"):
        registry._read_info("x", bad)
    good = tmp_path / "good.toml"
    good.write_text('[[pages]]\nslug = "dijkstra"\ntitle = "Dijkstra"\n[[controls]]\nname = "cut"\nkind = "drag"\n')
    info = registry._read_info("x", good)
    assert info.pages[0]["slug"] == "dijkstra" and info.as_json()["topic_controls"] == [{"name": "cut", "kind": "drag"}]


@pytest.mark.parametrize("topic", registry.topic_names())
def test_descriptor_is_complete(topic):
    info = registry.topic_info(topic)
    assert info.views, "declare the view kinds the panels return"
    for m in (*info.charts, *info.key_metrics):
        assert m in info.metrics, f"{topic}: {m} is charted or shown but not declared in [metrics]"
    for m in info.metrics.values():
        assert m.format in ("int", "percent", "seconds", "bytes", "number"), m
    for key in ("short", "title", "summary"):
        assert isinstance(info.page.get(key), str), f"{topic}: [page] {key}"
    registry.load_topic(topic)  # its __init__ registers the code side


@pytest.mark.parametrize("topic", registry.topic_names())
def test_renderer_draws_every_declared_view_kind(topic):
    src = (ROOT / "web" / "static" / "js" / "topics" / f"{topic}.js").read_text(encoding="utf-8")
    drawn = set(re.findall(r"""registerRenderer\(["'](\w+)["']""", src))
    assert set(registry.topic_info(topic).views) <= drawn


def test_every_reported_metric_is_declared():
    kinds = {p.name: p.topic for p in presets.all_presets()}
    missing = set()
    for line in GOLDEN.read_text().splitlines():
        row = json.loads(line)
        declared = registry.topic_info(kinds[row["preset"]]).metrics
        for metrics in row["panels"].values():
            for name in metrics:
                base = next((name[: -len(s)] for s in SUFFIXES if name.endswith(s)), name)
                if name not in declared and base not in declared:
                    missing.add(f"{kinds[row['preset']]}.{name}")
    assert not missing, f"declare these in sims/<topic>/topic.toml [metrics]: {sorted(missing)}"


@pytest.mark.parametrize("name", presets.preset_names())
def test_views_are_of_declared_kinds(name):
    p = presets.load(name)
    kinds = {v.get("kind") for v in Scenario(p, events=[]).views().values()}
    assert kinds <= set(registry.topic_info(p.topic).views), kinds


@pytest.mark.parametrize("name", ["cache-scan", "ratelimit-burst", "routing-hotspot", "kv-fragmentation"])
def test_describe_charts_equal_a_live_session(name):
    """describe builds the panels on an empty stream to pick the charts; a live run at t=0 agrees."""
    p = presets.load(name)
    sc = Scenario(p)
    meta = api.describe(p)
    assert meta["charts"] == api.chart_metrics(p, sc.metrics())
    assert json.loads(json.dumps(meta)) == meta
    assert set(meta["metrics"]) == set(registry.topic_info(p.topic).metrics)
    assert api.describe(name, summary=True) == {
        "name": p.name,
        "topic": p.topic,
        "title": p.title,
        "duration": p.duration,
        "panels": p.panel_names(),
    }
