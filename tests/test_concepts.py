"""Concept pages' content (docs/concepts.md): every registered policy has a file, every file is
valid, and what each file promises (its steps' ``expect``, its quizzes' ``answer``) holds when its
figure's preset runs in CPython. A broken file fails in one line naming the file and the field."""

from __future__ import annotations

import copy
import tomllib

import pytest

from sims.core import concept_plan, concepts, registry

FILES = [f"{t}/{p.stem}" for t in registry.topic_names() for p in sorted(concepts.folder(t).glob("*.toml"))]
LRU = concepts.folder("paging") / "lru.toml"


def test_every_registered_policy_has_a_concept_file():
    lost = [f"{t}/{name}" for t in registry.topic_names() for name in concepts.missing(t)]
    assert not lost, f"{len(lost)} registered policies have no sims/<topic>/concepts/<name>.toml: {', '.join(lost)}"


@pytest.mark.every_concept("concept")
@pytest.mark.parametrize("concept", FILES)
def test_a_concept_file_is_valid_and_its_steps_and_quizzes_hold(concept):
    topic, name = concept.split("/")
    c = concepts.read(concepts.folder(topic) / f"{name}.toml", topic)
    assert concept_plan.check(c) == []


def test_a_topic_loads_with_its_aliases_resolved():
    loaded = concepts.load("paging")
    assert set(loaded) == set(registry.policies("paging"))
    assert loaded["lru"].figure.panels[0] == "lru" and len(loaded["lru"].steps) >= 3


# -- each mistake is one line naming the file and the field ---------------------------------------
def _raw() -> dict:
    return tomllib.loads(LRU.read_text(encoding="utf-8"))


def _error(raw: dict, name: str = "lru") -> str:
    with pytest.raises(concepts.ConceptError) as info:
        concepts.parse(raw, "paging", name, "x.toml")
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("x.toml: ")
    return msg


def _with(path: str, value):
    raw = _raw()
    *head, last = path.split(".")
    node = raw
    for key in head:
        node = node[int(key)] if key.isdigit() else node[key]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return raw


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        ("colour", "blue", "colour: unknown field"),
        ("what", None, "what: missing"),
        ("steps", [], "steps: expected at least 3"),
        ("real", None, "real: expected at least 1 [[real]] entry, missing"),
        ("figure", None, "figure: missing"),
        ("figure.preset", "paging-nowhere", "figure.preset: no preset 'paging-nowhere'"),
        ("figure.panels", ["lru", "arc"], "figure.panels[1]: no panel 'arc' in paging-locality"),
        ("figure.panels", ["lfu", "lru"], "figure.panels[0]: panel 'lfu' runs 'lfu', not 'lru'"),
        ("figure.overrides", {"defaults.colour": 3}, "figure.overrides: "),
        (
            "figure.what",
            ["x"],
            "figure.what: unknown field; valid: preset, panels, caption, at, speed, overrides (a top-level",
        ),
        (
            "steps.0.action",
            {"zoom": 2.0},
            "steps[0].action: expected exactly one of seek, play, step, panels, set, inject",
        ),
        ("steps.0.action", {"seek": 1.0, "until": 2.0}, "steps[0].action.until: unknown field"),
        ("steps.0.action", {"seek": 99.0}, "steps[0].action.seek: expected a virtual time in [0, 20]"),
        ("steps.0.action", {"inject": 7, "at": 1.0}, "steps[0].action.inject: expected the index of one of"),
        ("steps.0.action", {"panels": ["lru", "arc"]}, "steps[0].action.panels[1]: no panel 'arc'"),
        ("steps.0.expect.metric", "hit_ratio", "steps[0].expect.metric: paging declares no metric 'hit_ratio'"),
        ("quiz.0.answer", "arc", "quiz[0].answer: expected one of the figure's panels"),
        ("quiz.0.pick", "most", 'quiz[0].pick: expected "max" or "min"'),
        ("reading.0.url", "doi:10.1/x", "reading[0].url: expected an http(s) address"),
        ("tags", ["Eviction"], "tags[0]: expected a lower-case tag"),
        ("code", ["sims.replace.classic:Nowhere"], 'code[0]: expected "module:Qualname" of sims code with a source'),
        ("code", ["json:dumps"], 'code[0]: expected "sims.module:Qualname"'),
    ],
)
def test_a_bad_field_is_named(path, value, says):
    assert says in _error(_with(path, value))


def test_code_names_what_the_page_shows():
    assert _concept({**_raw(), "code": ["sims.replace.classic:LRU"]}).code == ("sims.replace.classic:LRU",)


def test_an_alias_must_name_another_registered_policy():
    assert "alias_of: no other registered paging policy 'arc'" in _error({"alias_of": "arc"})
    assert "alias_of: unknown field" not in _error({"alias_of": "lru"})
    assert "title: unknown field" in _error({"alias_of": "fifo", "title": "x"})
    assert concepts.parse({"alias_of": "fifo"}, "paging", "lru", "x.toml").alias_of == "fifo"


def test_a_file_about_no_registered_policy_is_refused(tmp_path):
    path = tmp_path / "mru.toml"
    path.write_text(LRU.read_text(encoding="utf-8"))
    with pytest.raises(concepts.ConceptError, match=r"mru.toml: no registered paging policy 'mru'"):
        concepts.read(path, "paging")


# -- the checker ----------------------------------------------------------------------------------
def _concept(raw: dict):
    return concepts.parse(raw, "paging", "lru", "x.toml")


def test_an_expect_that_does_not_hold_is_reported_with_the_numbers():
    raw = _raw()
    raw["steps"][0]["expect"]["panels"] = ["lfu", "lru"]  # LFU is the worse one at 0.5 s
    (problem,) = concept_plan.check(_concept(raw))
    assert problem.startswith("x.toml: steps[0].expect: at 0.5 s, lfu faults=") and "does not beat lru" in problem


def test_a_quiz_answer_the_figure_does_not_show_is_reported():
    raw = _raw()
    raw["quiz"][0]["answer"] = "lfu"
    (problem,) = concept_plan.check(_concept(raw))
    assert "quiz[0].answer: 'lfu', but at 1 s the min faults is lru" in problem


def test_steps_are_cumulative_and_an_expect_needs_a_known_time():
    c = _concept(_raw())
    states = concept_plan.plan(c)
    assert states[1].actions == ((0, 0.5),) and states[1].t == concept_plan.inject_shows(0.5, 20.0) == 1.5
    assert states[2].overrides == (("defaults.frames", 30),) and states[2].actions == () and states[2].t == 1.0
    assert states[3].panels == ("lru", "lfu", "opt") and states[4].t is None
    raw = copy.deepcopy(_raw())
    raw["steps"][4]["expect"] = {"metric": "faults", "panels": ["opt", "lru"], "higher_is_better": False}
    with pytest.raises(concepts.ConceptError, match=r"steps\[4\].expect: after a `step` action the time is not known"):
        concept_plan.plan(_concept(raw))
    raw = _raw()
    raw["steps"][0]["expect"]["panels"] = ["lru", "opt"]
    with pytest.raises(concepts.ConceptError, match=r"steps\[0\].expect.panels: opt not shown"):
        concept_plan.plan(_concept(raw))


def test_a_step_at_the_end_of_the_run_is_refused():
    raw = copy.deepcopy(_raw())
    raw["steps"][4]["action"] = {"step": 1}
    raw["steps"][3]["action"] = {"seek": 20.0}  # the preset's duration: the browser's Step finds nothing after it
    raw["steps"][3].pop("expect", None)
    with pytest.raises(concepts.ConceptError, match=r"steps\[4\].action.step: the figure is at the run's end"):
        concept_plan.plan(_concept(raw))
