"""The pages of the site and the build that writes them (``sitebuild.build``).

``build`` renders the jinja2 templates (home, one page per topic and its extra pages, one per
preset at ``play/NAME/``), precomputes each preset's first frames in CPython through
``web.pyodide.bridge`` (the poster the page animates before Pyodide is live), and copies Pyodide
and uPlot from ``node_modules``. Every URL in dist/ is relative, so it works from any static host,
under any subpath, offline.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sims.core.limits import InputError
from sitebuild.pack import ROOT, pack_python

TEMPLATES = Path(__file__).resolve().parent / "templates"
STATIC = ROOT / "web" / "static"
STAMP = ".contention-build"  # written last: a build without it was interrupted
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
UPLOT_FILES = ("dist/uPlot.esm.js", "dist/uPlot.min.css")
POSTER_SECONDS = 8.0  # real seconds of play (at the preset's default speed) precomputed
# ... and for a preset that opens later in its run (site.start), the 20 s in which it must make its
# point: the live run first has to compute everything up to the start
POSTER_SECONDS_FROM_START = 20.0
POSTER_BYTES = 300_000  # JSON budget per preset page (it gzips about tenfold)

Progress = Callable[[str, float], None]


# -- content --------------------------------------------------------------------------------------
def load_content() -> dict[str, Any]:
    """The site's text, gathered from the topics: each topic's page (its ``topic.toml`` [page]) and
    the home page's translation table (each topic's ``[[page.translation]]`` rows, in topic order)."""
    from sims.core import registry

    topics: dict[str, Any] = {}
    translation: list[dict[str, Any]] = []
    for name in registry.topic_names():
        page = dict(registry.topic_info(name).page)
        translation += [{**row, "topic": name} for row in page.pop("translation", [])]
        if page:
            topics[name] = page
    return {"topics": topics, "translation": translation}


_COMMENT_LINES = re.compile(r"^[ \t]*(?://[^\n]*|/\*\*?(?:[^*]|\*(?!/))*\*/[ \t]*)\n", re.M)


def strip_comment_lines(js: str) -> str:
    """``js`` (or CSS) without its whole-line comments (``// ...`` lines and ``/** ... */`` or
    ``/* ... */`` blocks that start a line): the served modules and stylesheets weigh about a fifth
    less gzipped (the embed's budget), the sources
    keep their comments. Comments after code on a line stay (a ``//`` inside a string is safe)."""
    return _COMMENT_LINES.sub("", js)


def step_model_note(presets: list) -> str | None:
    """A line for a page whose panels price steps on a GPU (a ``gpu`` param): how far the step-time
    model is from measurements (sims/hw, docs/engine.md); a GPU that ``contention gpu calibrate``
    measured gets the calibration's figure instead."""
    gpus = sorted({p.params["gpu"] for pr in presets for p in pr.panels if isinstance(p.params.get("gpu"), str)})
    if not gpus:
        return None
    from sims.hw.step import accuracy

    acc = {g: accuracy(g) for g in gpus}
    notes = [
        f"Step times on the {g} are calibrated on a real one (contention gpu calibrate): within "
        f"{m['mean_abs_err']:.1%} of {m['steps']:,} measured steps on average."
        for g, m in ((g, a["measured"]) for g, a in acc.items() if "measured" in a)
    ]
    fitted = [g for g in gpus if "measured" not in acc[g]]
    if fitted:
        e = acc[fitted[0]]
        others = [g for g in fitted if g != e["gpu"]]
        notes.append(
            f"Step times come from a model fitted to measured {e['gpu']} operator timings (Vidur's profiles): "
            f"the non-attention work is within {e['linear_median']:.1%} of them at the median and "
            f"{e['linear_p90']:.1%} at the 90th percentile, TP all-reduces within {e['allreduce_median']:.1%}; "
            "attention is modelled, not measured"
            + (f"; on the {', '.join(others)} it applies the fitted fractions to the datasheet." if others else ".")
        )
    return " ".join(notes)


INTRO_WORDS = 60  # the most words a preset page shows before its picture
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")
_CLAUSE = re.compile(r"(?<=[;:])\s+")


def split_intro(text: str, words: int = INTRO_WORDS) -> tuple[str, str]:
    """``text`` as (intro, rest): the intro is its first sentences, at most ``words`` words in all;
    a first sentence longer than that is cut after a clause (``;`` or ``:``), else after ``words``
    words with an ellipsis. The rest goes behind "More about this preset"."""

    def take(parts: list[str]) -> tuple[str, str] | None:
        n = 0
        for k, part in enumerate(parts):
            n += len(part.split())
            if n > words:
                return (" ".join(parts[:k]), " ".join(parts[k:])) if k else None
        return " ".join(parts), ""

    text = " ".join((text or "").split())
    got = take(_SENTENCE.split(text)) or take(_CLAUSE.split(text))
    if got:
        return got
    cut = text.split()
    return " ".join(cut[:words]) + " …", "… " + " ".join(cut[words:])


def preset_meta(preset, poster: list[str]) -> dict[str, Any]:
    """What a page needs to run a preset: ``api.describe``, the precomputed poster frames and the
    columns of their chart rows (``web.pyodide.bridge.series_columns``: the charts plus windowed
    ratios' counters); and what its sections can offer before Python is live: ``trace_formats``
    (the trace files it takes) and ``decides`` (whether its panels record decisions, so that
    "Jump to divergence" applies)."""
    from sims.core import api, traceformats
    from sims.core.diverge import records
    from sims.core.scenario import Scenario
    from web.pyodide import bridge

    meta = api.describe(preset)
    empty = Scenario(preset, events=[])
    series, windows = bridge.series_columns(meta["charts"], empty.metrics())
    note = step_model_note([preset])
    return {
        **meta,
        **({"step_model": note} if note else {}),
        "series": series,
        "windows": windows,
        "trace_formats": traceformats.fits(preset),
        "decides": any(records(p) for p in empty.panels.values()),
        "poster": [json.loads(f) for f in poster],
    }


def opening_figures(text: dict[str, Any], presets: list) -> list:
    """The presets a topic page shows live between its paragraphs: its ``[page] figures``, in that
    order, else its first three presets."""
    names = {p.name: p for p in presets}
    return [names[n] for n in text.get("figures", ()) if n in names] or presets[:3]


def quiz_answers(quiz: dict, preset) -> dict[str, Any] | None:
    """Run the quiz's preset to its time in CPython; the answer is the panel(s) with the highest
    (``pick = "max"``) or lowest metric. None when the metric is missing."""
    from sims.core import api

    at = float(quiz.get("at") or preset.duration)
    res = api.run(preset.name, preset.seed, at)
    values = {n: m.get(quiz["metric"]) for n, m in res["panels"].items()}
    if any(v is None for v in values.values()):
        return None
    best = (max if quiz.get("pick", "max") == "max" else min)(values.values())
    return {
        "preset": preset.name,
        "question": quiz["question"],
        "metric": quiz["metric"],
        "at": at,
        "options": list(values),
        "answer": [n for n, v in values.items() if v == best],
        "values": values,
        "explain": quiz.get("explain", ""),
    }


# -- build ----------------------------------------------------------------------------------------
def _copy_vendor(out: Path) -> None:
    nm = ROOT / "node_modules"
    pyo = out / "static" / "vendor" / "pyodide"
    pyo.mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_FILES:
        src = nm / "pyodide" / name
        if not src.exists():
            raise InputError(f"{src} is missing: run `npm ci` first")
        shutil.copyfile(src, pyo / name)
    up = out / "static" / "vendor" / "uplot"
    up.mkdir(parents=True, exist_ok=True)
    for rel in UPLOT_FILES:
        src = nm / "uplot" / rel
        if not src.exists():
            raise InputError(f"{src} is missing: run `npm ci` first")
        shutil.copyfile(src, up / Path(rel).name)


def _env(templates: Path):
    try:
        import jinja2
    except ModuleNotFoundError as exc:  # the CLI names the extra; keep the message for direct use
        raise InputError(f"building the site needs jinja2 ({exc.name} is missing)") from None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        autoescape=jinja2.select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["intro"] = split_intro
    env.filters["json_script"] = lambda obj: json.dumps(obj, separators=(",", ":")).replace("</", "<\\/")
    return env


def _common(content: dict[str, Any], all_presets: list) -> dict[str, Any]:
    """What every template sees: the topics' page text, their order and their presets."""
    from sims.core import registry

    topic_order = registry.topic_names()
    by_topic: dict[str, list] = {t: [] for t in topic_order}
    for p in all_presets:
        by_topic.setdefault(p.topic, []).append(p)
    return {"topics": content["topics"], "topic_order": topic_order, "by_topic": by_topic}


def embedding_doc() -> str:
    """docs/embedding.md as this checkout's build writes it (``python -m sitebuild docs``)."""
    from sims.core import presets as presets_mod
    from sitebuild import embed

    all_presets = presets_mod.all_presets()
    return embed.render_doc(_env(TEMPLATES), all_presets, _common(load_content(), all_presets))


def build(out: Path, progress: Progress | None = None, jobs: int | None = None) -> Path:
    """Build the site into ``out``; ``progress(label, fraction)`` is called as work completes.
    The posters and quiz answers run in ``jobs`` processes (default: one per core,
    ``sitebuild.precompute``); the pages are the same bytes for any number."""
    from sims.core import presets as presets_mod
    from sims.core import registry
    from sitebuild import precompute

    report = progress or (lambda label, frac: None)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for sub in ("static", "play", "topics", "tracks", "search"):  # only what this build writes
        shutil.rmtree(out / sub, ignore_errors=True)

    report("copying Pyodide and uPlot", 0.0)
    _copy_vendor(out)
    from sitebuild.bundle import build_editor

    build_editor(out)  # CodeMirror for "Edit a policy"
    shutil.copytree(STATIC, out / "static", dirs_exist_ok=True)
    for src in [*(out / "static").glob("**/*.js"), *(out / "static").glob("**/*.css")]:
        if "vendor" not in src.parts:
            src.write_text(strip_comment_lines(src.read_text(encoding="utf-8")), encoding="utf-8")
    pack_python(out / "static" / "py" / "sims.zip")
    from sitebuild.snapshot import write_snapshot

    report("making the Pyodide snapshot", 0.04)
    write_snapshot(out / "static")  # the worker starts from it when it matches; the site works without

    content = load_content()
    all_presets = presets_mod.all_presets()
    topic_order = registry.topic_names()
    common = _common(content, all_presets)
    from sitebuild import capacity, concept_pages, search_index, track_pages

    learn = concept_pages.gather(all_presets)  # fails now, naming them, when a policy has no content
    tracks = track_pages.load(all_presets, {c.slug: c.title for t in learn.concepts.values() for c in t.values()})
    by_topic = common["by_topic"]
    api_client = (STATIC / "js" / "api-client.js").exists()
    env = _env(TEMPLATES)

    n = max(1, len(all_presets))
    jobs = precompute.default_jobs() if jobs is None else jobs
    metas = {}
    posters = precompute.spread(precompute.poster_meta, [p.name for p in all_presets], jobs)
    for i, (p, (_, meta)) in enumerate(zip(all_presets, posters, strict=True)):
        report(f"precomputing {p.name}", 0.05 + 0.75 * i / n)
        metas[p.name] = meta
        (out / "static" / "presets").mkdir(parents=True, exist_ok=True)
        (out / "static" / "presets" / f"{p.name}.json").write_text(json.dumps(meta, separators=(",", ":")))
        page = env.get_template("play.html").render(
            root="../../",
            preset=p,
            meta=meta,
            api_client=api_client,
            preset_concepts=learn.by_preset.get(p.name, []),
            lessons=tracks.of(f"play/{p.name}"),
            **common,
        )
        _write(out / "play" / p.name / "index.html", page)

    report("writing topic pages", 0.8)
    names = {p.name: p for p in all_presets}
    asked = [
        f"{topic}#{k}"
        for topic in topic_order
        for k, q in enumerate(content["topics"].get(topic, {}).get("quiz", []))
        if q["preset"] in names
    ]
    answers = dict(precompute.spread(precompute.quiz_answer, asked, jobs))
    for k, topic in enumerate(topic_order):
        text = content["topics"].get(topic)
        if text is None:
            continue
        quizzes = [a for key, a in answers.items() if key.split("#")[0] == topic and a]
        report(f"topic {topic}", 0.8 + 0.18 * k / len(topic_order))
        try:
            implemented = sorted(registry.policies(topic))
        except ValueError:
            implemented = []
        page = env.get_template("topic.html").render(
            root="../../",
            topic=topic,
            text=text,
            presets=by_topic.get(topic, []),
            figures=opening_figures(text, by_topic.get(topic, [])),
            extra_pages=registry.topic_info(topic).pages,
            quizzes=quizzes,
            implemented=implemented,
            concepts=learn.listed(topic),
            step_model=step_model_note(by_topic.get(topic, [])),
            **common,
        )
        _write(out / "topics" / topic / "index.html", page)
        for extra in registry.topic_info(topic).pages:  # the topic's own extra pages
            mine = [q for q in quizzes if q["preset"] in extra.get("presets", ())]
            page = env.get_template("page.html").render(
                root="../../../",
                topic=topic,
                text=text,
                page=extra,
                presets=by_topic.get(topic, []),
                quizzes=mine,
                capacity=capacity.answers() if extra.get("answer") == "capacity" else None,
                **common,
            )
            _write(out / "topics" / topic / extra["slug"] / "index.html", page)

    concept_pages.write(env, out, common, learn, tracks.of, report)
    track_pages.write(env, out, common, tracks)
    search_index.write(env, out, common, search_index.entries(content, all_presets, learn, tracks))
    _write(
        out / "index.html",
        env.get_template("index.html").render(
            root="", translation=content["translation"], presets=all_presets, tracks=tracks.all, **common
        ),
    )
    _write(out / "404.html", env.get_template("404.html").render(root="/", **common))  # served for any path
    (out / "static" / "presets" / "index.json").write_text(json.dumps(sorted(metas)))
    # embeds (sitebuild/embed.py): dist/embed.js, embed/PRESET/, examples/, docs/embedding.md
    from sitebuild import embed

    embed.build_embeds(out, env, all_presets, metas, common)
    from sitebuild import csp

    csp.secure(out)  # every page: its Content-Security-Policy, as a meta (any static host)
    (out / STAMP).write_text(f"built {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
    report("done", 1.0)
    return out


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
