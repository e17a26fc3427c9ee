"""Presets: named scenarios, one TOML file each in ``sims/presets/`` (package data; the
``CONTENTION_PRESETS`` environment variable names another folder), validated into frozen objects
by ``preset_schema.parse_preset`` (the record and every check on it live there).

``load_index()`` loads every preset of the folder and keeps the broken ones apart, with their error,
so one bad file never hides the others.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from sims.core.limits import show
from sims.core.preset_schema import PanelSpec, Preset, PresetError, parse_preset
from sims.core.registry import Param

PRESET_DIR = Path(os.environ.get("CONTENTION_PRESETS", Path(__file__).resolve().parents[1] / "presets"))
MAX_PRESET_BYTES = 1 << 20  # a preset is a page of TOML; a bigger file is refused unread


def _read_toml(path: Path) -> dict:
    """The file's TOML table; every failure a PresetError naming the file (and the line)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PRESET_BYTES + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise PresetError(f"{show(str(path))}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if len(data) > MAX_PRESET_BYTES:
        raise PresetError(f"{path}: over {MAX_PRESET_BYTES} bytes; a preset is a short TOML file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PresetError(f"{path}:{line}: not UTF-8 text (byte {exc.start})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PresetError(f"{path}: not valid TOML: {show(str(exc), 160)}") from None
    except RecursionError:
        raise PresetError(f"{path}: not valid TOML: nested too deeply") from None
    except ValueError:  # tomllib converts a 5,000-digit integer with int(), which refuses it
        m = re.search(r"\d{4000,}", text)
        line = text.count("\n", 0, m.start()) + 1 if m else 0
        digits = len(m.group()) if m else 0
        raise PresetError(f"{path}:{line}: an integer of {digits} digits is too long") from None


def load_file(path: str | Path) -> Preset:
    """A preset from any TOML file (``contention run ./my.toml``); its ``name`` must equal the
    file's stem, as in the presets folder."""
    path = Path(path)
    raw = _read_toml(path)
    try:
        return parse_preset(raw, str(path))
    except RecursionError:
        raise PresetError(f"{path}: nested too deeply") from None


def preset_names() -> list[str]:
    """Every preset file's name in the folder, broken ones included (see ``load_index``)."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


_CACHE: dict[str, Preset] = {}


def is_path(name: str) -> bool:
    """Does ``contention run NAME`` mean a file rather than a preset of the folder?"""
    return name.endswith(".toml") or "/" in name or os.sep in name


def load(name: str) -> Preset:
    """The preset called ``name``, or the preset file at ``name`` when it is a path ending in
    .toml; unknown names raise PresetError listing the valid ones."""
    if name in _CACHE:
        return _CACHE[name]
    if is_path(name):
        return load_file(name)
    names = preset_names()
    if name not in names:
        raise PresetError(f"unknown preset {show(name)}; valid: {', '.join(names)}")
    preset = load_file(PRESET_DIR / f"{name}.toml")
    _CACHE[name] = preset
    return preset


class PresetIndex(NamedTuple):
    """Every preset of the folder: those that load, and one entry per broken file."""

    available: list[Preset]
    unavailable: list[dict]  # {"name", "available": False, "error"}, sorted by name


def load_index() -> PresetIndex:
    """Load every preset, keeping the broken ones apart with their error, so one bad file never
    hides the others (``contention list``, ``GET /api/presets``, the site build)."""
    good, bad = [], []
    for n in preset_names():
        try:
            good.append(load(n))
        except PresetError as exc:
            bad.append({"name": n, "available": False, "error": str(exc)})
    return PresetIndex(good, bad)


def all_presets() -> list[Preset]:
    """The presets that load (a broken file is skipped: see ``load_index``)."""
    return load_index().available


def select_panels(preset: Preset, names: list[str] | None) -> Preset:
    """A copy keeping only the named panels, in the given order."""
    if not names:
        return preset
    by_name = {p.name: p for p in preset.panels}
    for n in names:
        if n not in by_name:
            raise PresetError(f"unknown panel {show(n)} for preset {preset.name}; valid: {', '.join(by_name)}")
    if len(set(names)) != len(names):
        raise PresetError(f"panels: a panel is named twice in {show(','.join(names), 80)}")
    return replace(preset, panels=tuple(by_name[n] for n in names))


__all__ = [
    "Param",
    "PanelSpec",
    "Preset",
    "PresetError",
    "PresetIndex",
    "all_presets",
    "is_path",
    "load",
    "load_file",
    "load_index",
    "parse_preset",
    "preset_names",
    "select_panels",
]
