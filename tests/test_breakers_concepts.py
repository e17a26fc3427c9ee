"""The breakers' concept pages (docs/concepts.md): a file for every registered policy, its figure runs
the concept, and every step's ``expect`` and every quiz's ``answer`` hold in CPython, the steps
cumulative as the page plays them (each ``set`` adds its overrides to the ones before)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from sims.core import presets, registry
from sims.core.scenario import Scenario

CONCEPTS = Path(__file__).resolve().parents[1] / "sims" / "breakers" / "concepts"
POLICIES = sorted(registry.policies("breakers"))
REQUIRED = ("title", "summary", "tags", "what", "how", "when", "pros", "cons", "figure")


def _metrics(preset, overrides: dict, t: float) -> dict:
    sc = Scenario(preset.with_overrides(overrides) if overrides else preset)
    sc.advance(t)
    return sc.metrics()


def _ordered(values: list[float], higher: bool, margin: float | None) -> bool:
    sign = 1 if higher else -1
    if margin is None:
        return all(sign * (a - b) > 0 for a, b in zip(values, values[1:], strict=False))
    return all(sign * (a - b) >= margin for a, b in zip(values, values[1:], strict=False))


def test_every_policy_has_a_concept_file():
    assert sorted(p.stem for p in CONCEPTS.glob("*.toml")) == POLICIES


@pytest.mark.parametrize("name", POLICIES)
def test_each_concept_file_is_complete_and_its_steps_and_quiz_hold(name):
    c = tomllib.loads((CONCEPTS / f"{name}.toml").read_text(encoding="utf-8"))
    for key in REQUIRED:
        assert c.get(key), (name, key)
    assert c["real"] and c["quiz"] and c["reading"] and len(c["steps"]) >= 3, name
    assert all(t == t.lower() for t in c["tags"]), c["tags"]
    p = presets.load(c["figure"]["preset"])
    shown = list(c["figure"]["panels"])
    assert set(shown) <= set(p.panel_names()) and p.panels[p.panel_names().index(shown[0])].policy == name
    overrides: dict = {}
    for step in c["steps"]:
        action, expect = step["action"], step.get("expect")
        assert len({"seek", "set"} & set(action)) == 1, f"{name}: only seek and set are used here: {action}"
        overrides |= action.get("set", {})
        t = action.get("seek", action.get("at", 0.0))
        if expect is None:
            continue
        m = _metrics(p, overrides, t)
        values = [m[q][expect["metric"]] for q in expect["panels"]]
        assert set(expect["panels"]) <= set(shown) and len(values) >= 2
        assert _ordered(values, expect["higher_is_better"], expect.get("margin")), (step["text"], values)
    for q in c["quiz"]:
        m = _metrics(p, {}, q["at"])
        values = {n: m[n][q["metric"]] for n in shown}
        best = (max if q["pick"] == "max" else min)(values.values())
        assert [n for n, v in values.items() if v == best] == [q["answer"]], (q["question"], values)
