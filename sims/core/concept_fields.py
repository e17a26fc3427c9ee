"""Reading one TOML table of a concept file (``sims.core.concepts``): typed fields, unknown keys
refused, and every failure a ``ConceptError`` naming the file and the field, in one line."""

from __future__ import annotations

import math
import re
from typing import Any

from sims.core.limits import InputError, show

TOP_FIELDS = ("title", "summary", "tags", "figure", "what", "how", "when", "pros", "cons", "pseudocode")
TOP_FIELDS += ("real", "steps", "quiz", "reading", "code")


class ConceptError(InputError):
    """A concept file that cannot be used: the message names the file and the field."""


# -- reading one table --------------------------------------------------------------------------
class Table:
    """One TOML table with its place in the file: typed reads, and unknown keys refused."""

    def __init__(self, raw: Any, where: str, field: str) -> None:
        if not isinstance(raw, dict):
            raise ConceptError(f"{where}: {field}: expected a table, got {type(raw).__name__} {show(raw)}")
        self.raw, self.where, self.field = raw, where, field

    def name(self, key: str) -> str:
        return ".".join(k for k in (self.field, key) if k)

    def fail(self, key: str, msg: str) -> ConceptError:
        return ConceptError(f"{self.where}: {self.name(key)}: {msg}")

    def only(self, *keys: str) -> None:
        for key in self.raw:
            if key not in keys:
                hint = (
                    " (a top-level field goes before the file's first [table])"
                    if self.field and key in TOP_FIELDS
                    else ""
                )
                raise self.fail(key, f"unknown field; valid: {', '.join(keys)}{hint}")

    def text(self, key: str, required: bool = True) -> str:
        value = self.raw.get(key)
        if value is None and not required:
            return ""
        if not (isinstance(value, str) and value.strip()):
            raise self.fail(key, "missing" if value is None else f"expected non-empty text, got {show(value)}")
        return value

    def number(self, key: str, required: bool = True) -> float | None:
        value = self.raw.get(key)
        if value is None and not required:
            return None
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not ok:
            raise self.fail(key, "missing" if value is None else f"expected a number, got {show(value)}")
        return float(value)

    def lines(self, key: str, least: int = 1, pattern: re.Pattern | None = None) -> tuple[str, ...]:
        value = self.raw.get(key)
        if value is None:
            raise self.fail(key, f"missing (a list of at least {least} line(s))")
        if not isinstance(value, list) or len(value) < least:
            raise self.fail(key, f"expected a list of at least {least} line(s), got {show(value)}")
        for i, v in enumerate(value):
            if not (isinstance(v, str) and v.strip()) or (pattern and not pattern.match(v)):
                raise self.fail(
                    f"{key}[{i}]", f"expected {'a lower-case tag' if pattern else 'non-empty text'}, got {show(v)}"
                )
        return tuple(value)

    def tables(self, key: str, least: int = 1) -> list[Table]:
        value = self.raw.get(key)
        if not isinstance(value, list) or len(value) < least:
            got = "missing" if value is None else f"got {show(value)}"
            raise self.fail(key, f"expected at least {least} [[{key}]] entr{'y' if least == 1 else 'ies'}, {got}")
        return [Table(v, self.where, f"{self.name(key)}[{i}]") for i, v in enumerate(value)]
