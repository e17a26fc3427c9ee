"""Load a policy class from the reader's own source (the editor in the browser, ``run --policy-file``).

The source is plain Python that defines and registers one policy class exactly as the topic's own
policies do (``@register_policy(topic, name)``); the registration is captured here, so the edited
class never replaces the built-in one. The loader is restricted but honest: it is not a sandbox
(nothing written in Python can be). Its restrictions guard against mistakes; what contains code
that is not the reader's own is where it runs, never on the server: in the browser, only after the
reader said yes, in a worker of its own under the page's Content-Security-Policy (docs/editing.md);
in a terminal, with the permissions of whoever runs it. The restrictions keep an edited policy
deterministic and honest about cost:

- imports come from ``ALLOWED`` and ``sims`` only (no files, clock, network); ``random`` offers only
  ``Random``, so draws come from the generator the panel passes (the module-level functions are
  seeded from the operating system);
- ``open``, ``eval``, ``exec``, ``compile``, ``input`` and ``breakpoint`` are absent; ``print``
  writes to standard error;
- every loop iteration, function call, comprehension item and lambda call in the source costs one
  step of a budget (a counter the loader compiles into the code: ``Steps``); the panel starts a
  budget before each decision and an edited policy that spends it is stopped (``BudgetExceeded``).
  A builtin call that never returns (``list(itertools.count())``) is not caught.

Errors carry the line in the reader's source: ``PolicyError.line``.
"""

from __future__ import annotations

import ast
import builtins
import sys
import types
from dataclasses import dataclass, field
from typing import Any

from sims.core import registry
from sims.core.limits import InputError
from sims.core.panel import Shared

ALLOWED = frozenset(
    {
        "__future__",
        "array",
        "bisect",
        "collections",
        "collections.abc",
        "copy",
        "dataclasses",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "itertools",
        "math",
        "operator",
        "typing",
    }
)
MAX_SOURCE = 200_000  # characters
STEPS_PER_DECISION = 100_000  # the budget of one decision (one reference, one event)
_DENIED = ("open", "eval", "exec", "compile", "input", "breakpoint", "help", "exit", "quit")


class PolicyError(InputError):
    """An edited policy that cannot load or stopped: ``message`` in one line, ``line`` in its source
    (None when no line of it is at fault), ``kind``: syntax | load | exception | invariant | budget."""

    def __init__(self, message: str, line: int | None = None, kind: str = "load", filename: str = "") -> None:
        self.message, self.line, self.kind, self.filename = message, line, kind, filename
        where = f"{filename}:{line}: " if filename and line else f"{filename}: " if filename else ""
        super().__init__(f"{where}{message}")


class BudgetExceeded(BaseException):
    """Raised inside the edited code when its step budget is spent. A BaseException, so an
    ``except Exception`` in the edited code cannot swallow it (and the next step raises again)."""


@dataclass(slots=True)
class Steps:
    """The step counter compiled into the edited code: ``cell[0]`` steps taken since ``start``;
    the code calls ``over()`` once that passes ``cell[1]``. One list, so the check stays bytecode.

    Two budgets: ``per_decision`` steps for each decision (deterministic: the CLI and the browser
    stop at the same event), and, where ``frame_cap`` is set (the browser's worker), that many
    steps per frame (``new_frame``), so a policy slow on every decision cannot hold the page's
    simulation for long; that one depends on how the run is cut into frames, so the CLI has none."""

    cell: list = field(default_factory=lambda: [0, STEPS_PER_DECISION])
    per_decision: int = STEPS_PER_DECISION
    frame_cap: int | None = None
    total: int = 0  # steps taken before the current decision (for the overhead figures)
    frame: int = 0  # steps taken in this frame before the current decision

    def new_frame(self) -> None:
        self.start()
        self.frame = 0

    def start(self) -> None:
        cell = self.cell
        self.total += cell[0]
        self.frame += cell[0]
        cell[0] = 0
        if self.frame_cap is None:
            cell[1] = self.per_decision
            return
        cell[1] = min(self.per_decision, self.frame_cap - self.frame)
        if cell[1] < 0:
            self.over()

    def tick(self) -> bool:
        """One step, for expressions (comprehensions, lambdas): always True unless over budget."""
        cell = self.cell
        cell[0] += 1
        if cell[0] > cell[1]:
            self.over()
        return True

    def over(self) -> None:
        if self.frame_cap is not None and self.cell[1] < self.per_decision:
            raise BudgetExceeded(
                f"over the frame budget: {self.frame_cap:,} steps in one frame (too slow to show live)"
            )
        raise BudgetExceeded(f"over the step budget: {self.per_decision:,} steps in one decision (an endless loop?)")


@dataclass(frozen=True)
class LoadedPolicy(Shared):
    """An edited policy class and where it came from. Shared by checkpoints: the compiled code
    counts on this ``steps`` object, whichever copy of the panel runs."""

    cls: type
    topic: str
    name: str  # the name it registered under
    filename: str  # how errors name the source
    steps: Steps
    source: str


_TICK = "__steps__[0] += 1\nif __steps__[0] > __steps__[1]:\n    __over__()\n"


class _Counter(ast.NodeTransformer):
    """Puts one step at the top of every function and loop body, and one call per comprehension
    item and lambda call; the new nodes carry the line of the code they count."""

    def _tick(self, anchor: ast.AST) -> list[ast.stmt]:
        body = ast.parse(_TICK).body
        for node in body:
            for sub in ast.walk(node):
                ast.copy_location(sub, anchor)
        return body

    def _prepend(self, node: Any) -> Any:
        self.generic_visit(node)
        body = node.body
        doc = int(bool(body) and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant))
        node.body = body[:doc] + self._tick(node) + body[doc:]
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_For = visit_AsyncFor = visit_While = _prepend

    def _call_tick(self, anchor: ast.AST) -> ast.expr:
        call = ast.Call(ast.Name("__tick__", ast.Load()), [], [])
        for sub in ast.walk(call):
            ast.copy_location(sub, anchor)
        return call

    def visit_comprehension(self, node: ast.comprehension) -> ast.comprehension:
        self.generic_visit(node)
        node.ifs.append(self._call_tick(node.iter))
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        self.generic_visit(node)
        node.body = ast.copy_location(ast.BoolOp(ast.And(), [self._call_tick(node.body), node.body]), node.body)
        return node


def user_line(tb: Any, filename: str) -> int | None:
    """The line of the innermost frame of the edited source in a traceback, or None."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, BudgetExceeded):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _registry_shim(found: list) -> types.ModuleType:
    """``sims.core.registry`` as the edited source sees it: the same names, but ``register_policy``
    records the class instead of entering it in the registry."""
    shim = types.ModuleType("sims.core.registry")
    shim.__dict__.update({k: v for k, v in vars(registry).items() if not k.startswith("__")})

    def register_policy(topic: str, name: str):
        def deco(obj: Any) -> Any:
            obj.policy_name = name
            found.append((topic, name, obj))
            return obj

        return deco

    shim.register_policy = register_policy
    return shim


def _random_shim() -> types.ModuleType:
    import random

    shim = types.ModuleType("random", "Only Random: draw from the generator the panel passes you.")
    shim.Random = random.Random
    return shim


def _builtins(found: list) -> dict[str, Any]:
    shims = {"sims.core.registry": _registry_shim(found), "random": _random_shim()}
    core = types.ModuleType("sims.core")

    def importer(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level:
            raise ImportError("relative imports are not available in an edited policy")
        if name in shims:
            return shims[name] if fromlist or "." not in name else __import__(name.split(".")[0])
        if name == "sims.core" and fromlist and "registry" in fromlist:
            import sims.core

            core.__dict__.update(vars(sims.core))
            core.registry = shims["sims.core.registry"]
            return core
        top = name.split(".")[0]
        if name not in ALLOWED and not (top == "sims" and not name.startswith("sims.cli")):
            raise ImportError(f"import {name}: an edited policy may import only sims and {', '.join(sorted(ALLOWED))}")
        return __import__(name, globals, locals, fromlist, level)

    def stderr_print(*args: Any, **kwargs: Any) -> None:
        kwargs["file"] = sys.stderr
        print(*args, **kwargs)

    table = {k: v for k, v in vars(builtins).items() if k not in _DENIED}
    table["__import__"] = importer
    table["print"] = stderr_print
    return table


def load(source: str, topic: str, filename: str = "<edited policy>") -> LoadedPolicy:
    """Compile ``source`` and return the one policy class it registers for ``topic``. Raises
    PolicyError with the line (syntax errors, exceptions while loading, a wrong registration)."""
    registry.load_topic(topic)  # the topic's own policies first, so they never load inside the edit
    if not isinstance(source, str):
        raise PolicyError(f"the source must be text, got {type(source).__name__}", filename=filename)
    if len(source) > MAX_SOURCE:
        raise PolicyError(f"the source is {len(source):,} characters; at most {MAX_SOURCE:,}", filename=filename)
    try:  # the compiler finds some errors the parser lets through (a late `from __future__`)
        tree = ast.parse(source, filename)
        code = compile(ast.fix_missing_locations(_Counter().visit(tree)), filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise PolicyError(f"SyntaxError: {exc.msg}", exc.lineno, "syntax", filename) from None
    steps = Steps()
    found: list = []
    namespace: dict[str, Any] = {
        "__name__": "edited_policy",
        "__builtins__": _builtins(found),
        "__steps__": steps.cell,
        "__over__": steps.over,
        "__tick__": steps.tick,
    }
    try:
        exec(code, namespace)
    except (Exception, BudgetExceeded) as exc:
        raise PolicyError(describe(exc), user_line(exc.__traceback__, filename), "exception", filename) from None
    if len(found) != 1:
        what = "none" if not found else ", ".join(f"{t}/{n}" for t, n, _ in found)
        raise PolicyError(
            f'register exactly one policy with @register_policy("{topic}", NAME); registered: {what}',
            None,
            "load",
            filename,
        )
    got_topic, name, cls = found[0]
    line = _class_line(tree, getattr(cls, "__name__", ""))
    if got_topic != topic:
        raise PolicyError(
            f"registered for topic {got_topic!r}, but this preset's topic is {topic!r}", line, "load", filename
        )
    if not isinstance(cls, type):
        raise PolicyError(f"register_policy decorates a class; got {type(cls).__name__}", line, "load", filename)
    return LoadedPolicy(cls, topic, name, filename, steps, source)


def _class_line(tree: ast.Module, name: str) -> int | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node.lineno
    return None
