"""Python source as HTML with its tokens in spans (``tok-kw``, ``tok-str``, ``tok-com``,
``tok-num``, ``tok-def``, ``tok-dec``), coloured by site.css's variables in both themes. Standard
library only: ``tokenize`` splits the text, so the output is the source, escaped, character for
character."""

from __future__ import annotations

import html
import io
import keyword
import tokenize

_KIND = {tokenize.STRING: "str", tokenize.COMMENT: "com", tokenize.NUMBER: "num"}


def python_html(source: str) -> str:
    """``source`` escaped for a ``<pre><code>``, tokens wrapped in spans; text that does not
    tokenize (a fragment) comes back escaped and plain."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    spans: list[tuple[int, int, str]] = []
    previous = ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            kind = _KIND.get(tok.type)
            if tok.type == tokenize.NAME:
                if keyword.iskeyword(tok.string) or tok.string in ("self", "cls"):
                    kind = "kw"
                elif previous in ("def", "class"):
                    kind = "def"
            elif tok.type == tokenize.OP and tok.string == "@" and tok.start[1] == _indent(lines[tok.start[0] - 1]):
                kind = "dec"
            if tok.type in (tokenize.NAME, tokenize.OP):
                previous = tok.string
            if kind and tok.start[0] <= len(lines):
                start = offsets[tok.start[0] - 1] + tok.start[1]
                end = offsets[tok.end[0] - 1] + tok.end[1]
                if kind == "dec":
                    end = offsets[tok.start[0] - 1] + len(lines[tok.start[0] - 1].rstrip("\n"))
                spans.append((start, end, kind))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return html.escape(source)
    out, at = [], 0
    for start, end, kind in spans:
        if start < at:  # a name inside a decorator line already wrapped
            continue
        out.append(html.escape(source[at:start]))
        out.append(f'<span class="tok-{kind}">{html.escape(source[start:end])}</span>')
        at = end
    out.append(html.escape(source[at:]))
    return "".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
