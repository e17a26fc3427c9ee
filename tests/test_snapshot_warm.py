"""The site's snapshot imports every topic before it is taken (web/pyodide/warm.py): the registry a
page then sees must be the one the code fills on its own, in the same order."""

from __future__ import annotations

import json
import subprocess
import sys

from sitebuild.pack import ROOT

REGISTRY = """
import json, sys
from sims.core import registry as r
def state():
    return {"policies": {t: list(p) for t, p in r._POLICIES.items()}, "workloads": list(r._WORKLOADS),
            "topics": list(r._TOPICS)}
"""


def _run(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", REGISTRY + code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_warm_fills_the_registry_as_the_code_does():
    lazy = _run("for t in r.topic_names(): r.load_topic(t)\nr.workloads()\nprint(json.dumps(state()))")
    warm = _run(
        "from web.pyodide.warm import warm\nn = warm()\n"
        "print(json.dumps(state() | {'n': n, 'cli': 'sims.cli' in sys.modules, 'topics_in': sorted(r.topic_names())}))"
    )
    assert warm.pop("n") > 100  # the topics' modules, their policies, the adversary search, ...
    assert not warm.pop("cli"), "the command line has no place in a page's memory"
    assert sorted(warm["topics"]) == warm.pop("topics_in")  # every topic is in the snapshot
    assert warm == lazy
