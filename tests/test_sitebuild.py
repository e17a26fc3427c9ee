"""The site build is its own package: no import cycle with the server, the Pyodide bridge on sims
alone, a build that leaves the source tree alone and writes its stamp."""

from __future__ import annotations

import ast
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
def test_a_build_writes_its_stamp_and_leaves_the_source_tree_alone(tmp_path):
    pytest.importorskip("jinja2")
    if not (ROOT / "node_modules" / "pyodide").exists():
        pytest.skip("needs npm ci")
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "docs").glob("*.md")}
    out = sitebuild.build(tmp_path / "dist")
    assert (out / sitebuild.STAMP).is_file() and (out / "docs" / "embedding.md").is_file()
    assert {p: p.stat().st_mtime_ns for p in (ROOT / "docs").glob("*.md")} == before


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
