"""The policy editor's bundle: CodeMirror 6 and its Python mode, from ``node_modules``, bundled by
esbuild (a devDependency) into ``dist/static/vendor/codemirror/codemirror.js``. Nothing tracked is
written: the entry is ``bundles/codemirror.js`` beside this file, the output goes under ``out``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sims.core.limits import InputError
from sitebuild.pack import ROOT

ENTRY = Path(__file__).resolve().parent / "bundles" / "codemirror.js"
NEEDS = ("codemirror", "@codemirror/lang-python", "esbuild")  # npm packages (package.json)


def build_editor(out: Path) -> Path:
    """Bundle the editor into ``out/static/vendor/codemirror/codemirror.js`` and return its path."""
    nm = ROOT / "node_modules"
    for pkg in NEEDS:
        if not (nm / pkg / "package.json").exists():
            raise InputError(f"{nm / pkg} is missing: run `npm ci` first")
    dest = out / "static" / "vendor" / "codemirror" / "codemirror.js"
    dest.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        str(nm / ".bin" / "esbuild"),
        str(ENTRY),
        "--bundle",
        "--format=esm",
        "--minify",
        "--legal-comments=none",
        "--log-level=warning",
        f"--outfile={dest}",
    ]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise InputError(f"bundling the editor failed: {(done.stderr or done.stdout).strip()[-400:]}")
    return dest
