"""Worker operations for a trace dropped on a preset page (web/static/js/tracedrop.js).

The page sends the file as text chunks: ``trace_begin``, ``trace_chunk`` (as many as it takes),
``trace_end``; then ``trace_create`` builds the page's simulation on that stream instead of the
preset's own. Parsing is ``sims.core.traceformats``, the readers of ``run --trace-format``, so a
bad row fails here with the message the CLI prints (file:line and the field), and the stream is
the one ``run`` would replay. The trace lives only in this worker: it cannot travel in a link.
"""

from __future__ import annotations

from typing import Any

from sims.core import presets, traceformats
from sims.core.limits import show
from sims.core.trace import TraceError

MAX_EVENTS = 1_000_000  # in the browser: a stream of dicts in WebAssembly's memory (the CLI takes 5M)
_UPLOADS: dict[str, dict[str, Any]] = {}  # upload id -> reader state, then the finished stream


def detect(line: str, formats: list[str]) -> str:
    """The format of a file whose first row is ``line``, among those the preset takes."""
    text = line.strip()
    if text.startswith("{") and "mooncake" in formats:
        return "mooncake"
    if ("TIMESTAMP" in text or "ContextTokens" in text) and "azure" in formats:
        return "azure"
    if "pages" in formats and all(tok.lstrip("-").isdigit() for tok in text.split()):
        return "pages"
    for fmt in ("keys", "arrivals"):
        if fmt in formats:
            return fmt
    return formats[0]


def looks_like(line: str) -> str | None:
    """The LLM trace format a first row plainly is (a JSON object: mooncake; Azure's CSV header),
    whatever the page takes; None for a row any other reader could take (keys, numbers)."""
    text = line.strip()
    if text.startswith("{"):
        return "mooncake"
    if "TIMESTAMP" in text or "ContextTokens" in text:
        return "azure"
    return None


def _op_trace_detect(a: dict) -> dict:
    """What the page's drop would read the file as: ``{format, looks, ask}``; ``ask`` when the
    first row plainly is a trace of another kind than the page's workload takes (an Azure CSV
    dropped on a cache page would otherwise be read as 301 "keys")."""
    formats = traceformats.fits(presets.load(a["preset"]))
    row = _first_row(a.get("text", ""))
    looks = looks_like(row)
    return {"format": detect(row, formats), "looks": looks, "ask": looks is not None and looks not in formats}


def _first_row(text: str) -> str:
    for line in text.split("\n", 200):
        if line.strip() and not line.lstrip().startswith("#"):
            return line
    return ""


def _upload(a: dict) -> dict[str, Any]:
    try:
        return _UPLOADS[a["upload"]]
    except KeyError:
        raise ValueError("this trace is no longer in the worker (it restarted); drop the file again") from None


def _op_trace_formats(a: dict) -> dict:
    return {"formats": traceformats.fits(presets.load(a["preset"]))}


def _op_trace_begin(a: dict) -> dict:
    preset = presets.load(a["preset"])
    formats = traceformats.fits(preset)
    if not formats:
        raise ValueError(f"preset {preset.name} takes no trace files")
    fmt = a.get("format") or "auto"
    if fmt != "auto" and fmt not in formats:
        raise ValueError(f"preset {preset.name} takes {', '.join(formats)} traces, not {show(fmt)}")
    name = str(a.get("name") or "trace")[-100:]
    size = int(a.get("size") or 0)  # the file's bytes, to refuse a huge file from its first slice
    _UPLOADS[a["upload"]] = {
        "preset": preset,
        "formats": formats,
        "format": fmt,
        "name": name,
        "reader": None,
        "size": size,
    }
    return {"formats": formats}


def _op_trace_chunk(a: dict) -> dict:
    u = _upload(a)
    try:
        first = u["reader"] is None
        if first:
            if u["format"] == "auto":
                u["format"] = detect(_first_row(a["text"]), u["formats"])
            u["reader"] = traceformats.reader(u["format"], u["name"])
            u["lines"] = traceformats.Lines(u["name"])
        traceformats.feed(u["reader"], u["lines"].feed(a["text"]), MAX_EVENTS)
        if first:
            traceformats.check_size(u["reader"], u["size"], len(a["text"].encode()), MAX_EVENTS)
    except TraceError:
        _UPLOADS.pop(a["upload"], None)
        raise
    return {"format": u["format"], "lines": u["lines"].n, "rows": len(u["reader"])}


def _op_trace_end(a: dict) -> dict:
    u = _upload(a)
    try:
        if u["reader"] is None:
            raise TraceError(f"{u['name']}: the file is empty")
        rd = u.pop("reader")
        traceformats.feed(rd, u.pop("lines").close(), MAX_EVENTS)
        u["events"], u["duration"] = traceformats.finish(rd, u["preset"])
    except TraceError:
        _UPLOADS.pop(a["upload"], None)
        raise
    return {"format": u["format"], "rows": len(rd), "duration": u["duration"], "name": u["name"]}


def _op_trace_create(a: dict) -> dict:
    """``create`` (web/pyodide/bridge.py) with the dropped trace as the stream."""
    from web.pyodide import bridge

    u = _upload(a)
    if "events" not in u:
        raise ValueError("the trace is still being read")
    s = bridge.Session(
        a["preset"],
        a.get("seed"),
        a.get("panels") or None,
        a.get("overrides"),
        a.get("actions"),
        events=list(u["events"]),  # actions insert into the list: each run gets its own
        duration=u["duration"],
    )
    bridge._SESSIONS[a["id"]] = s
    t = float(a.get("t") or 0.0)
    if t:
        s.sc.seek(min(t, s.sc.duration))
    info = s.info()
    info["trace"] = {"name": u["name"], "format": u["format"], "rows": len(u["events"])}
    return {"info": info, "frame": s.frame()}


def _op_trace_forget(a: dict) -> dict:
    _UPLOADS.pop(a["upload"], None)
    return {}


OPS = {
    "trace_formats": _op_trace_formats,
    "trace_detect": _op_trace_detect,
    "trace_begin": _op_trace_begin,
    "trace_chunk": _op_trace_chunk,
    "trace_end": _op_trace_end,
    "trace_create": _op_trace_create,
    "trace_forget": _op_trace_forget,
}
