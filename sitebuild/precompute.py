"""The build's simulation runs, spread over the cores: a poster for each preset page and the
answer to each topic quiz. Each is a function of its preset alone (seeded), so the pages are the
same bytes whatever the number of processes; ``jobs=1`` runs them here, in order.

The processes are spawned, not forked: the build also runs inside ``contention serve`` and the
test session, whose threads a fork would copy mid-flight."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
_CONTENT: dict[str, Any] = {}  # the site's text, read once per process


def default_jobs() -> int:
    """``CONTENTION_BUILD_JOBS``, else one process per core."""
    given = os.environ.get("CONTENTION_BUILD_JOBS", "")
    return max(1, int(given)) if given.isdigit() else max(1, os.cpu_count() or 1)


def spread(fn: Callable[[str], T], names: Iterable[str], jobs: int) -> Iterator[tuple[str, T]]:
    """``(name, fn(name))`` for each name, in the given order."""
    names = list(names)
    if jobs <= 1 or len(names) <= 1:
        yield from ((n, fn(n)) for n in names)
        return
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(names)), mp_context=ctx) as pool:
        yield from zip(names, pool.map(fn, names), strict=True)


def poster_meta(name: str) -> dict[str, Any]:
    """What a preset's page needs (``pages.preset_meta``) with its poster; a preset that fails
    gets a page saying so, and the rest still build."""
    from sims.core import api, presets
    from sitebuild import pages
    from web.pyodide import bridge

    p = presets.load(name)
    try:
        seconds = pages.POSTER_SECONDS_FROM_START if api.default_start(p) else pages.POSTER_SECONDS
        return pages.preset_meta(p, bridge.poster(p.name, seconds, pages.POSTER_BYTES))
    except Exception as exc:  # noqa: BLE001 - reported on the page, not fatal to the build
        return {**api.describe(p, summary=True), "poster": [], "build_error": f"{type(exc).__name__}: {exc}"}


def quiz_answer(key: str) -> dict[str, Any] | None:
    """The answer to quiz number ``k`` of a topic (``"topic#k"``); None when it cannot run."""
    from sims.core import presets
    from sitebuild import pages

    topic, k = key.split("#")
    if not _CONTENT:
        _CONTENT.update(pages.load_content())
    quiz = _CONTENT["topics"][topic]["quiz"][int(k)]
    try:
        return pages.quiz_answers(quiz, presets.load(quiz["preset"]))
    except Exception:  # noqa: BLE001 - a quiz that cannot run is left out, not fatal
        return None
