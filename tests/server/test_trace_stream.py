"""Trace downloads: the stream is generated in a trace worker one event at a time
and sent chunk by chunk, so neither the server nor the worker holds it whole; the bytes are the
ones ``run --trace-out`` writes."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import httpx
import pytest

from sims.core import api, presets, stream
from web.server.api.jobs import run_events, trace_chunks

from .test_api import short

PRESET = "ratelimit-burst"


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", presets.preset_names())
def test_generated_stream_equals_the_run_stream(name):
    p = presets.load(name)
    for seed, duration in ((p.seed, short(p)), (5, short(p) / 2)):
        events, end = stream.for_run(p, seed, duration)
        assert list(run_events(p, seed, duration)) == events[:end]


def test_download_bytes_are_the_trace_out_file(client, tmp_path):
    out = tmp_path / "t.jsonl"
    events, end = stream.for_run(presets.load(PRESET), 4, 20.0)
    stream.write(events[:end], out)
    r = client.get(f"/api/trace/{PRESET}", params={"seed": 4, "duration": 20})
    assert r.content == out.read_bytes()
    assert r.content.endswith(b"\n")
    # stream_sha256 hashes the lines joined by newlines: the file without its final newline
    digest = hashlib.sha256(r.content.removesuffix(b"\n")).hexdigest()
    assert digest == api.run(PRESET, 4, 20.0)["stream_sha256"]
    assert b"".join(trace_chunks(PRESET, 4, 20.0, 10**6, chunk=7)) == r.content


def test_a_large_download_is_never_held_whole(main_server):
    """290,000 events (11 MB): the server and the trace worker grow by far less. (cache-scan's
    workload is itself a generator; periodic_burst, for one, builds its arrival list first.)"""
    server_before = rss_kb(main_server.proc.pid)
    workers = main_server.worker_pids("trace")
    workers_before = {pid: rss_kb(pid, "VmHWM") for pid in workers}
    size, peak = 0, server_before
    with httpx.stream("GET", f"{main_server.url}/api/trace/cache-scan", params={"duration": 290}, timeout=120) as r:
        assert r.status_code == 200
        for chunk in r.iter_bytes():
            size += len(chunk)
            if size % 20 < 2:
                peak = max(peak, rss_kb(main_server.proc.pid))
                time.sleep(0.001)  # a slow reader: the worker must wait, not run ahead
    assert size > 11_000_000
    assert peak - server_before < 5_000, (server_before, peak)  # KB
    for pid, before in workers_before.items():
        assert rss_kb(pid, "VmHWM") - before < 5_000, (pid, before, rss_kb(pid, "VmHWM"))
