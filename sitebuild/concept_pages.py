"""Concept pages: one per registered policy, ``topics/<topic>/<name>/`` (docs/concepts.md).

``gather()`` reads every topic's concept files (``sims.core.concepts``) and fails, naming them,
when a registered policy has none. ``write(...)`` renders each page: the figure (the element with
the file's preset, panels, time, speed and overrides; the page reuses the preset's poster, nothing
is run here), the text, the hands-on steps with the states ``concept_plan`` computes for their
buttons, the registered class's source, highlighted, and the quiz, whose answer the tests have
checked against the figure (tests/test_concepts.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sims.core.concepts import Concept


@dataclass
class Learn:
    """The concept layer the rest of the site links to."""

    concepts: dict[str, dict[str, Concept]]  # topic -> name -> concept (aliases included)
    by_preset: dict[str, list[Concept]] = field(default_factory=dict)  # preset -> concepts its panels run

    def get(self, slug: str) -> Concept | None:
        topic, _, name = slug.partition("/")
        return self.concepts.get(topic, {}).get(name)

    def listed(self, topic: str) -> list[Concept]:
        """The topic's concepts with content of their own, in title order."""
        return sorted((c for c in self.concepts.get(topic, {}).values() if not c.alias_of), key=lambda c: c.title)


def gather(presets: list) -> Learn:
    """Every topic's concepts, checked; a registered policy without content fails the build."""
    from sims.core import concepts, registry

    learn = Learn({})
    missing: list[str] = []
    for topic in registry.topic_names():
        learn.concepts[topic] = concepts.load(topic)
        missing += [f"{topic}/{n}" for n in concepts.missing(topic)]
        slugs = {p["slug"] for p in registry.topic_info(topic).pages}
        clash = sorted(slugs & set(learn.concepts[topic]))
        if clash:
            raise ValueError(f"sims/{topic}/topic.toml: pages {', '.join(clash)} have the path of a concept page")
    if missing:
        raise ValueError(
            f"{len(missing)} registered policies have no concept page content: {', '.join(missing)} "
            "(write sims/<topic>/concepts/<name>.toml, docs/concepts.md)"
        )
    for p in presets:
        runs = {s.policy for s in p.panels} | {v for s in p.panels for v in s.params.values() if isinstance(v, str)}
        mine = learn.concepts.get(p.topic, {})
        learn.by_preset[p.name] = [mine[n] for n in sorted(runs) if n in mine and not mine[n].alias_of]
    return learn


def code_blocks(c: Concept) -> list[dict[str, str]]:
    """The code the page shows: the registered class and the algorithm it is a face of, or the
    objects the file names in ``code``; each ``{where, html}``."""
    import importlib
    import inspect
    import textwrap

    from sims.core import policysource
    from sitebuild.highlight import python_html

    if c.code:
        found = []
        for ref in c.code:
            module, _, qual = ref.partition(":")
            obj: Any = importlib.import_module(module)
            for part in qual.split("."):
                obj = getattr(obj, part)
            found.append((module, textwrap.dedent(inspect.getsource(obj))))
    else:
        try:
            found = policysource.class_sources(c.topic, c.name)
        except ValueError as exc:
            raise ValueError(f'{c.path}: {exc}; name the code to show with code = ["module:Qualname"]') from None
    return [{"where": module.replace(".", "/") + ".py", "html": python_html(src)} for module, src in found]


def editable(c: Concept) -> bool:
    """Whether the preset page's editor can open this policy."""
    from sims.core import policysource

    try:
        policysource.policy_source(c.topic, c.name)
    except ValueError:
        return False
    return True


def page_data(c: Concept) -> dict[str, Any]:
    """What the page's script (web/static/js/concept.js) needs to drive the figure."""
    from sims.core import concept_plan
    from sims.core.concepts import figure_preset

    preset = figure_preset(c.figure, c.path)
    return {
        "slug": c.slug,
        "preset": c.figure.preset,
        "duration": preset.duration,
        "initial": concept_plan.initial(c).as_json(),
        "states": [s.as_json() for s in concept_plan.plan(c)],
        "steps": [{"action": s.action, "expect": s.expect} for s in c.steps],
        "quiz": [
            {"question": q.question, "metric": q.metric, "at": q.at, "answer": q.answer, "explain": q.explain}
            for q in c.quiz
        ],
    }


def figure_attrs(c: Concept) -> dict[str, str]:
    """The element's attributes for the figure (the link codec's formats, web/static/js/link.js).
    Its controls are the basic ones: the steps move the parameters, the preset page has them all."""
    fig = c.figure
    attrs = {"preset": fig.preset, "panels": ",".join(fig.panels), "data-focus": fig.panels[0], "controls": "basic"}
    if fig.at:
        attrs |= {"t": f"{fig.at:g}", "autoplay": "false"}
    if fig.speed:
        attrs["speed"] = f"{fig.speed:g}"
    if fig.overrides:
        attrs["overrides"] = ";".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in fig.overrides)
    return attrs


def write(env, out: Path, common: dict[str, Any], learn: Learn, lessons, report) -> int:
    """Render every concept page (an alias: a page that sends the reader on); returns the count."""
    template = env.get_template("concept.html")
    n = 0
    for topic, found in learn.concepts.items():
        report(f"concept pages of {topic}", 0.9)
        for name, c in found.items():
            path = out / "topics" / topic / name / "index.html"
            path.parent.mkdir(parents=True, exist_ok=True)
            if c.alias_of:
                target = found[c.alias_of]
                html = env.get_template("redirect.html").render(
                    root="../../../", to=f"../{c.alias_of}/", title=target.title, **common
                )
            else:
                html = template.render(
                    root="../../../",
                    topic=topic,
                    c=c,
                    attrs=figure_attrs(c),
                    data=page_data(c),
                    code=code_blocks(c),
                    editable=editable(c),
                    lessons=lessons(c.slug),
                    **common,
                )
            path.write_text(html, encoding="utf-8")
            n += 1
    return n
