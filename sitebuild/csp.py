"""The Content-Security-Policy of every page the build writes, as a ``<meta http-equiv>`` so that it
holds on any static host, where no header can be set:

- requests (fetch, XHR, WebSocket, EventSource) reach this origin only (``connect-src 'self'``);
- workers start from ``blob:`` URLs only (web/static/js/worker-client.js), and a worker from a
  blob: URL lives under this policy, while one from a network URL would live under its own
  response's: none on a static host. So code in a worker cannot reach another origin either; that
  is what contains edited policies (web/static/js/edited.js, docs/editing.md);
- scripts come from this origin, inline ones by their SHA-256; WebAssembly (Pyodide) through
  ``'wasm-unsafe-eval'``; no eval;
- images from this origin, ``data:`` and ``blob:``; inline styles (the elements set some); no plugins.

``contention serve`` sends a header as well (web/server/http_policy.py); both hold there.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

POLICY = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{hashes}; worker-src blob:; connect-src 'self'; "
    "img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; font-src 'self' data:; object-src 'none'; "
    "base-uri 'self'; form-action 'self'"
)
_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
_DATA = re.compile(r"""\btype\s*=\s*["']?application/(ld\+)?json""", re.I)
_CHARSET = re.compile(r"<meta\s+charset=[^>]*>", re.I)
_HEAD = re.compile(r"<head\b[^>]*>", re.I)
_META = re.compile(r'\n?<meta http-equiv="Content-Security-Policy" content="[^"]*">')


def inline_hashes(html: str) -> list[str]:
    """``'sha256-…'`` of each inline script a browser would run (not ``src=``, not JSON data)."""
    out: list[str] = []
    for attrs, body in _SCRIPT.findall(html):
        if re.search(r"\bsrc\s*=", attrs) or _DATA.search(attrs):
            continue
        digest = f"'sha256-{base64.b64encode(hashlib.sha256(body.encode('utf-8')).digest()).decode()}'"
        if digest not in out:
            out.append(digest)
    return out


def policy(html: str) -> str:
    return POLICY.format(hashes="".join(" " + h for h in inline_hashes(html)))


def with_policy(html: str, where: str = "page") -> str:
    """``html`` with the policy's meta right after ``<meta charset>`` (else ``<head>``), before any
    script: a meta policy governs only what comes after it. A meta written before (a page an
    earlier build left in place) is replaced."""
    html = _META.sub("", html)
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(html)}">'
    anchor = _CHARSET.search(html) or _HEAD.search(html)
    if anchor is None:
        raise ValueError(f"{where}: has no <head> to carry the Content-Security-Policy")
    return f"{html[: anchor.end()]}\n{meta}{html[anchor.end() :]}"


def secure(out: Path) -> int:
    """Write the policy into every HTML page under ``out`` (vendored files aside); the count."""
    pages = [p for p in sorted(Path(out).rglob("*.html")) if "vendor" not in p.relative_to(out).parts]
    for page in pages:
        page.write_text(with_policy(page.read_text(encoding="utf-8"), str(page)), encoding="utf-8")
    return len(pages)
