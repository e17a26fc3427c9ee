"""The columnar canonical reader (sims.core.columns) against the dict reader it stands in for.

Same events (fields, order, types), same stream hash, same canonical lines, same first error, and
the same hits through cache and paging panels, on small traces with the edge cases: string and
huge keys, extra fields, scans, blank lines, integer and exponent times, shapes out of order.
"""

from __future__ import annotations

import json
from array import array

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims import cli as cli_mod
from sims.core import presets, stream
from sims.core.columns import OTHER, Columns
from sims.core.scenario import Scenario
from sims.core.trace import TraceError

REF = {"ref": {"key": "number", "kind": "string", "t": "number"}, "scan": {"kind": "string"}}

EDGE = [
    '{"key":1,"kind":"ref","t":1}',  # an integer time: a float once read
    '{"key":-0,"kind":"ref","t":2}',
    '{"key":"a\\u00e9\\"b","kind":"ref","t":3}',  # a string key, escaped
    '{"key":"a\\u00e9\\"b","kind":"ref","t":3.5}',  # the same string again: one object
    '{"key":' + "9" * 30 + ',"kind":"ref","t":4}',  # past 64 bits: kept as its dict
    '{"key":9223372036854775807,"kind":"ref","t":4}',
    '{"key":-9223372036854775808,"kind":"ref","t":4}',
    '{"key":1.5,"kind":"ref","t":4.25}',  # a float key: kept as its dict
    '{"key":true,"kind":"ref","t":4.5}',
    '{"key":null,"kind":"ref","t":4.5}',
    '{"key":[1,2],"kind":"ref","t":4.5}',
    "",
    "   ",
    '{"t":5e0,"kind":"ref","key":7}',  # fields in another order, an exponent
    '{"kind":"ref","key":8,"t":5.0}',
    '{"key":9, "kind":"ref", "t":6}',  # spaces
    '{"key":1,"kind":"scan","length":3,"start":4,"t":6}',
    '{"kind":"scan","t":6.5}',
    '{"key":2,"kind":"ref","t":7,"x":1}',  # one field more
    '{"key":3,"kind":"ref","t":0.000000000000000000000000000000000000000000000000001e52}',
]


def _good(i: int) -> str:
    return f'{{"key":{i % 13},"kind":"ref","t":{(i + 1) / 8!r}}}'


def _write(tmp_path, lines: list[str]):
    f = tmp_path / "t.jsonl"
    f.write_text("".join(line + "\n" for line in lines))
    return f


def _read(f, columns: bool, expect=None, closed=()):
    try:
        events = stream.read(f, expect, closed, columns=columns)
    except TraceError as exc:
        return "refused", str(exc)
    return "ok", [list(ev.items()) for ev in events], [[type(v) for v in ev.values()] for ev in events], events


def _same(f, expect=None, closed=()):
    old, new = _read(f, False, expect, closed), _read(f, True, expect, closed)
    assert old[:3] == new[:3]
    if old[0] == "ok":
        assert type(new[3]) is Columns and stream.sha256(new[3]) == stream.sha256(old[3])
        assert list(new[3].canonical_lines()) == [stream.canonical_line(ev) for ev in old[3]]
    return old, new


def test_edge_cases_read_as_the_dict_reader_reads_them(tmp_path):
    f = _write(tmp_path, [_good(i) for i in range(8)] + EDGE + [_good(i) for i in range(800, 840)])
    old, new = _same(f)
    assert old[0] == "ok", old
    cols = new[3]
    assert len(cols) == len(old[3]) == 48 + len(EDGE) - 2  # two blank lines
    kept = set(cols.other)
    held = {repr(ev.get("key")) for ev in cols.other.values()}
    assert held >= {repr(10**30 - 1), "1.5", "True", "None", "[1, 2]"}
    assert sum(s != OTHER for s in cols.shape) == len(cols) - len(kept)
    assert cols.strings == ['a\u00e9"b']  # one object for the two events


def test_the_fast_block_path_takes_plain_refs_and_the_rest_reads_the_same(tmp_path):
    f = _write(tmp_path, [_good(i) for i in range(20_000)])
    old, new = _same(f, REF, {"ref"})
    cols = new[3]
    assert not cols.other and set(cols.shape) == {0} and cols.value[:3] == array("q", [0, 1, 2])
    assert cols.nbytes == 25 * 20_000  # no dict held: t, shape, key and the scenario's copy of t


@pytest.mark.parametrize(
    "bad",
    [
        '{"key":1,"kind":"ref","t":NaN}',
        '{"key":1,"kind":"ref","t":1e999}',
        '{"key":1,"kind":"ref","t":-1}',
        '{"key":1,"kind":"ref","t":-0}',
        '{"key":1,"kind":"ref","t":0.1}',  # goes backwards
        '{"key":1,"kind":"ref","t":86401}',
        '{"key":1,"kind":"ref","t":01}',
        '{"key":01,"kind":"ref","t":5000}',
        '{"key":' + "9" * 45 + ',"kind":"ref","t":5000}',
        '{"key":1,"kind":"ref","t":5000} {"key":2}',
        '{"key":1,"kind":"ref","t":5000,"x":2}',
        '{"key":1,"kind":"nope","t":5000}',
        '{"kind":"ref","t":5000}',
    ],
)
def test_the_first_error_is_the_same_in_a_block_of_plain_refs(tmp_path, bad):
    lines = [_good(i) for i in range(3000)]
    lines[2000] = bad
    old, new = _same(_write(tmp_path, lines), REF, {"ref"})
    assert old[0] == "refused" and ":2001:" in old[1], old


LINE = st.one_of(st.none(), st.sampled_from(EDGE + ['{"key":1,"kind":"ref","t":1e999}', "{", "[1]"]))


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINE, min_size=1, max_size=40))
def test_random_mixes_read_the_same(tmp_path, lines):
    text = [ln if ln is not None else f'{{"key":{i},"kind":"ref","t":{i + 1}}}' for i, ln in enumerate(lines)]
    _same(_write(tmp_path, text))
    _same(_write(tmp_path, text), REF, {"ref"})


def test_the_sequence_reads_like_a_list(tmp_path):
    f = _write(tmp_path, [_good(i) for i in range(30)] + EDGE[14:17])
    events = stream.read(f)
    cols = stream.read(f, columns=True)
    assert cols == events and cols[-1] == events[-1] and cols[3] == events[3]
    assert list(cols[5:9]) == events[5:9] and list(cols[::7]) == events[::7]
    assert list(cols[-3:]) == events[-3:] and cols[-1] is cols.other[len(cols) - 1]
    with pytest.raises(IndexError):
        cols[len(cols)]
    ev = {"t": 1.0, "kind": "scan", "start": 0, "length": 2}
    events.insert(4, ev)
    cols.insert(4, ev)
    assert cols == events and stream.sha256(cols) == stream.sha256(events)


def _run(preset: str, events, panels: str | None = None, duration: float = 200.0) -> dict:
    p = presets.load(preset)
    sc = Scenario(p, None, duration, panels.split(",") if panels else None, events=events).run()
    return sc.result()


@pytest.mark.parametrize(
    "preset", ["cache-scan", "cache-writes", "cache-redis", "cache-ttl-short", "paging-belady", "paging-locality"]
)
def test_panels_give_the_same_results_from_columns(tmp_path, preset):
    """A recorded stream of the preset (scans and scheduled events included) replayed both ways."""
    if preset not in presets.preset_names():
        pytest.skip(f"no preset {preset}")
    p = presets.load(preset)
    f = tmp_path / "rec.jsonl"
    stream.write(stream.build(p, p.seed, p.duration), f)
    old = _run(preset, stream.read(f), duration=p.duration)
    cols = stream.read(f, columns=True)
    assert type(cols) is Columns
    assert _run(preset, cols, duration=p.duration) == old


def test_run_trace_in_is_the_same_as_before(tmp_path, capsys, monkeypatch):
    f = _write(tmp_path, [_good(i) for i in range(5000)] + ['{"kind":"scan","length":50,"start":3,"t":700}'])
    out = {}
    for columns in (False, True):
        monkeypatch.setattr("sims.cli.run.COLUMNAR", ("cache",) if columns else ())
        args = ["run", "cache-scan", "--panels", "lru,arc,opt", "--trace-in", str(f), "--json", "--duration", "800"]
        assert cli_mod.main([*args, "--trace-out", str(tmp_path / f"out{columns}.jsonl")]) == 0
        out[columns] = json.loads(capsys.readouterr().out)
    assert out[True] == out[False] and out[True]["panels"]["opt"]["hits"] > 0
    assert (tmp_path / "outTrue.jsonl").read_bytes() == (tmp_path / "outFalse.jsonl").read_bytes()


def test_the_budget_names_the_line_that_passes_it_in_columns(tmp_path, monkeypatch):
    from sims.core import canonical

    f = _write(tmp_path, [_good(i) for i in range(5000)])
    monkeypatch.setattr(canonical, "MAX_STREAM_BYTES", 100_000)  # 4,000 columnar refs of 25 bytes
    with pytest.raises(TraceError, match=rf"{f}:4001: the events so far hold about 0 MiB"):
        stream.read(f, columns=True)
    monkeypatch.undo()
    with pytest.raises(TraceError, match=rf"{f}:3001: more than 3,000 events"):
        canonical.read(f, max_events=3000, columns=True)
    assert len(canonical.read(f, max_events=5000, columns=True)) == 5000
