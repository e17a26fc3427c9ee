"""dist/ as static files: explicit MIME types, no path traversal, CORS for the embed assets only.

Starlette's StaticFiles already refuses paths that resolve outside the folder; this wrapper also
refuses, before any file-system call, decoded paths with a ``..`` segment, a backslash or a NUL
byte (``os.stat`` raises ValueError on NUL, which would be a 500).
"""

from __future__ import annotations

import mimetypes
from pathlib import Path, PurePosixPath

from starlette.responses import PlainTextResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

# Explicit, so the answer never depends on the host's /etc/mime.types.
MIME_TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
    ".map": "application/json",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".tar": "application/x-tar",
    ".py": "text/x-python",
    ".toml": "text/plain",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".txt": "text/plain",
    ".jsonl": "application/x-ndjson",
}
for _ext, _type in MIME_TYPES.items():
    mimetypes.add_type(_type, _ext)

# What embed.js loads from another origin: scripts, styles, our Python zip, Pyodide's files.
EMBED_SUFFIXES = (".js", ".mjs", ".css", ".wasm", ".zip", ".json", ".py", ".whl", ".tar", ".map")
CORS_HEADERS = [
    (b"access-control-allow-origin", b"*"),
    (b"cross-origin-resource-policy", b"cross-origin"),
]


def is_embed_asset(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in EMBED_SUFFIXES


def is_safe_path(path: str) -> bool:
    """False for a decoded URL path that could step outside the served folder."""
    return "\x00" not in path and "\\" not in path and ".." not in path.split("/")


class SiteFiles:
    """An ASGI app serving ``directory`` (index.html for folders, 404.html when present)."""

    def __init__(self, directory: Path) -> None:
        self.files = StaticFiles(directory=str(directory), html=True, check_dir=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if not is_safe_path(path):
            await PlainTextResponse("Not Found", status_code=404)(scope, receive, send)
            return
        embed = is_embed_asset(path)
        if scope["method"] == "OPTIONS" and embed:  # a preflight from an embedding page
            headers = {
                "Access-Control-Allow-Origin": "*",
                "Access-Control-Allow-Methods": "GET, HEAD",
                "Access-Control-Max-Age": "86400",
            }
            await Response(status_code=204, headers=headers)(scope, receive, send)
            return
        if not embed:
            await self.files(scope, receive, send)
            return

        async def send_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *CORS_HEADERS]
            await send(message)

        await self.files(scope, receive, send_cors)
