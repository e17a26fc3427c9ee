"""The check every topic's concept files get from its tests until scripts/check_concepts.py runs in
main: the sections docs/concepts.md asks for, the figure running the concept first, every step's
``expect`` and the quiz's ``answer`` (the figure's only winner at ``at``) holding in CPython."""

from __future__ import annotations

import tomllib
from pathlib import Path

from sims.core import presets
from sims.core.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]


def check_concept(topic: str, name: str) -> None:
    """The file's sections, its figure running the concept first, every ``expect`` and the quiz's
    ``answer`` (the figure's only winner at ``at``) holding in CPython."""
    c = tomllib.loads((ROOT / "sims" / topic / "concepts" / f"{name}.toml").read_text(encoding="utf-8"))
    for key in ("title", "summary", "tags", "what", "how", "when", "pros", "cons", "figure"):
        assert c.get(key), (name, key)
    assert c["real"] and c["quiz"] and c["reading"] and len(c["steps"]) >= 3, name
    fig = c["figure"]
    p = presets.load(fig["preset"])
    own = fig["panels"][0]
    assert set(fig["panels"]) <= set(p.panel_names()) and p.panels[p.panel_names().index(own)].policy == name
    base = p.with_overrides(fig.get("overrides", {}))
    overrides: dict = {}
    for step in c["steps"]:
        action, expect = step["action"], step.get("expect")
        overrides |= action.get("set", {})
        if expect is None:
            continue
        t = action["seek"] if "seek" in action else action.get("until", action.get("at"))
        sc = Scenario(base.with_overrides(overrides) if overrides else base)
        sc.advance(t)
        values = [sc.metrics()[q][expect["metric"]] for q in expect["panels"]]
        sign = 1 if expect["higher_is_better"] else -1
        margin = expect.get("margin", 0)
        assert all(sign * (a - b) > 0 and sign * (a - b) >= margin for a, b in zip(values, values[1:], strict=False)), (
            name,
            step["text"],
            values,
        )
    for q in c["quiz"]:
        sc = Scenario(base)
        sc.advance(q["at"])
        values = {n: sc.metrics()[n][q["metric"]] for n in fig["panels"]}
        best = (max if q["pick"] == "max" else min)(values.values())
        assert [n for n, v in values.items() if v == best] == [q["answer"]], (name, q["question"], values)
    for r in (*c["real"], *c["reading"]):
        assert (r.get("source") or r.get("url", "")).startswith("https://"), (name, r)
