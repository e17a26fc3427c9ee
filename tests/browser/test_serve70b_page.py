"""topics/cluster/serve-70b/: the answer the build rendered, and capacity.js's answer when the
reader changes the users, the GPU, the SLO and the router, word for word what
sitebuild/capacity.py says for the same choice; both figures run live."""

from __future__ import annotations

import pytest

from sitebuild import capacity

pytestmark = pytest.mark.browser


def test_the_answer_moves_with_the_choices_and_agrees_with_python(page, server):
    data = capacity.load()
    page.goto(f"{server}topics/cluster/serve-70b/")
    answer = page.locator(".capacity-answer")
    assert answer.inner_text().strip() == capacity.sentence(data, **capacity.DEFAULT)
    choices = [
        {"users": 5000, "gpu": "H200", "slo": "chat", "router": "random"},
        {"users": 20000, "gpu": "H100-80GB", "slo": "tight", "router": "round_robin"},
        {"users": 1000, "gpu": "H100-80GB", "slo": "chat", "router": "precise_prefix"},
    ]
    seen = set()
    for c in choices:
        for name, value in c.items():
            page.select_option(f".capacity-form select[name={name}]", str(value))
        text = answer.inner_text().strip()
        assert text == capacity.sentence(data, **c), c
        cell = data["cells"][f"{c['gpu']}/{c['slo']}/{c['router']}"]
        assert page.locator(".capacity-command").inner_text() == cell["command"]
        assert page.locator(".capacity-probes li").count() == len(cell["probes"])
        seen.add(text)
    assert len(seen) == len(choices)
    # both figures go live when scrolled to (the page's point is in them, not only in the table)
    sims = page.locator("contention-sim")
    assert sims.count() == 2
    for k in range(2):
        sims.nth(k).scroll_into_view_if_needed()
        page.wait_for_function(
            "(k) => ['ready', 'running', 'paused'].includes(document.querySelectorAll('contention-sim')[k].dataset.state)",
            arg=k,
            timeout=90_000,
        )
    assert not page.errors
