"""The GPU worker's jobs without a GPU: the replay's answer is passed through JSON-ready, and a
bare measurement is put beside the simulated run."""

from __future__ import annotations

import json
import math
import sys
import types

from sims.core import api
from web.server.api import gpu_jobs


def fake_replay_module(monkeypatch, answer):
    mod = types.ModuleType("gpu_backend.replay")
    mod.replay_preset = lambda preset, seed, duration: answer
    monkeypatch.setitem(sys.modules, "gpu_backend.replay", mod)


def test_replay_result_is_json_ready(monkeypatch):
    answer = {"sim": {"tok_s": 900.0}, "gpu": {"measured_tok_s": math.nan, "steps": (1, 2)}, "series": [math.inf]}
    fake_replay_module(monkeypatch, answer)
    out = gpu_jobs.replay("ratelimit-burst", 1, 2.0)
    assert out == {"sim": {"tok_s": 900.0}, "gpu": {"measured_tok_s": None, "steps": [1, 2]}, "series": [None]}
    json.dumps(out, allow_nan=False)


def test_bare_measurement_goes_beside_the_simulated_run(monkeypatch):
    fake_replay_module(monkeypatch, {"measured_s": 1.25})
    out = gpu_jobs.replay("ratelimit-burst", 3, 2.0)
    assert out == {"sim": api.run("ratelimit-burst", 3, 2.0), "gpu": {"measured_s": 1.25}}
