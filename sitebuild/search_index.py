"""The site's search: one static index (``static/search.json``) of every concept, preset, topic
and track, read by web/static/js/site-search.js in the browser, so search needs no server and
works offline. An entry is ``{k: kind, t: title, s: summary, u: url (from the site root),
g: tags, x: other words it should be found by}``; the page ``search/`` filters by kind and tag.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

KINDS = ("concept", "preset", "topic", "track")  # in the order results of equal score are shown


def _words(*texts: str) -> str:
    """Lower-case words of ``texts`` once each, ``_`` and ``-`` split too ("bellman_ford" finds "ford")."""
    seen: dict[str, None] = {}
    for text in texts:
        for w in re.findall(r"[\w.+-]+", text.lower()):
            for part in (w, *re.split(r"[_\-]", w)):  # a tuple: a set's order changes per process
                if part:
                    seen[part] = None
    return " ".join(seen)


def entries(content: dict[str, Any], presets: list, learn, tracks) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    topics = content["topics"]
    for topic, found in learn.concepts.items():
        short = topics.get(topic, {}).get("short", topic)
        for c in learn.listed(topic):
            aliases = [n for n, a in found.items() if a.alias_of == c.name]
            systems = " ".join(r["system"] for r in c.real)
            out.append(
                {
                    "k": "concept",
                    "t": c.title,
                    "s": c.summary,
                    "u": f"topics/{topic}/{c.name}/",
                    "g": [short.lower(), *c.tags],
                    "x": _words(c.name, topic, " ".join(aliases), systems),
                }
            )
    for p in presets:
        short = topics.get(p.topic, {}).get("short", p.topic)
        policies = " ".join(sorted({s.policy for s in p.panels}))
        out.append(
            {
                "k": "preset",
                "t": p.title,
                "s": p.watch_for,
                "u": f"play/{p.name}/",
                "g": [short.lower()],
                "x": _words(p.name, p.topic, policies, p.description),
            }
        )
    for topic, text in topics.items():
        out.append(
            {
                "k": "topic",
                "t": text.get("title", topic),
                "s": text.get("summary", ""),
                "u": f"topics/{topic}/",
                "g": [text.get("short", topic).lower()],
                "x": _words(topic, text.get("short", ""), text.get("os", ""), text.get("llm", "")),
            }
        )
    for t in tracks.all:
        out.append(
            {"k": "track", "t": t.title, "s": t.summary, "u": f"tracks/{t.name}/", "g": ["track"], "x": _words(t.name)}
        )
    return out


def write(env, out: Path, common: dict[str, Any], index: list[dict[str, Any]]) -> None:
    """static/search.json and the search page, search/."""
    (out / "static").mkdir(parents=True, exist_ok=True)
    (out / "static" / "search.json").write_text(json.dumps(index, separators=(",", ":")), encoding="utf-8")
    tags = sorted({g for e in index for g in e["g"]})
    page = env.get_template("search.html").render(root="../", kinds=KINDS, tags=tags, **common)
    (out / "search").mkdir(parents=True, exist_ok=True)
    (out / "search" / "index.html").write_text(page, encoding="utf-8")
