"""Tracks: ordered paths through concept and preset pages (docs/concepts.md, "Tracks").

A track is ``sitebuild/tracks/<name>.toml``: ``title``, ``summary``, ``minutes`` (the estimated
time), ``lessons`` (``"<topic>/<concept>"`` or ``"play/<preset>"``, in order) and optional
``about`` (paragraphs for its page). ``load()`` checks them strictly; ``Tracks.of(slug)`` says
where a page sits in each track ("3 of 9", the previous and the next lesson) for its lesson bar.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent / "tracks"
FIELDS = ("title", "summary", "minutes", "lessons", "about")


@dataclass(frozen=True)
class Track:
    name: str  # the file's stem: tracks/<name>/
    title: str
    summary: str
    minutes: int  # estimated, for the whole track
    lessons: tuple[str, ...]  # "topic/concept" or "play/preset"
    about: tuple[str, ...] = ()


def _fail(path: Path, key: str, msg: str) -> ValueError:
    return ValueError(f"{path}: {key}: {msg}")


def read(path: Path, presets: set[str]) -> Track:
    """One track file, checked: its fields, and every lesson a registered policy or a preset."""
    from sims.core import registry

    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    for key in raw:
        if key not in FIELDS:
            raise _fail(path, key, f"unknown field; valid: {', '.join(FIELDS)}")
    for key in ("title", "summary"):
        if not (isinstance(raw.get(key), str) and raw[key].strip()):
            raise _fail(path, key, "expected non-empty text")
    minutes = raw.get("minutes")
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes <= 0:
        raise _fail(path, "minutes", f"expected a positive whole number of minutes, got {minutes!r}")
    lessons = raw.get("lessons")
    if not isinstance(lessons, list) or len(lessons) < 2:
        raise _fail(path, "lessons", "expected a list of at least two lessons")
    for i, lesson in enumerate(lessons):
        kind, _, name = str(lesson).partition("/")
        if kind == "play":
            ok = name in presets
        else:
            ok = registry.has_topic(kind) and name in registry.policies(kind)
        if not isinstance(lesson, str) or not ok:
            raise _fail(
                path, f"lessons[{i}]", f'expected "<topic>/<policy>" or "play/<preset>" that exists, got {lesson!r}'
            )
    if len(set(lessons)) != len(lessons):
        raise _fail(path, "lessons", "a lesson is listed twice")
    about = raw.get("about", [])
    if not (isinstance(about, list) and all(isinstance(p, str) and p.strip() for p in about)):
        raise _fail(path, "about", "expected a list of paragraphs")
    return Track(path.stem, raw["title"], raw["summary"], minutes, tuple(lessons), tuple(about))


class Tracks:
    """Every track, and what the pages need from them."""

    def __init__(self, tracks: list[Track], titles: dict[str, str]) -> None:
        self.all = tracks
        self.titles = titles  # lesson slug -> its page's title

    def lesson(self, slug: str) -> dict[str, str]:
        kind, _, name = slug.partition("/")
        url = f"play/{name}/" if kind == "play" else f"topics/{kind}/{name}/"
        return {"slug": slug, "url": url, "title": self.titles.get(slug, name)}

    def of(self, slug: str) -> list[dict[str, Any]]:
        """Where page ``slug`` sits in each track that has it: {track, title, at (1-based), count,
        prev, next} (prev/next: a lesson dict, or None at an end)."""
        out = []
        for t in self.all:
            if slug in t.lessons:
                k = t.lessons.index(slug)
                out.append(
                    {
                        "track": t.name,
                        "title": t.title,
                        "at": k + 1,
                        "count": len(t.lessons),
                        "prev": self.lesson(t.lessons[k - 1]) if k else None,
                        "next": self.lesson(t.lessons[k + 1]) if k + 1 < len(t.lessons) else None,
                    }
                )
        return out


def load(presets: list, concept_titles: dict[str, str]) -> Tracks:
    """Every track file, checked, in file-name order."""
    names = {p.name for p in presets}
    tracks = [read(p, names) for p in sorted(FOLDER.glob("*.toml"))]
    titles = {f"play/{p.name}": p.title for p in presets} | concept_titles
    return Tracks(tracks, titles)


def write(env, out: Path, common: dict[str, Any], tracks: Tracks) -> None:
    """tracks/ (the list) and tracks/<name>/ (each track's lessons)."""
    (out / "tracks").mkdir(parents=True, exist_ok=True)
    page = env.get_template("tracks.html").render(root="../", tracks=tracks.all, **common)
    (out / "tracks" / "index.html").write_text(page, encoding="utf-8")
    for t in tracks.all:
        lessons = [tracks.lesson(s) for s in t.lessons]
        page = env.get_template("track.html").render(root="../../", track=t, lessons=lessons, **common)
        (out / "tracks" / t.name).mkdir(parents=True, exist_ok=True)
        (out / "tracks" / t.name / "index.html").write_text(page, encoding="utf-8")
