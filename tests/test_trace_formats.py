"""`run PRESET --trace-in F --trace-format azure|mooncake|pages|keys|arrivals`. Each
sample of docs/samples runs; Mooncake's shared hash ids share KV blocks; every bad row is refused
with exit 2 and one line naming file:line and the field; the browser's chunked line splitter gives
the CLI's stream exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sims import cli as cli_mod
from sims.core import presets, stream, traceformats
from sims.core.llmtraces import MAX_TOKENS, stamp_ns
from sims.core.trace import TraceError, read_lines
from sims.engine.blocks import block_hashes

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "docs" / "samples"
# sample -> (format, a preset it fits)
RUNS = {
    "azure-code.csv": ("azure", "prefix-sharing"),
    "mooncake-chat.jsonl": ("mooncake", "prefix-sharing"),
    "pages.txt": ("pages", "paging-belady"),
    "keys.txt": ("keys", "cache-scan"),
    "arrivals.txt": ("arrivals", "ratelimit-burst"),
}


def run(capsys, preset: str, path: Path, fmt: str, *extra: str) -> tuple[int, str, str]:
    rc = cli_mod.main(["run", preset, "--trace-in", str(path), "--trace-format", fmt, "--json", *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


def refused(capsys, preset: str, path: Path, fmt: str) -> str:
    rc, out, err = run(capsys, preset, path, fmt)
    assert rc == 2, (out, err)
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def test_samples_are_what_the_script_writes():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "trace_samples.py"), "--check"], capture_output=True)
    assert r.returncode == 0, r.stderr.decode()


@pytest.mark.parametrize("sample", sorted(RUNS))
def test_each_sample_runs(capsys, sample):
    fmt, preset = RUNS[sample]
    rc, out, err = run(capsys, preset, SAMPLES / sample, fmt)
    assert rc == 0, err
    result = json.loads(out)
    rows = sum(1 for _ in traceformats_rows(SAMPLES / sample, fmt))
    counted = {"azure": "completed", "mooncake": "completed", "pages": "refs", "keys": "requests"}
    for name, m in result["panels"].items():
        if fmt in ("azure", "mooncake"):
            assert m["completed"] + m["unfinished"] + m["rejected"] == rows, name
        else:
            assert m[counted.get(fmt, "requests")] == rows, name


def traceformats_rows(path: Path, fmt: str):
    rd = traceformats.reader(fmt, str(path))
    traceformats.feed(rd, read_lines(path))
    events, _ = traceformats.finish(rd, presets.load(RUNS[path.name][1]))
    return [e for e in events if e["kind"] in ("ref", "request")]


def test_shared_hash_ids_give_prefix_hits(capsys):
    rc, out, _ = run(capsys, "prefix-sharing", SAMPLES / "mooncake-chat.jsonl", "mooncake")
    panels = json.loads(out)["panels"]
    assert panels["caching-on"]["prefix_hit_rate"] > 0.5
    assert panels["caching-off"]["prefix_hit_rate"] == 0.0
    assert panels["caching-on"]["ttft_p50"] < panels["caching-off"]["ttft_p50"]
    # Azure rows say nothing of content: nothing is shared
    rc, out, _ = run(capsys, "prefix-sharing", SAMPLES / "azure-code.csv", "azure")
    assert json.loads(out)["panels"]["caching-on"]["prefix_hit_rate"] == 0.0
    # a prefix-aware router finds the shared prefixes too
    rc, out, _ = run(capsys, "routing-llmd-short", SAMPLES / "mooncake-chat.jsonl", "mooncake")
    assert json.loads(out)["panels"]["precise_prefix"]["prefix_hit_rate"] > 0.5


def test_hash_ids_map_onto_block_hashes(tmp_path):
    f = tmp_path / "t.jsonl"
    rows = [
        {"timestamp": 0, "input_length": 1300, "output_length": 5, "hash_ids": [7, 8, 9]},
        {"timestamp": 10, "input_length": 1100, "output_length": 5, "hash_ids": [7, 8, 4]},
        {"timestamp": 20, "input_length": 600, "output_length": 5, "hash_ids": [8]},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rd = traceformats.reader("mooncake", str(f))
    traceformats.feed(rd, read_lines(f))
    a, b, c = rd.events
    assert a["segments"] == [["m7", 512], ["m8", 512], ["m9", 276]]
    assert c["segments"] == [["m8", 512], ["u2", 88]]  # tokens past the ids are the row's own
    assert (b["t"], c["t"]) == (0.01, 0.02)
    for block in (16, 64, 512):
        ha, hb, hc = (block_hashes(e["segments"], block) for e in (a, b, c))
        shared = 1024 // block  # ids 7 and 8: two 512-token blocks
        assert ha[:shared] == hb[:shared]
        assert block == 512 or ha[shared] != hb[shared]  # ids 9 and 4 differ (full blocks at 16 and 64)
        assert not set(hc) & set(ha)  # id 8 at another position is another prefix


def test_azure_timestamps_are_exact():
    t0 = stamp_ns("2023-11-16 18:15:46.6805900")
    assert stamp_ns("2023-11-16 18:15:46.6805901") - t0 == 100
    assert stamp_ns("2023-11-16 18:15:46.6806") - t0 == 10_000
    assert stamp_ns("2023-11-17T00:00:00Z") - stamp_ns("2023-11-16 23:59:59.9999999") == 100
    assert stamp_ns("2024-05-10 02:00:00.009930+02:00") == stamp_ns("2024-05-10 00:00:00.00993")
    assert stamp_ns("2024-02-29 00:00:00") is not None
    for bad in ("2023-02-29 00:00:00", "2023-11-16 24:00:00", "2023-13-01 00:00:00", "18:15:46", "inf", ""):
        assert stamp_ns(bad) is None, bad


AZURE = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,100,10\n"
MOON = '{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}\n'
BAD = [
    ("azure", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46,1\n", ":1:", "GeneratedTokens"),
    ("azure", AZURE + "2023-11-16 18:15:47.1,oops,10\n", ":3:", "ContextTokens"),
    ("azure", AZURE + "2023-11-16 18:15:47.1,100,-3\n", ":3:", "GeneratedTokens"),
    ("azure", AZURE + "yesterday,100,3\n", ":3:", "TIMESTAMP"),
    ("azure", AZURE + "2023-11-16 18:15:40,100,3\n", ":3:", "backwards"),
    ("azure", AZURE + "2023-11-16 18:15:47,100\n", ":3:", "fields"),
    ("azure", AZURE + f"2023-11-16 18:15:47,{MAX_TOKENS + 1},3\n", ":3:", "ContextTokens"),
    ("azure", AZURE + "2023-11-18 18:15:47,100,3\n", ":3:", "86400"),
    (
        "mooncake",
        MOON + '{"timestamp": 5, "input_length": 600, "output_length": 5, "hash_ids": "1,2"}\n',
        ":2:",
        "hash_ids",
    ),
    (
        "mooncake",
        MOON + '{"timestamp": 5, "input_length": 600, "output_length": 5, "hash_ids": [1, "x"]}\n',
        ":2:",
        "hash_ids",
    ),
    (
        "mooncake",
        MOON + '{"timestamp": 5, "input_length": 600, "output_length": 5, "hash_ids": [1, 2, 3]}\n',
        ":2:",
        "hash_ids",
    ),
    ("mooncake", MOON + '{"timestamp": Infinity, "input_length": 6, "output_length": 5}\n', ":2:", "JSON"),
    ("mooncake", MOON + '{"timestamp": 1e999, "input_length": 6, "output_length": 5}\n', ":2:", "timestamp"),
    ("mooncake", MOON + '{"timestamp": 5, "input_length": -6, "output_length": 5}\n', ":2:", "input_length"),
    ("mooncake", MOON + '{"timestamp": 5, "input_length": 6.5, "output_length": 5}\n', ":2:", "input_length"),
    (
        "mooncake",
        MOON + '{"timestamp": 5, "input_length": 1' + "0" * 60 + ', "output_length": 5}\n',
        ":2:",
        "input_length",
    ),
    ("mooncake", MOON + '{"timestamp": 5, "output_length": 5}\n', ":2:", "input_length"),
    ("mooncake", MOON + '{"timestamp": -1, "input_length": 6, "output_length": 5}\n', ":2:", "timestamp"),
    ("mooncake", '{"timestamp": 9, "input_length": 6, "output_length": 5}\n' + MOON, ":2:", "backwards"),
    ("mooncake", MOON + "[1, 2]\n", ":2:", "JSON object"),
    ("mooncake", MOON + "{not json\n", ":2:", "JSON"),
    ("pages", "1 2 3\n4 five 6\n", ":2:", "page number"),
    ("arrivals", "0.5\n0.25\n", ":2:", "backwards"),
    ("arrivals", "0.5\nnan\n", ":2:", "arrival time"),
    ("keys", "a\n" + "b" * 70_000 + "\n", ":2:", "longer"),
]
PRESET_OF = {"azure": "prefix-sharing", "mooncake": "prefix-sharing", "pages": "paging-belady", "keys": "cache-scan"}


@pytest.mark.parametrize(("fmt", "text", "line", "field"), BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_rows_name_their_line_and_field(capsys, tmp_path, fmt, text, line, field):
    f = tmp_path / "trace"
    f.write_text(text)
    err = refused(capsys, PRESET_OF.get(fmt, "ratelimit-burst"), f, fmt)
    assert f"{f}{line}" in err and field in err, err


def test_wrong_format_for_the_preset_says_what_it_takes(capsys):
    err = refused(capsys, "cache-scan", SAMPLES / "mooncake-chat.jsonl", "mooncake")
    assert "cannot replay a mooncake trace" in err and "pages, keys" in err
    err = refused(capsys, "prefix-sharing", SAMPLES / "pages.txt", "pages")
    assert "azure, mooncake" in err
    rc = cli_mod.main(["run", "prefix-sharing", "--trace-format", "azure"])
    assert rc == 2 and "--trace-in" in capsys.readouterr().err


def test_hostile_files_are_refused_quickly(capsys, tmp_path):
    huge = tmp_path / "huge.csv"
    with open(huge, "wb") as f:
        f.truncate(traceformats.MAX_TRACE_BYTES + 1)  # sparse: nothing is written
    assert "bytes is more than" in refused(capsys, "prefix-sharing", huge, "azure")
    nul = tmp_path / "nul.jsonl"
    with open(nul, "wb") as f:
        f.truncate(512 << 20)  # half a GiB of NUL bytes, one endless line
    assert f"{nul}:1:" in refused(capsys, "prefix-sharing", nul, "mooncake")
    many = tmp_path / "many.txt"
    many.write_text("1\n" * 11_000_000)  # 22 MB: its first MiB says 11M rows, past twice the limit
    assert "about 11000000 rows" in refused(capsys, "paging-belady", many, "pages")
    empty = tmp_path / "empty.csv"
    empty.write_text(AZURE.splitlines()[0] + "\n")
    assert "no azure rows" in refused(capsys, "prefix-sharing", empty, "azure")


def test_event_limit_names_the_line(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("1 2\n3 4\n5 6\n")
    rd = traceformats.reader("pages", str(f))
    with pytest.raises(TraceError, match=rf"{f}:2: more than 3 events"):
        traceformats.feed(rd, read_lines(f), max_events=3)


@pytest.mark.parametrize("sample", sorted(RUNS))
@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_chunked_lines_give_the_same_stream(sample, chunk):
    """The browser sends text in chunks (web/pyodide/ops_trace.py): the same events as from disk."""
    fmt, name = RUNS[sample]
    path = SAMPLES / sample
    preset = presets.load(name)
    rd = traceformats.reader(fmt, str(path))
    traceformats.feed(rd, read_lines(path))
    disk = traceformats.finish(rd, preset)
    text = path.read_text()
    lines = traceformats.Lines(str(path))
    rd = traceformats.reader(fmt, str(path))
    for k in range(0, len(text), chunk):
        traceformats.feed(rd, lines.feed(text[k : k + chunk]))
    traceformats.feed(rd, lines.close())
    chunked = traceformats.finish(rd, preset)
    assert chunked[1] == disk[1] and stream.sha256(chunked[0]) == stream.sha256(disk[0])


def test_formats_follow_the_preset_stream():
    assert traceformats.fits(presets.load("prefix-sharing")) == ["azure", "mooncake"]
    assert traceformats.fits(presets.load("routing-llmd-short")) == ["azure", "mooncake"]
    assert traceformats.fits(presets.load("paging-belady")) == ["pages", "keys"]
    assert traceformats.fits(presets.load("ratelimit-burst")) == ["azure", "mooncake", "arrivals"]  # any arrivals
    assert traceformats.fits(presets.load("queues-hockey-stick")) == []


SAMPLE_OF = {fmt: SAMPLES / name for name, (fmt, _) in RUNS.items()}


@pytest.mark.every_preset("preset")
@pytest.mark.parametrize("preset", [p for p in presets.preset_names() if traceformats.fits(presets.load(p))])
def test_every_format_a_preset_takes_runs(capsys, preset):
    """``fits`` is honest: each preset runs each sample of every format it says it takes."""
    for fmt in traceformats.fits(presets.load(preset)):
        rc, out, err = run(capsys, preset, SAMPLE_OF[fmt], fmt)
        assert rc == 0, f"{preset} {fmt}: {err}"
