"""The answers on "Serve a 70B model to 10,000 concurrent users" (sitebuild/capacity.py): the file
the build reads holds what ``contention plan`` says today, and the page's arithmetic on it keeps the
promises a capacity answer must keep (issue 31: monotone in users and in the SLO)."""

from __future__ import annotations

import html
import json
import shlex

import pytest

from sitebuild import capacity

DATA = capacity.load()
CELLS = [(g, s, r) for g in DATA["gpus"] for s in DATA["slos"] for r in DATA["routers"]]


def _plan_json(capsys, gpu: str, slo: str, router: str) -> dict:
    from sims import cli

    assert cli.main([*capacity.command(gpu, slo, router), "--json", "--workers", "2"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("gpu", "slo", "router"), [("H100-80GB", "chat", "precise_prefix"), ("H100-80GB", "chat", "random")]
)
def test_the_file_holds_what_plan_answers_today(capsys, gpu, slo, router):
    """Two cells replanned through the CLI, as the page prints the command: the same configuration,
    GPUs, price and $ per million output tokens (else: python -m sitebuild.capacity --update)."""
    got = _plan_json(capsys, gpu, slo, router)
    kept = DATA["cells"][f"{gpu}/{slo}/{router}"]
    assert got["feasible"] == kept["feasible"]
    for key in ("config", "gpus", "usd_per_hour", "usd_per_month"):
        assert got[key] == kept[key], key
    assert got["usd_per_mtok_out"] == pytest.approx(kept["usd_per_mtok_out"], rel=1e-12)
    assert shlex.split(kept["command"]) == ["contention", *capacity.command(gpu, slo, router)]


@pytest.mark.parametrize(("gpu", "slo", "router"), CELLS)
def test_each_answer_meets_its_slo_and_one_replica_fewer_does_not(gpu, slo, router):
    cell = DATA["cells"][f"{gpu}/{slo}/{router}"]
    by = {p["replicas"]: p for p in cell["probes"]}
    if not cell["feasible"]:
        assert not any(p["ok"] for p in cell["probes"]) and cell["binding"] in DATA["slos"][slo]["targets"]
        return
    n = cell["config"]["defaults.replicas"]
    assert by[n]["ok"]
    assert n == 1 or not by[n - 1]["ok"], f"{n - 1} replicas were not shown to miss"
    assert all(p["ok"] == (p["replicas"] >= n) for p in cell["probes"]), "the probes are not monotone"


def test_more_users_never_get_fewer_gpus_and_a_tighter_slo_never_costs_less():
    for gpu, slo, router in CELLS:
        answers = [capacity.answer(DATA, u, gpu, slo, router) for u in capacity.USERS]
        if answers[0]["feasible"]:
            gpus = [a["gpus"] for a in answers]
            assert gpus == sorted(gpus) and gpus[-1] > gpus[0]
    for gpu in DATA["gpus"]:
        for router in DATA["routers"]:
            loose = capacity.answer(DATA, 10_000, gpu, "chat", router)
            tight = capacity.answer(DATA, 10_000, gpu, "tight", router)
            if tight["feasible"]:
                assert loose["feasible"] and loose["usd_per_hour"] <= tight["usd_per_hour"]


def test_the_default_answer_is_ten_slices_of_the_plan():
    a = capacity.answer(DATA, **capacity.DEFAULT)
    cell = DATA["cells"]["H100-80GB/chat/precise_prefix"]
    assert a["slices"] == 10 and a["gpus"] == 10 * cell["gpus"] and a["usd_per_month"] == 10 * cell["usd_per_month"]
    text = capacity.sentence(DATA, **capacity.DEFAULT)
    assert text.startswith("10,000 users: ") and f"{a['gpus']:,} GPUs" in text


def test_the_pooled_check_meets_the_slo_and_reruns_the_same():
    """Three slices behind one router, at the answer's size: the file's figures are today's run."""
    ck = DATA["check"]
    assert ck["users"] == capacity.POOLED * DATA["slice_users"] and all(r["met"] for r in ck["runs"])
    again = capacity.check(ck["replicas"] // capacity.POOLED, ck["gpu"], ck["slo"], ck["router"], seeds=(7,))
    assert again["runs"][0] == ck["runs"][0]


def test_the_page_renders_the_answer_and_its_evidence():
    pytest.importorskip("jinja2")
    from sims.core import presets, registry
    from sitebuild import pages

    content = pages.load_content()
    common = pages._common(content, presets.all_presets())
    (extra,) = [p for p in registry.topic_info("cluster").pages if p["slug"] == "serve-70b"]
    page_html = (
        pages._env(pages.TEMPLATES)
        .get_template("page.html")
        .render(
            root="../../../",
            topic="cluster",
            text=content["topics"]["cluster"],
            page=extra,
            presets=common["by_topic"]["cluster"],
            quizzes=[],
            capacity=capacity.answers(),
            **common,
        )
    )
    assert capacity.sentence(DATA, **capacity.DEFAULT) in html.unescape(page_html)
    assert page_html.count("<contention-sim") == 2 and "capacity.js" in page_html
    assert DATA["cells"]["H100-80GB/chat/precise_prefix"]["command"] in html.unescape(page_html)
    assert page_html.count("<tr>") == 1 + len(CELLS)
