"""Check concept files (docs/concepts.md) as the build and the tests do, for the people who write them.

    python scripts/check_concepts.py            # every topic
    python scripts/check_concepts.py paging     # one topic (or several)
    python scripts/check_concepts.py -v paging  # and show what each step's figure shows

Each file is read and validated (unknown or missing fields, presets, panels, actions), its steps'
``expect`` and its quizzes' ``answer`` are checked by running the figure's preset in CPython, and
every registered policy without a file is named. Exit 1 when anything is wrong.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sims.core import concept_plan, concepts, registry  # noqa: E402


def show_steps(c: concepts.Concept) -> None:
    for k, (step, state) in enumerate(zip(c.steps, concept_plan.plan(c), strict=True)):
        line = f"    steps[{k}] {next(iter(step.action))}: t = {state.t}, panels {', '.join(state.panels)}"
        if step.expect and state.t is not None:
            m = concept_plan.metrics_at(c, state)
            metric = step.expect["metric"]
            line += " | " + ", ".join(f"{p} {metric} {m[p].get(metric)!r}" for p in step.expect["panels"])
        print(line)
    for k in range(len(c.quiz)):
        r = concept_plan.quiz_result(c, k)
        print(f"    quiz[{k}] at {r['at']:g} s: {r['values']} -> {r['answer']}")


def check_topic(topic: str, verbose: bool) -> int:
    bad = 0
    for path in sorted(concepts.folder(topic).glob("*.toml")):
        try:
            c = concepts.read(path, topic)
            problems = concept_plan.check(c)
        except concepts.ConceptError as exc:
            problems = [str(exc)]
        for p in problems:
            print(p)
        bad += len(problems)
        if not problems:
            print(f"ok {topic}/{path.stem}" + (f" (alias of {c.alias_of})" if c.alias_of else ""))
            if verbose and not c.alias_of:
                show_steps(c)
    lost = concepts.missing(topic)
    if lost:
        print(f"{topic}: no concept file for {', '.join(lost)} (sims/{topic}/{concepts.FOLDER}/NAME.toml)")
    return bad + len(lost)


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    topics = [a for a in argv if a != "-v"] or registry.topic_names()
    for t in topics:
        if not registry.has_topic(t):
            print(f"unknown topic {t!r}; valid: {', '.join(registry.topic_names())}")
            return 2
    return 1 if sum(check_topic(t, verbose) for t in topics) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
