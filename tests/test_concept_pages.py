"""The concept layer of the site build (sitebuild/concept_pages.py, track_pages.py,
search_index.py, highlight.py): a missing concept fails the build with its name, a concept page
carries every section, tracks are checked and placed, the search index covers every kind of page.
Rendering here uses the templates directly, so no full build (posters) is needed."""

from __future__ import annotations

import html
import re

import pytest

from sims.core import concepts, presets, registry

jinja2 = pytest.importorskip("jinja2")

from sitebuild import concept_pages, pages, search_index, track_pages  # noqa: E402
from sitebuild.highlight import python_html  # noqa: E402

PRESETS = presets.all_presets()


def test_a_registered_policy_without_content_fails_the_build_naming_it(monkeypatch, tmp_path):
    real = concepts.folder
    monkeypatch.setattr(concepts, "folder", lambda t: tmp_path if t == "paging" else real(t))
    concepts._LOADED.pop("paging", None)
    try:
        with pytest.raises(ValueError, match=r"no concept page content: .*paging/clock, paging/fifo, paging/lfu"):
            concept_pages.gather(PRESETS)
    finally:
        concepts._LOADED.pop("paging", None)


def test_a_concept_page_has_every_section():
    learn = concept_pages.gather(PRESETS)
    tracks = track_pages.load(PRESETS, {})
    c = learn.get("paging/lru")
    env = pages._env(pages.TEMPLATES)
    common = pages._common(pages.load_content(), PRESETS)
    page = env.get_template("concept.html").render(
        root="../../../",
        topic="paging",
        c=c,
        attrs=concept_pages.figure_attrs(c),
        data=concept_pages.page_data(c),
        code=concept_pages.code_blocks(c),
        editable=concept_pages.editable(c),
        lessons=tracks.of(c.slug),
        **common,
    )
    for heading in ("Hands-on", "What it is", "How it works", "When to use it", "Trade-offs", "Where it runs"):
        assert f">{heading}</h2>" in page
    assert (
        '<contention-sim caption="false" preset="paging-locality" panels="lru,lfu" data-focus="lru" controls="basic">'
        in page
    )
    assert page.count("data-step-go=") == len(c.steps) and page.count("data-concept-quiz=") == len(c.quiz)
    assert 'href="../../../play/paging-locality/#editor=lru"' in page  # "edit this policy"
    assert "class LRU(Replacement)" in html.unescape(re.sub(r"<[^>]+>", "", page))  # the algorithm's own source
    assert "def serve" not in page  # its inlined fast path is left out, as in the editor
    assert 'class="lesson-bar" data-track="vllm-reinvented-the-os"' in page and "1 of 19" in page
    for r in c.real + c.reading:
        assert (r.get("source") or r["url"]) in page


def test_the_engine_policies_name_the_code_their_page_shows():
    """A registered class with no statement of its own (a setting of the engine) needs ``code``."""
    c = concepts.Concept("engine", "paged", "x.toml")
    with pytest.raises(ValueError, match=r"x.toml: .*name the code to show with code"):
        concept_pages.code_blocks(c)


def test_figure_attributes_use_the_link_formats():
    c = concepts.load("paging")["lru"]
    fig = concepts.Figure("paging-loop", ("lru",), "x", at=2.5, speed=2.0, overrides=(("defaults.frames", 30),))
    attrs = concept_pages.figure_attrs(concepts.Concept("paging", "lru", c.path, figure=fig))
    assert attrs == {
        "preset": "paging-loop",
        "panels": "lru",
        "data-focus": "lru",
        "controls": "basic",
        "t": "2.5",
        "autoplay": "false",
        "speed": "2",
        "overrides": "defaults.frames=30",
    }


def test_the_five_tracks_exist_in_order_with_their_times():
    tracks = track_pages.load(PRESETS, {})
    titles = {t.title: t for t in tracks.all}
    for title in (
        "vLLM reinvented the operating system",
        "Graph algorithms in 100 minutes",
        "Caching from LRU to S3-FIFO",
        "Distributed systems under partition",
        "Your LLM app's 429s",
    ):
        assert title in titles and titles[title].minutes > 0 and len(titles[title].lessons) >= 5
    vllm = titles["vLLM reinvented the operating system"].lessons
    assert (
        vllm.index("paging/lru")
        < vllm.index("engine/paged")
        < vllm.index("hashing/ring")
        < vllm.index("cluster/precise_prefix")
    )
    place = {p["track"]: p for p in tracks.of("hashing/ring")}
    assert place["vllm-reinvented-the-os"]["at"] == 5 and place["vllm-reinvented-the-os"]["count"] == 19
    assert place["distributed-systems-under-partition"]["prev"] is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('title = "t"\nsummary = "s"\nminutes = 10\nlessons = ["paging/lru", "paging/mru"]\n', "lessons[1]: expected"),
        (
            'title = "t"\nsummary = "s"\nminutes = 10\nlessons = ["paging/lru", "play/nowhere"]\n',
            "lessons[1]: expected",
        ),
        ('title = "t"\nsummary = "s"\nminutes = 0\nlessons = ["paging/lru", "paging/fifo"]\n', "minutes: expected"),
        (
            'title = "t"\nsummary = "s"\nminutes = 5\nlessons = ["paging/lru", "paging/lru"]\n',
            "lessons: a lesson is listed twice",
        ),
        (
            'title = "t"\nsummary = "s"\nminutes = 5\nhours = 1\nlessons = ["paging/lru", "paging/fifo"]\n',
            "hours: unknown field",
        ),
    ],
)
def test_a_bad_track_names_its_file_and_field(tmp_path, text, says):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(f"{path}: {says}")):
        track_pages.read(path, {p.name for p in PRESETS})


def test_the_search_index_covers_concepts_presets_topics_and_tracks():
    learn = concept_pages.gather(PRESETS)
    tracks = track_pages.load(PRESETS, {})
    index = search_index.entries(pages.load_content(), PRESETS, learn, tracks)
    kinds = {e["k"] for e in index}
    assert kinds == set(search_index.KINDS)
    urls = {e["u"] for e in index}
    assert (
        "topics/hashing/ring/" in urls and "play/tpm-429-under-limit/" in urls and "tracks/your-llm-apps-429s/" in urls
    )
    assert len([e for e in index if e["k"] == "preset"]) == len(PRESETS)
    ring = next(e for e in index if e["u"] == "topics/hashing/ring/")
    assert "hashing" in ring["g"] and "consistent hashing" in ring["g"] and "cassandra" in ring["x"]
    assert "ford" in search_index._words("bellman_ford").split()


def test_every_topic_links_its_concepts_and_every_preset_the_concepts_it_runs():
    learn = concept_pages.gather(PRESETS)
    assert [c.name for c in learn.listed("hashing")] == sorted(
        learn.concepts["hashing"], key=lambda n: learn.concepts["hashing"][n].title
    )
    assert {c.name for c in learn.by_preset["hashing-add-node"]} == {"modulo", "ring", "rendezvous", "jump"}
    for p in PRESETS:
        assert all(c.topic == p.topic for c in learn.by_preset[p.name])
    assert set(learn.concepts) == set(registry.topic_names())


def test_highlighting_keeps_the_source_character_for_character():
    from sims.core import policysource

    for topic, name in (("paging", "lru"), ("hashing", "ring"), ("paging", "clock")):
        for _, src in policysource.class_sources(topic, name):
            out = python_html(src)
            assert html.unescape(re.sub(r"<[^>]+>", "", out)) == src
            assert '<span class="tok-kw">class</span>' in out
    assert python_html("def f(:\n  'x") == html.escape("def f(:\n  'x")  # a fragment comes back plain
