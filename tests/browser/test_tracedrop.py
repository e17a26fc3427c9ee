"""Trace drops in chromium: a small file of each format, dropped on (or chosen on) a preset page,
becomes the stream of every panel, and the panels end with the metrics `contention run --trace-in F
--trace-format X` prints; a bad file shows the line of its error and the preset keeps playing; a
large file goes to the worker in slices; the page says the link does not carry the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import screenshot, sim_eval, wait_live

from sims.core import presets, traceformats
from sims.core.scenario import Scenario

pytestmark = pytest.mark.browser

SAMPLES = Path(__file__).resolve().parents[2] / "docs" / "samples"


def cli_panels(preset: str, path: Path, fmt: str, panels: list[str]) -> dict:
    """What `run PRESET --trace-in PATH --trace-format FMT --panels ...` computes, through JSON."""
    p = presets.load(preset)
    events, duration = traceformats.load(path, fmt, p)
    return json.loads(json.dumps(Scenario(p, None, duration, panels, events=events).run().result()))


def open_page(page, server: str, name: str) -> None:
    page.goto(f"{server}play/{name}/")
    wait_live(page)
    page.wait_for_selector("[data-trace-drop]:not([hidden])", timeout=30_000)


def choose(page, path: Path, fmt: str = "auto") -> None:
    page.select_option("[data-trace-drop] select", fmt)
    page.set_input_files("[data-trace-drop] input[type=file]", str(path))


def drop(page, name: str, text: str | bytes) -> None:
    """A real drop event carrying a File, as a reader's drag from the desktop makes."""
    data = list(text) if isinstance(text, bytes) else text
    page.evaluate(
        """([name, data]) => {
          const dt = new DataTransfer();
          const body = typeof data === "string" ? data : new Uint8Array(data);
          dt.items.add(new File([body], name, {type: "text/plain"}));
          const target = document.querySelector("contention-sim");
          for (const type of ["dragover", "drop"])
            target.dispatchEvent(new DragEvent(type, {dataTransfer: dt, bubbles: true, cancelable: true}));
        }""",
        [name, data],
    )


def settled(page, state: str) -> None:
    page.wait_for_function(
        f"() => document.querySelector('[data-trace-drop]').dataset.state === {state!r}"
        " && ['ready', 'running', 'paused'].includes(document.querySelector('contention-sim').dataset.state)",
        timeout=120_000,
    )


def end_snapshot(page) -> dict:
    return sim_eval(page, "sim.pause(); await sim.seek(sim.meta.duration); return await sim.snapshot();")


def shown(page) -> list[str]:
    return sim_eval(page, "return sim.panelNames;")


def check_trace_plays(page, preset: str, sample: str, fmt: str) -> dict:
    before = sim_eval(page, "sim.pause(); await sim.seek(5); return await sim.snapshot();")
    choose(page, SAMPLES / sample)
    settled(page, "loaded")
    assert page.get_attribute("[data-trace-drop]", "data-format") == fmt
    want = cli_panels(preset, SAMPLES / sample, fmt, shown(page))
    assert sim_eval(page, "return sim.meta.duration;") == want["duration"]
    snap = end_snapshot(page)
    assert snap["t"] == want["duration"]
    assert snap["panels"] == want["panels"], f"{sample} on {preset}: the page and `run --trace-in` disagree"
    at5 = sim_eval(page, "await sim.seek(5); return await sim.snapshot();")
    assert at5["panels"] != before["panels"], "the panels still show the preset's own stream"
    return snap


def test_llm_traces_become_the_stream_of_every_panel(page, server):
    open_page(page, server, "prefix-sharing")
    text = page.inner_text("[data-trace-drop]")
    assert "Azure" in text and "Mooncake" in text and "page numbers" not in text
    snap = check_trace_plays(page, "prefix-sharing", "mooncake-chat.jsonl", "mooncake")
    assert snap["panels"]["caching-on"]["prefix_hit_rate"] > 0.5  # shared hash ids hit the cache
    # the page says what a link reproduces, and the terminal line names the trace
    assert page.is_visible("[data-trace-drop] .td-note")
    assert "a link cannot carry it" in page.inner_text("[data-trace-drop] .td-note")
    assert "without your trace" in page.inner_text("[data-copy-link]")
    assert "--trace-format mooncake" in page.text_content("details.cli code")
    assert page.is_disabled('.cs-param input[data-target="workload.rate"]')  # the trace sets the arrivals
    screenshot(page, "tracedrop-mooncake")
    check_trace_plays(page, "prefix-sharing", "azure-code.csv", "azure")

    # a bad row: the line is shown, the trace that played before keeps playing
    rows = (SAMPLES / "mooncake-chat.jsonl").read_text().splitlines()
    rows[3] = rows[3].replace('"hash_ids": [', '"hash_ids": ["x", ')
    drop(page, "bad.jsonl", "\n".join(rows) + "\n")
    settled(page, "error")
    status = page.inner_text("[data-trace-drop] .td-status")
    assert "bad.jsonl:4:" in status and "hash_ids" in status, status
    assert page.get_attribute("[data-trace-drop] .td-status", "role") == "alert"

    # back to the preset's own stream: the link and the terminal line are the preset's again
    page.click("text=Back to the preset's own stream")
    settled(page, "idle")
    assert sim_eval(page, "return sim.meta.duration;") == presets.load("prefix-sharing").duration
    assert "without your trace" not in page.inner_text("[data-copy-link]")
    assert not page.is_disabled('.cs-param input[data-target="workload.rate"]')
    assert not page.errors, page.errors


def test_classic_traces_become_the_stream(page, server):
    open_page(page, server, "paging-belady")
    check_trace_plays(page, "paging-belady", "pages.txt", "pages")
    # a large file goes to the worker in 1 MiB slices; after 3.5 MB of comments, Belady's string
    big = ("# " + "x" * 1000 + "\n") * 3500 + "1 2 3 4 1 2 5 1 2 3 4 5\n"
    chunks = sim_eval(page, "return (sim.worker.timings.trace_chunk || []).length;")
    drop(page, "big.txt", big)
    settled(page, "loaded")
    assert sim_eval(page, "return (sim.worker.timings.trace_chunk || []).length;") - chunks >= 4
    snap = end_snapshot(page)
    assert snap["panels"]["fifo-3"]["faults"] == 9 and snap["panels"]["fifo-4"]["faults"] == 10, snap
    # a file whose first slice says it holds more than twice the browser's 1M events: refused at once
    chunks = sim_eval(page, "return sim.worker.timings.trace_chunk.length;")
    drop(page, "many.txt", "1\n" * 2_200_000)
    settled(page, "error")
    assert "about 2200000 rows" in page.inner_text("[data-trace-drop] .td-status")
    assert sim_eval(page, "return sim.worker.timings.trace_chunk.length;") == chunks + 1
    # a bad token names its line
    drop(page, "refs.txt", "1 2 3\n4 5 6\n7 x 9\n")
    page.wait_for_function(
        "() => document.querySelector('[data-trace-drop] .td-status').textContent.startsWith('refs.txt:3:')"
    )
    settled(page, "error")
    assert not page.errors, page.errors


@pytest.mark.parametrize(
    ("preset", "sample", "fmt"), [("cache-scan", "keys.txt", "keys"), ("ratelimit-burst", "arrivals.txt", "arrivals")]
)
def test_keys_and_arrivals_become_the_stream(page, server, preset, sample, fmt):
    open_page(page, server, preset)
    check_trace_plays(page, preset, sample, fmt)
    drop(page, "bytes.txt", b"1\n2\n\xff\xfe\n")  # not UTF-8
    settled(page, "error")
    assert "bytes.txt:3: not UTF-8" in page.inner_text("[data-trace-drop] .td-status")
    assert not page.errors, page.errors


def test_a_trace_of_another_kind_asks_before_it_plays_and_says_what_was_detected(page, server):
    """An Azure CSV dropped on cache-scan was read as 301 cache keys without a word: the page now
    says what it detected, asks, and plays it only if the reader says so."""
    open_page(page, server, "cache-scan")
    azure = (SAMPLES / "azure-code.csv").read_text()
    drop(page, "azure-code.csv", azure)
    page.wait_for_selector("[data-trace-anyway]", timeout=30_000)
    assert "looks like Azure" in page.inner_text("[data-trace-drop] .td-detected")
    page.click("[data-trace-cancel]")
    page.wait_for_function("() => document.querySelector('[data-trace-drop]').dataset.state === 'idle'")
    assert sim_eval(page, "return sim.meta.duration;") == presets.load("cache-scan").duration  # its own stream
    drop(page, "azure-code.csv", azure)
    page.click("[data-trace-anyway]")
    settled(page, "loaded")
    assert page.get_attribute("[data-trace-drop]", "data-format") == "keys"
    # a file that looks like what the page takes plays at once, and the page says what it read
    drop(page, "keys.txt", (SAMPLES / "keys.txt").read_text())
    page.wait_for_function(
        "() => document.querySelector('[data-trace-drop] .td-detected').textContent.startsWith('Detected: cache keys')"
    )
    page.wait_for_function(
        "() => document.querySelector('[data-trace-drop]').dataset.state !== 'reading'", timeout=60_000
    )
    settled(page, "loaded")
    assert not page.errors, page.errors
