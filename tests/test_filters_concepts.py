"""The filters' concept pages (docs/concepts.md): a file for every registered policy, naming its
figure's first panel after the policy. Their steps and quizzes run in tests/test_concepts.py."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from sims.core import presets, registry

CONCEPTS = Path(__file__).resolve().parents[1] / "sims" / "filters" / "concepts"
POLICIES = sorted(registry.policies("filters"))


def test_every_policy_has_a_concept_file():
    assert sorted(p.stem for p in CONCEPTS.glob("*.toml")) == POLICIES


@pytest.mark.parametrize("name", POLICIES)
def test_each_concept_file_shows_its_policy_first(name):
    c = tomllib.loads((CONCEPTS / f"{name}.toml").read_text(encoding="utf-8"))
    assert c["real"] and c["quiz"] and c["reading"] and len(c["steps"]) >= 3, name
    p = presets.load(c["figure"]["preset"])
    first = c["figure"]["panels"][0]
    assert p.panels[p.panel_names().index(first)].policy == name
