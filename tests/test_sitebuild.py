"""The site build is its own package: no import cycle with the server, the Pyodide bridge on sims
alone, a build that leaves the source tree alone and writes its stamp."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sitebuild
from sitebuild import embed, pack

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
    return out


def test_the_site_build_never_imports_the_server_and_the_bridge_needs_only_sims():
    for path in sorted((ROOT / "sitebuild").rglob("*.py")):
        bad = {m for m in _imports(path) if m.startswith("web.server") or m.startswith("web.api")}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
    allowed = set(sys.stdlib_module_names) | {"sims", "web"}
    for path in sorted((ROOT / "web" / "pyodide").glob("*.py")):
        bad = {m for m in _imports(path) if m.split(".")[0] not in allowed or m.startswith("web.server")}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"
    code = "import sys, sitebuild, sitebuild.pages, sitebuild.embed; print(sorted(sys.modules))"
    mods = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "jinja2" not in mods and "web.server" not in mods  # jinja2 only inside build()


def test_pyodide_gets_sims_presets_and_the_bridge_only():
    names = [p.relative_to(pack.ROOT).as_posix() for p in sitebuild.python_files()]
    assert "web/pyodide/bridge.py" in names and "sims/core/scenario.py" in names
    assert {f"sims/{t}/topic.toml" for t in ("cache", "engine")} <= set(names)
    assert not [n for n in names if n.startswith(("web/server", "web/api", "web/notebook", "sitebuild"))]


def test_committed_embedding_doc_matches_its_template():
    pytest.importorskip("jinja2")
    from sitebuild import pages

    assert embed.DOC.read_text(encoding="utf-8") == pages.embedding_doc(), (
        "docs/embedding.md is out of date: run `python -m sitebuild docs`"
    )


@pytest.mark.slow
def test_a_build_writes_its_stamp_and_leaves_the_source_tree_alone(site, session_start):
    """The session's one build (tests/conftest.py): its stamp and docs are there, and no file of
    docs/ changed since this test session started, before the build."""
    pytest.importorskip("jinja2")
    assert (site / sitebuild.STAMP).is_file() and (site / "docs" / "embedding.md").is_file()
    touched = [p.name for p in (ROOT / "docs").glob("*.md") if p.stat().st_mtime > session_start]
    assert not touched, f"the build wrote into docs/: {touched}"


def test_a_topic_extra_page_renders_its_text_and_presets():
    pytest.importorskip("jinja2")
    from sims.core import presets
    from sitebuild import pages

    content = pages.load_content()
    everything = presets.all_presets()
    common = pages._common(content, everything)
    extra = {"slug": "scans", "title": "Why scans hurt", "explain": ["One pass evicts the hot set."]}
    html = (
        pages._env(pages.TEMPLATES)
        .get_template("page.html")
        .render(
            root="../../../",
            topic="cache",
            text=content["topics"]["cache"],
            page={**extra, "presets": ["cache-scan"]},
            presets=common["by_topic"]["cache"],
            quizzes=[],
            **common,
        )
    )
    assert "Why scans hurt" in html and "One pass evicts the hot set." in html
    assert 'href="../../../play/cache-scan/"' in html and "play/cache-zipf/" not in html
    assert [r["topic"] for r in content["translation"]] == [
        t for t in common["topic_order"] if t in {r["topic"] for r in content["translation"]}
    ]


def test_llm_pages_say_how_far_the_step_time_model_is_from_measurements(monkeypatch, tmp_path):
    from gpu_backend import calibrate
    from sims.core import presets
    from sims.hw import step
    from sitebuild import pages

    fit = step.load(step.FIT_PATH)["errors"]
    meta = pages.preset_meta(presets.load("moe-mixtral"), [])
    note = meta["step_model"]
    assert f"{fit['linear_median']:.1%} of them at the median and {fit['linear_p90']:.1%} at the 90th" in note
    assert "attention is modelled, not measured" in note and "H100-80GB" in note
    assert pages.step_model_note([presets.load("cache-scan")]) is None
    assert "step_model" not in pages.preset_meta(presets.load("cache-scan"), [])
    env, common = pages._env(pages.TEMPLATES), pages._common(pages.load_content(), presets.all_presets())
    play = env.get_template("play.html").render(
        root="../../", preset=presets.load("moe-mixtral"), meta=meta, api_client=False, **common
    )
    topic = env.get_template("topic.html").render(
        root="../../", topic="engine", text=pages.load_content()["topics"]["engine"], presets=[], figures=[],
        extra_pages=[], quizzes=[], implemented=[], step_model=note, **common
    )  # fmt: skip
    for html in (play, topic):
        assert 'class="muted step-model"' in html and "attention is modelled, not measured" in html
    # after `contention gpu calibrate` measured the H100, its page gives that figure for the H100
    out = calibrate.write_profile(
        {"gemm_mfu": 0.6}, "H100-80GB", tmp_path / "efficiency.toml", {"steps": 1234, "mean_abs_rel_err_after": 0.071}
    )
    monkeypatch.setattr(step, "EFFICIENCY_PATH", out)
    note = pages.step_model_note([presets.load("engine-vidur-10k")])  # an A100 panel and an H100 panel
    assert "H100-80GB are calibrated on a real one" in note and "7.1% of 1,234 measured steps" in note
    assert "fitted to measured A100-80GB" in note and "to the datasheet" not in note


def test_a_topic_page_opens_with_the_figures_it_chose_and_links_its_extra_pages():
    pytest.importorskip("jinja2")
    from sims.core import presets, registry
    from sitebuild import pages

    content = pages.load_content()
    common = pages._common(content, presets.all_presets())
    text = content["topics"]["graphs"]
    mine = common["by_topic"]["graphs"]
    figures = pages.opening_figures(text, mine)
    assert [p.name for p in figures] == text["figures"]  # not the alphabetically first presets
    html = (
        pages._env(pages.TEMPLATES)
        .get_template("topic.html")
        .render(
            root="../../",
            topic="graphs",
            text=text,
            presets=mine,
            figures=figures,
            extra_pages=registry.topic_info("graphs").pages,
            quizzes=[],
            step_model=None,
            implemented=[],
            **common,
        )
    )
    shown = [line.split('preset="')[1].split('"')[0] for line in html.splitlines() if "<contention-sim" in line]
    assert shown == text["figures"], shown
    for extra in registry.topic_info("graphs").pages:
        assert f'href="../../topics/graphs/{extra["slug"]}/"' in html, extra["slug"]


def test_every_topics_chosen_figures_are_its_own_presets():
    from sims.core import presets, registry

    for topic in registry.topic_names():
        mine = {p.name for p in presets.all_presets() if p.topic == topic}
        for name in registry.topic_info(topic).page.get("figures", ()):
            assert name in mine, f"{topic}: [page] figures names {name!r}, not a preset of the topic"


def test_the_home_page_links_the_example_post():
    pytest.importorskip("jinja2")
    from sims.core import presets
    from sitebuild import pages

    content = pages.load_content()
    everything = presets.all_presets()
    html = (
        pages._env(pages.TEMPLATES)
        .get_template("index.html")
        .render(root="", translation=content["translation"], presets=everything, **pages._common(content, everything))
    )
    assert 'href="examples/blog-post.html"' in html


def test_every_preset_page_opens_with_at_most_sixty_words_and_keeps_the_rest():
    """routing-llmd opened with about 300 words before its first control: the intro is now the
    description's first sentences up to 60 words, the rest under "More about this preset"."""
    from sims.core import presets
    from sitebuild import pages

    for p in presets.all_presets():
        intro, rest = pages.split_intro(p.description)
        assert len(intro.split()) <= pages.INTRO_WORDS + 1, (p.name, intro)  # +1: a cut's ellipsis
        whole = " ".join((p.description or "").split())
        assert " ".join(f"{intro} {rest}".replace(" … …", "").split()) == whole, p.name


def test_the_search_words_are_the_same_in_every_process():
    """Two builds give the same bytes: the search index's word lists do not follow a set's order,
    which changes with each process's hash seed."""
    code = "from sitebuild.search_index import _words; print(_words('best_fit alloc', 'glibc-malloc x_y'))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": str(seed)}, cwd=ROOT,
            capture_output=True, text=True, check=True,
        ).stdout
        for seed in (1, 2, 3, 4)
    }  # fmt: skip
    assert outs == {"best_fit best fit alloc glibc-malloc glibc malloc x_y x y\n"}


@pytest.mark.parametrize("why", ["disabled", "node fails"])
def test_a_build_without_a_snapshot_says_so_in_one_line_and_in_its_manifest(why, tmp_path, monkeypatch, capsys):
    """The site works without Pyodide's snapshot (the worker starts Python the ordinary way), so a
    build that cannot make one goes on: CONTENTION_NO_SNAPSHOT=1, or node failing (here: no Pyodide)."""
    from sitebuild.snapshot import write_snapshot

    static = tmp_path / "static"
    pack.pack_python(static / "py" / "sims.zip")
    if why == "disabled":
        monkeypatch.setenv("CONTENTION_NO_SNAPSHOT", "1")
    else:
        monkeypatch.delenv("CONTENTION_NO_SNAPSHOT", raising=False)
    assert write_snapshot(static) is False
    manifest = json.loads((static / "py" / "snapshot.json").read_text())
    assert manifest["file"] is None and manifest["why"]
    assert not (static / "py" / "snapshot.bin.gz").exists()
    assert capsys.readouterr().err.count("\n") == 1
