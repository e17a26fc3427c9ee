"""The static site build (``contention build``): everything that turns the checkout into dist/.

``build(out, progress=None)`` renders the pages from ``templates/`` (shipped inside this package),
precomputes each preset's poster in CPython through ``web.pyodide.bridge``, packs the Python for
Pyodide (``pack_python``), writes the embeds, copies the front end and the vendor files, and
writes ``STAMP`` last. The server builds through the same call and reads ``SOURCES`` to tell a
stale build. This package imports only the standard library at import time (jinja2 inside
``build``), and nothing from the server.
"""

from __future__ import annotations

from sitebuild.pack import ROOT, pack_python, python_files
from sitebuild.pages import STAMP, build

# what a build reads, relative to ROOT: a build older than any of them is stale
SOURCES = ("sims", "presets", "sitebuild", "web/static", "web/pyodide", "web/__init__.py", "package-lock.json")

__all__ = ["ROOT", "SOURCES", "STAMP", "build", "pack_python", "python_files"]
