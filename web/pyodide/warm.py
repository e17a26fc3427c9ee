"""What the site's memory snapshot holds beyond the bridge (sitebuild/snapshot.mjs calls ``warm``).

Importing a topic in the browser means compiling its source in WebAssembly: about a second for the
first scenario of a cold page. Imported before the snapshot is taken, every topic's code is already
in the restored memory. The registry is filled first in the order the code itself fills it (each
topic's package, then the workload generators), so the rest of ``sims`` imported after it registers
nothing new: ``tests/test_snapshot_warm.py`` checks that the registry is the same either way.
"""

from __future__ import annotations

import importlib
import pkgutil

SKIP = ("sims.__main__", "sims.cli")  # the command line: argparse and files, never in a page


def warm() -> int:
    """Import every topic, every workload generator and the rest of ``sims``; the modules imported."""
    import sys

    import sims
    from sims.core import registry

    before = len(sys.modules)
    for name in registry.topic_names():
        registry.load_topic(name)
    registry.workloads()
    _walk(sims)
    return len(sys.modules) - before


def _walk(package) -> None:
    """Import the modules under ``package``, leaving SKIP's out (pkgutil.walk_packages would import
    every package it descends into)."""
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name not in SKIP:
            module = importlib.import_module(info.name)
            if info.ispkg:
                _walk(module)
