"""Traces at the size the limits allow.

Whatever a reader accepts fits the stream's memory budget, a file that cannot fit is refused from
its first MiB, the fast block readers give exactly what reading line by line gives (and the same
first error), and the limits are the ones README states.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims import cli as cli_mod
from sims.core import budget, canonical, llmtraces, mooncake, presets, stream, traceformats
from sims.core.limits import MAX_EVENT_CHARS, MAX_LINE_CHARS
from sims.core.trace import TraceError, read_blocks

ROOT = Path(__file__).resolve().parents[1]


def refused(capsys, *args: str) -> str:
    rc = cli_mod.main(list(args))
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def refs(n: int, start: int = 0) -> str:
    return "".join(f'{{"key":{k % 97},"kind":"ref","t":{(k + 1) / 1000!r}}}\n' for k in range(start, start + n))


# -- the limits README states ---------------------------------------------------------------------
def test_readme_states_the_line_limits_the_readers_use():
    readme = (ROOT / "README.md").read_text()
    assert f"{MAX_EVENT_CHARS:,} characters" in readme  # a canonical stream's line (one event)
    assert f"{MAX_LINE_CHARS:,} characters" in readme  # every other trace line


def test_a_canonical_line_past_its_limit_is_refused_with_the_number(tmp_path, capsys):
    f = tmp_path / "long.jsonl"
    f.write_text('{"key":1,"kind":"ref","t":0.5,"pad":"' + "x" * MAX_EVENT_CHARS + '"}\n')
    err = refused(capsys, "run", "cache-scan", "--trace-in", str(f))
    assert f"{f}:1: line longer than {MAX_EVENT_CHARS} characters" in err


# -- what a canonical line may carry ----------------------------------------------------------------
def test_an_unknown_field_is_refused_naming_it(tmp_path, capsys):
    f = tmp_path / "extra.jsonl"
    f.write_text(refs(3) + '{"key":1,"kind":"ref","t":0.5,"colour":"red"}\n')
    err = refused(capsys, "run", "cache-scan", "--trace-in", str(f))
    assert f"{f}:4: field 'colour': unknown; a ref event carries key, kind, t" in err


def test_a_kind_whose_fields_vary_stays_open(tmp_path, capsys):
    """cache-writes' refs carry ``op`` or not: an extra field there is not the preset's to refuse."""
    f = tmp_path / "w.jsonl"
    f.write_text('{"key":1,"kind":"ref","t":0.5,"op":"w","note":1}\n{"key":2,"kind":"ref","t":0.6}\n')
    assert cli_mod.main(["run", "cache-writes", "--trace-in", str(f), "--json", "--duration", "1"]) == 0
    capsys.readouterr()


def test_a_4000_digit_hash_id_says_what_it_got(tmp_path, capsys):
    f = tmp_path / "m.jsonl"
    row = {"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1]}
    f.write_text(json.dumps(row) + "\n" + json.dumps(row).replace("[1]", "[" + "9" * 4000 + "]") + "\n")
    err = refused(capsys, "run", "prefix-sharing", "--trace-in", str(f), "--trace-format", "mooncake")
    assert f"{f}:2: field 'hash_ids'" in err and "an integer of 4000 digits" in err and "inf" not in err
    f.write_text(
        json.dumps(row) + "\n" + json.dumps(row).replace('"timestamp": 0', '"timestamp": ' + "9" * 4000) + "\n"
    )
    err = refused(capsys, "run", "prefix-sharing", "--trace-in", str(f), "--trace-format", "mooncake")
    assert f"{f}:2: field 'timestamp'" in err and "an integer of 4000 digits" in err


@pytest.mark.parametrize(
    "args",
    [
        ["run", "cache-scan", "--trace-in", "{fifo}"],
        ["run", "prefix-sharing", "--trace-in", "{fifo}", "--trace-format", "mooncake"],
        ["trace", "cache", "--policy", "lru", "--size", "3", "--trace", "{fifo}"],
    ],
    ids=["canonical", "mooncake", "trace"],
)
def test_a_fifo_is_refused_not_waited_on(tmp_path, args):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    try:
        out = subprocess.run(
            [sys.executable, "-m", "sims", *(a.format(fifo=fifo) for a in args)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("waited on a FIFO with no writer")
    assert out.returncode == 2 and f"{fifo}: a FIFO; expected a regular file" in out.stderr, out.stderr


# -- memory: what is accepted fits, what cannot fit is refused from its first MiB -------------------
def test_a_canonical_trace_past_the_memory_budget_is_refused_from_its_first_mib(tmp_path, monkeypatch, capsys):
    # a cache preset reads its stream as columns (25 bytes a ref): 1 MiB holds about 42,000
    monkeypatch.setattr(canonical, "MAX_STREAM_BYTES", 1 << 20)
    f = tmp_path / "big.jsonl"
    f.write_text(refs(200_000))  # 7 MB of lines, about 4.8 MiB of columns
    err = refused(capsys, "run", "cache-scan", "--trace-in", str(f), "--duration", "200")
    assert "about 2" in err and "events holding about" in err and "(from its first" in err


def test_a_canonical_trace_that_fills_the_budget_names_the_line(tmp_path, monkeypatch):
    monkeypatch.setattr(canonical, "MAX_STREAM_BYTES", 1 << 20)
    f = tmp_path / "fill.jsonl"
    f.write_text(refs(5000))  # its first MiB is the whole file: read until the line that passes
    with pytest.raises(TraceError, match=rf"{f}:\d+: the events so far hold about 1 MiB"):
        stream.read(f)


def test_accepted_canonical_events_are_counted_as_the_budget_counts_them(tmp_path):
    f = tmp_path / "ok.jsonl"
    f.write_text(refs(20_000))
    rd = canonical.Reader(str(f))
    for first, lines in read_blocks(f, MAX_EVENT_CHARS):
        rd.block(first, lines)
    model = sum(budget.event_bytes(ev) + budget.SLOT for ev in rd.events)
    assert model <= rd.bytes <= 1.2 * model  # the reader counts every integer as a full object


def test_mooncake_rows_past_the_memory_budget_name_their_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(mooncake, "MAX_STREAM_BYTES", 1 << 20)  # the block loop's bound
    monkeypatch.setattr(llmtraces, "MAX_STREAM_BYTES", 1 << 20)  # each row's
    f = tmp_path / "m.jsonl"
    row = lambda i: json.dumps({"timestamp": i, "input_length": 2000, "output_length": 5, "hash_ids": [i, i + 1]})  # noqa: E731
    f.write_text("".join(row(i) + "\n" for i in range(3000)))
    err = refused(capsys, "run", "prefix-sharing", "--trace-in", str(f), "--trace-format", "mooncake")
    assert "MiB of events, more than 1" in err and f"{f}:" in err


def test_shared_mooncake_blocks_are_one_list(tmp_path):
    f = tmp_path / "m.jsonl"
    rows = [{"timestamp": i, "input_length": 1100, "output_length": 5, "hash_ids": [7, 8, 9]} for i in range(3)]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    events, _ = traceformats.load(f, "mooncake", presets.load("prefix-sharing"))
    assert events[0]["segments"][0] is events[2]["segments"][0]  # ["m7", 512], held once
    assert events[0]["segments"][2] == ["m9", 76] and events[0]["segments"][2] is not events[1]["segments"][2]


# -- the fast readers give exactly what reading line by line gives ---------------------------------
LINE = st.one_of(
    st.just(None),  # a good ref event
    st.sampled_from(
        [
            "",
            "   ",
            "{",
            "[1]",
            '{"key":1,"kind":"ref","t":NaN}',
            '{"key":1,"kind":"ref","t":1e999}',
            '{"key":1,"kind":"ref","t":-1}',
            '{"key":1,"kind":"ref","t":true}',
            '{"key":' + "9" * 45 + ',"kind":"ref","t":1}',
            '{"key":1,"kind":"scan","t":1}',
            '{"key":"a","kind":"ref","t":1}',
            '{"kind":"ref","t":1}',
            '{"key":1,"kind":"ref","t":1,"x":2}',
            '{"key":1,"kind":"ref","t":1} {"key":2}',
            '{"key":1,"kind":"ref","t":0.0001}',
            '{"t":1,"key":[1,[2,1e999]],"kind":"ref"}',
        ]
    ),
)


def _outcome(read):
    try:
        events = read()
        return "ok", stream.sha256(events), [type(e["t"]) for e in events[:5]]
    except TraceError as exc:
        return "refused", str(exc)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, min_size=1, max_size=40))
def test_canonical_blocks_read_as_lines_do(tmp_path, lines):
    text = "".join(
        (ln if ln is not None else f'{{"key":{i},"kind":"ref","t":{i + 1}}}') + "\n" for i, ln in enumerate(lines)
    )
    f = tmp_path / "t.jsonl"
    f.write_text(text)
    expect = {"ref": {"key": "number", "kind": "string", "t": "number"}, "scan": {"kind": "string"}}

    def by_line():
        rd = canonical.Reader(str(f), expect, {"ref"})
        for n, line in enumerate(text.split("\n")[:-1], 1):
            rd.line(n, line)
        if not rd.events:
            raise TraceError(f"{f}: no events; expected one JSON object per line")
        return rd.events

    assert _outcome(lambda: stream.read(f, expect, {"ref"})) == _outcome(by_line)


def _mooncake_rows(r: random.Random, n: int) -> list[str]:
    out, ts = [], 0
    for _ in range(n):
        ts += r.randrange(0, 50)
        prompt = r.randrange(0, 3000)
        k = r.randrange(0, -(-prompt // 512) + 1)
        base = r.randrange(0, 20)
        out.append(
            json.dumps(
                {"timestamp": ts, "input_length": prompt, "output_length": 7, "hash_ids": list(range(base, base + k))}
            )
        )
    return out


@settings(max_examples=examples(100), deadline=None)
@given(
    seed=st.integers(0, 10**6),
    bad=st.sampled_from(
        [None, "{", '{"timestamp": -1}', "[]", '{"timestamp": 1e999, "input_length": 1, "output_length": 1}']
    ),
)
def test_mooncake_blocks_read_as_lines_do(seed, bad):
    r = random.Random(seed)
    lines = _mooncake_rows(r, r.randrange(1, 60))
    if bad is not None:
        lines.insert(r.randrange(0, len(lines) + 1), bad)

    def by_block():
        rd = mooncake.MooncakeReader("m")
        rd.feed_block(1, lines)
        return rd.events, rd.bytes

    def by_line():
        rd = mooncake.MooncakeReader("m")
        for n, line in enumerate(lines, 1):
            rd.feed(n, line)
        return rd.events, rd.bytes

    def outcome(read):
        try:
            events, size = read()
            return stream.sha256(events), size
        except TraceError as exc:
            return str(exc)

    assert outcome(by_block) == outcome(by_line)


@settings(max_examples=examples(200), deadline=None)
@given(
    stamps=st.lists(
        st.tuples(
            st.integers(0, 23), st.integers(0, 59), st.integers(0, 59), st.text("0123456789", min_size=0, max_size=9)
        ),
        min_size=1,
        max_size=30,
    )
)
def test_azure_minutes_read_once_give_the_same_times(stamps):
    rd = llmtraces.AzureReader("a")
    rd.feed(1, "TIMESTAMP,ContextTokens,GeneratedTokens")
    for h, m, s, frac in sorted(stamps):
        ts = f"2023-11-16 {h:02d}:{m:02d}:{s:02d}" + (f".{frac}" if frac else "")
        assert rd._stamp(ts) == llmtraces.stamp_ns(ts), ts
