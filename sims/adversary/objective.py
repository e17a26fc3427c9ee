"""The objective a search maximizes: arithmetic over the metrics of panels run on one workload.

Grammar (whitespace anywhere between tokens)::

    expr   := term (("+" | "-") term)*
    term   := factor (("*" | "/") factor)*
    factor := ("+" | "-") factor | NUMBER | "k" | call | "(" expr ")"
    call   := METRIC "(" POLICY ["," size] ")"       size: an expr without calls

``k`` is the search's ``--size``; ``faults(fifo, k+1)`` is the ``faults`` of a FIFO panel of
size k+1 (the size is the topic's size parameter: frames, cache size, nodes, limit), and a call
without a size means size k. Parse errors raise ``ObjectiveError`` naming the 1-based column.
Arithmetic is IEEE basic operations only, so a score is the same in every runtime; a division
by zero makes the candidate's score undefined (``-inf``: never the best).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sims.core.limits import InputError

MAX_OBJECTIVE = 400  # characters


class ObjectiveError(InputError):
    """A malformed objective: the message names the column."""


@dataclass(frozen=True)
class Term:
    """One ``METRIC(policy, size)`` of the objective, its size already evaluated."""

    metric: str
    policy: str
    size: int
    column: int  # where it starts in the text, 1-based (for errors about its names)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, column): kinds "num", "name", "op" and a final "end"."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c.isascii() and (c.isdigit() or c == "." and i + 1 < len(text) and text[i + 1].isdigit()):
            j = i
            while j < len(text) and text[j].isascii() and (text[j].isdigit() or text[j] == "."):
                j += 1
            if text[i:j].count(".") > 1:
                raise ObjectiveError(f"objective: column {i + 1}: malformed number {text[i:j]!r}")
            out.append(("num", text[i:j], i + 1))
            i = j
        elif c.isascii() and (c.isalpha() or c == "_"):
            j = i
            while j < len(text) and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out.append(("name", text[i:j], i + 1))
            i = j
        elif c in "+-*/(),":
            out.append(("op", c, i + 1))
            i += 1
        else:
            raise ObjectiveError(f"objective: column {i + 1}: unexpected character {c!r}")
    out.append(("end", "", len(text) + 1))
    return out


class _Parser:
    """Recursive descent over the tokens; builds nested tuples ("num", x) | ("k",) |
    ("term", index) | ("neg", a) | (op, a, b)."""

    def __init__(self, text: str, k: int) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.k = k
        self.terms: list[Term] = []

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str, int]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, op: str, what: str) -> None:
        kind, text, col = self.take()
        if (kind, text) != ("op", op):
            got = "the end" if kind == "end" else repr(text)
            raise ObjectiveError(f"objective: column {col}: expected {op!r} {what}, got {got}")

    def expr(self, calls: bool) -> tuple:
        node = self.term(calls)
        while self.peek()[:2] in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            node = (op, node, self.term(calls))
        return node

    def term(self, calls: bool) -> tuple:
        node = self.factor(calls)
        while self.peek()[:2] in (("op", "*"), ("op", "/")):
            op = self.take()[1]
            node = (op, node, self.factor(calls))
        return node

    def factor(self, calls: bool) -> tuple:
        kind, text, col = self.take()
        if kind == "op" and text in "+-":
            inner = self.factor(calls)
            return ("neg", inner) if text == "-" else inner
        if kind == "num":
            return ("num", float(text))
        if kind == "op" and text == "(":
            node = self.expr(calls)
            self.expect(")", "to close the parenthesis")
            return node
        if kind == "name" and text == "k":
            return ("k",)
        if kind == "name":
            if self.peek()[:2] != ("op", "("):
                raise ObjectiveError(f"objective: column {col}: {text!r} is not k; a metric needs '(' and a policy")
            if not calls:
                raise ObjectiveError(f"objective: column {col}: a size cannot contain a metric ({text})")
            return self.call(text, col)
        got = "the end" if kind == "end" else repr(text)
        raise ObjectiveError(f"objective: column {col}: expected a number, k, a metric or '(', got {got}")

    def call(self, metric: str, col: int) -> tuple:
        self.take()  # "("
        kind, policy, pcol = self.take()
        if kind != "name":
            got = "the end" if kind == "end" else repr(policy)
            raise ObjectiveError(f"objective: column {pcol}: expected a policy name, got {got}")
        size = self.k
        if self.peek()[:2] == ("op", ","):
            self.take()
            scol = self.peek()[2]
            value = _evaluate(self.expr(calls=False), self.k, ())
            if not (math.isfinite(value) and value == int(value) and value >= 1):
                raise ObjectiveError(f"objective: column {scol}: the size must be an integer >= 1, got {value:g}")
            size = int(value)
        self.expect(")", f"after the arguments of {metric}")
        self.terms.append(Term(metric, policy, size, col))
        return ("term", len(self.terms) - 1)


def _evaluate(node: tuple, k: int, values: tuple | list) -> float:
    op = node[0]
    if op == "num":
        return node[1]
    if op == "k":
        return float(k)
    if op == "term":
        return float(values[node[1]])
    if op == "neg":
        return -_evaluate(node[1], k, values)
    a, b = _evaluate(node[1], k, values), _evaluate(node[2], k, values)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    return a / b  # ZeroDivisionError: the caller scores the candidate -inf


def _signs(node: tuple, k: int, sign: int, out: list[int]) -> None:
    """Each term's sign in the expression (+1 rewarded, -1 penalised, 0 where a product with
    another term or a divisor leaves it unknown), written into ``out``."""
    op = node[0]
    if op == "term":
        out[node[1]] = sign
    elif op == "neg":
        _signs(node[1], k, -sign, out)
    elif op in ("+", "-"):
        _signs(node[1], k, sign, out)
        _signs(node[2], k, -sign if op == "-" else sign, out)
    elif op in ("*", "/"):
        a, b = node[1], node[2]
        for mine, other, may in ((a, b, True), (b, a, op == "*")):
            try:
                c = _evaluate(other, k, ())  # a constant factor (k or numbers) keeps or flips the sign
            except (IndexError, ZeroDivisionError):
                c = 0.0  # the other side names a term (or is undefined): this side's sign is unknown
            _signs(mine, k, (sign if c > 0 else -sign if c < 0 else 0) if may else 0, out)


class Objective:
    """A parsed objective for one ``k``: its terms, ``value(term values) -> float`` and
    ``rewarded(term values)``, the sum of the terms it rewards (the search's tie-break)."""

    def __init__(self, text: str, k: int) -> None:
        if not text.strip():
            raise ObjectiveError('objective: empty; expected e.g. "hits(lru) - hits(fifo)"')
        if len(text) > MAX_OBJECTIVE:
            raise ObjectiveError(f"objective: over {MAX_OBJECTIVE} characters")
        p = _Parser(text, k)
        try:
            self.tree = p.expr(calls=True)
        except RecursionError:
            raise ObjectiveError("objective: nested too deeply") from None
        kind, tok, col = p.peek()
        if kind != "end":
            raise ObjectiveError(f"objective: column {col}: expected an operator or the end, got {tok!r}")
        if not p.terms:
            raise ObjectiveError('objective: names no metric; expected e.g. "hits(lru) - hits(fifo)"')
        self.text = text
        self.k = k
        self.terms = tuple(p.terms)
        signs = [0] * len(self.terms)
        _signs(self.tree, k, 1, signs)
        self.signs = tuple(signs)

    def value(self, values: list[float]) -> float:
        """The objective given each term's value (in ``terms`` order); -inf where undefined."""
        try:
            v = _evaluate(self.tree, self.k, values)
        except (ZeroDivisionError, OverflowError):
            return -math.inf
        return v if v == v else -math.inf

    def rewarded(self, values: list[float]) -> float:
        """The sum of the terms the objective rewards (sign +1): among candidates of equal value,
        the search prefers the one where they are larger (``faults(fifo, k+1) - faults(fifo, k)``:
        more faults with k+1 frames), from which one change more often tips the difference."""
        total = math.fsum(v for v, sg in zip(values, self.signs, strict=True) if sg > 0)
        return total if math.isfinite(total) else 0.0

    def __repr__(self) -> str:
        return f"Objective({self.text!r}, k={self.k})"
