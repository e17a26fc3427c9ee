"""sims/ imports nothing outside the standard library, and has no wall clock in simulation code."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _top_level_imports(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node, a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node, node.module.split(".")[0]


def test_sims_imports_only_stdlib():
    allowed = set(sys.stdlib_module_names) | {"sims"}
    bad = []
    for path in sorted((ROOT / "sims").rglob("*.py")):
        for node, mod in _top_level_imports(path):
            if mod not in allowed:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports {mod}")
    assert not bad, "\n".join(bad)


@pytest.mark.slow  # runs every preset
def test_running_every_topic_loads_no_third_party_module():
    code = (
        "import sys\n"
        "from sims.core import presets, api\n"
        "for p in presets.all_presets():\n"
        "    api.run(p.name, duration=min(p.duration, 0.05 * p.duration + 1))\n"
        "import sims.cli\n"
        "std = set(sys.stdlib_module_names) | {'sims', '__main__', '_distutils_hack'}\n"
        "std |= {m for m in sys.modules if m.startswith('__editable__')}\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} - std)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "", f"third-party modules loaded: {out.stdout.strip()}"


def test_no_wall_clock_or_global_random_in_simulation_code():
    bad = []
    for path in sorted((ROOT / "sims").rglob("*.py")):
        text = path.read_text()
        for needle in (
            "time.time(",
            "perf_counter",
            "datetime.now",
            "time.monotonic",
            "random.random(",
            "random.seed(",
            "random.choice(",
            "random.randint(",
            "random.shuffle(",
        ):
            if needle in text:
                bad.append(f"{path.relative_to(ROOT)}: {needle}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hash":
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: builtin hash()")
    assert not bad, "\n".join(bad)


def _sims_imports(path):
    """Every ``sims`` module a file imports, at any depth (lazy imports included)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "sims":
                    yield node, a.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "sims":
                yield node, node.module
                for a in node.names:  # ``from sims import cache``
                    yield node, f"{node.module}.{a.name}"


def test_core_imports_no_topic_package_and_no_topic_library():
    """Topics hand core what it needs through their ``Topic`` record (DESIGN.md, Layering)."""
    topics = {p.parent.name for p in (ROOT / "sims").glob("*/topic.toml")}
    assert {"cache", "engine", "paging"} <= topics
    forbidden = topics | {"replace", "net"}
    bad = []
    for path in sorted((ROOT / "sims" / "core").rglob("*.py")):
        for node, mod in _sims_imports(path):
            parts = mod.split(".")
            if len(parts) > 1 and parts[1] in forbidden:
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports {mod}")
    assert not bad, "\n".join(bad)
