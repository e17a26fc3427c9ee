"""The Content-Security-Policy the build writes into every page (sitebuild/csp.py): first in the
head, allowing the page's inline scripts by hash (as `contention serve`'s header does), nothing
from another origin, workers from blob: only (tests/browser/test_links.py runs it in chromium)."""

from __future__ import annotations

import pytest

from sitebuild import csp
from web.server.static import inline_script_hashes

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>t</title>
<script type="application/json" data-x>{"a": 1}</script>
<script src="x.js"></script>
</head>
<body><script>
  document.body.dataset.n = "é";
</script><script type="module">import "./y.js";</script></body>
</html>
"""


def test_the_policy_comes_first_and_allows_the_inline_scripts_by_hash():
    out = csp.with_policy(PAGE)
    meta = '<meta http-equiv="Content-Security-Policy" content="'
    assert out.index(meta) > out.index('<meta charset="utf-8">') and out.index(meta) < out.index("<script")
    content = out[out.index(meta) + len(meta) :].split('"', 1)[0]
    hashes = [f"'sha256-{h}'" for h in inline_script_hashes(PAGE.encode())]
    assert len(hashes) == 2 and csp.inline_hashes(PAGE) == hashes  # not the JSON, not src=
    directives = dict(d.strip().split(" ", 1) for d in content.split(";"))
    assert directives["script-src"] == "'self' 'wasm-unsafe-eval' " + " ".join(hashes)
    assert directives["connect-src"] == "'self'" and directives["worker-src"] == "blob:"
    assert directives["default-src"] == "'self'" and directives["object-src"] == "'none'"
    assert "unsafe-eval'" not in content.replace("wasm-unsafe-eval", "")
    assert csp.with_policy(out) == out  # a page an earlier build left: the same one meta


def test_a_page_without_a_head_is_our_bug():
    with pytest.raises(ValueError, match="x.html: has no <head>"):
        csp.with_policy("<p>hi</p>", "x.html")


def test_secure_writes_every_page_but_vendored_files(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "static" / "vendor").mkdir(parents=True)
    for rel in ("index.html", "a/b/index.html", "static/vendor/demo.html"):
        (tmp_path / rel).write_text(PAGE, encoding="utf-8")
    assert csp.secure(tmp_path) == 2
    assert "Content-Security-Policy" in (tmp_path / "a" / "b" / "index.html").read_text(encoding="utf-8")
    assert (tmp_path / "static" / "vendor" / "demo.html").read_text(encoding="utf-8") == PAGE
