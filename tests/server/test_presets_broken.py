"""A broken preset file: the server starts, lists it as unavailable with its error,
logs it, and answers a JSON 4xx (never a 500) wherever it is asked for; the good presets work."""

from __future__ import annotations

import shutil

import httpx
import pytest

from .harness import ROOT, start_server, stop_server

pytestmark = pytest.mark.slow  # real server processes and timeouts: `make test` runs it, `make check` does not

GOOD = "ratelimit-burst"


def _variant(source: str, name: str, edit) -> str:
    text = (ROOT / "sims" / "presets" / f"{source}.toml").read_text()
    return edit(text.replace(f'name = "{source}"', f'name = "{name}"'))


BROKEN = {
    # a wrong type at the top: the index used to be a 500
    "bad-title": _variant(GOOD, "bad-title", lambda t: t.replace("title = ", "title = 5 #", 1)),
    # a wrong type that the loader meets with a TypeError: /api/presets/NAME and /api/run were 500
    "bad-controls": "controls = 3\n" + _variant(GOOD, "bad-controls", lambda t: t.split("[[controls]]")[0]),
    # loads, but its workload divides by zero when generated: /api/run and /api/trace were 500
    "bad-rate": _variant("cache-zipf", "bad-rate", lambda t: t.replace("rate = 1000.0", "rate = 0", 1)),
    "not-toml": "name = \n",
}


@pytest.fixture(scope="module")
def broken_server(tmp_path_factory):
    base = tmp_path_factory.mktemp("broken")
    folder = base / "presets"
    folder.mkdir()
    for name in (GOOD, "cache-zipf"):
        shutil.copy(ROOT / "sims" / "presets" / f"{name}.toml", folder)
    for name, text in BROKEN.items():
        (folder / f"{name}.toml").write_text(text)
    server = start_server(base, {"CONTENTION_WORKERS": "1", "CONTENTION_PRESETS": str(folder)})
    yield server
    stop_server(server)


def test_index_lists_broken_presets_as_unavailable(broken_server):
    r = httpx.get(f"{broken_server.url}/api/presets")
    assert r.status_code == 200
    items = {p["name"]: p for p in r.json()}
    assert set(items) == {GOOD, "cache-zipf", *BROKEN}
    assert items[GOOD]["available"] is True and items[GOOD]["topic"] == "ratelimit"
    for name in ("bad-title", "bad-controls", "not-toml"):
        assert set(items[name]) == {"name", "available", "error"}, items[name]
        assert items[name]["available"] is False and f"{name}.toml" in items[name]["error"]
    assert "title" in items["bad-title"]["error"]
    log = broken_server.log_text()
    assert "preset bad-title is unavailable" in log


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_preset_is_never_a_500(broken_server, name):
    answers = [
        httpx.get(f"{broken_server.url}/api/presets/{name}"),
        httpx.post(f"{broken_server.url}/api/run", json={"preset": name, "duration": 1}),
        httpx.get(f"{broken_server.url}/api/trace/{name}", params={"duration": 1}),
    ]
    for r in answers:  # bad-rate too: workload parameters are checked when a preset loads
        assert r.status_code == 422, (r.request.url, r.status_code, r.text)
        body = r.json()
        assert body["field"] in ("name", "preset") and name in body["error"]
    good = httpx.post(f"{broken_server.url}/api/run", json={"preset": GOOD, "duration": 1})
    assert good.status_code == 200 and good.json()["panels"]
    assert "Traceback" not in broken_server.log_text()
