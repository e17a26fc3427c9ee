"""The source of a registered policy as one file the editor opens and ``userpolicy.load`` reads back.

A policy whose class is a thin face over a shared algorithm (the cache's ``LRU(replace.LRU,
CachePolicy)``) comes with that algorithm: a base of the same name defined in ``sims`` is written
first, and the face's base list names it, so the file holds the decision a reader wants to edit.
Imports are the defining modules' own. The methods the topic's ``EditRules.omit`` names are left
out (a replacement policy's ``serve``, an inlined fast path: an edited policy runs ``access`` once
per reference), and the policies its ``not_editable`` names cannot be edited.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap

from sims.core import registry

FUTURE = "from __future__ import annotations"


def _module_tree(cls: type) -> tuple[str, ast.Module]:
    text = inspect.getsource(sys.modules[cls.__module__])
    return text, ast.parse(text)


def _imports(cls: type) -> list[str]:
    text, tree = _module_tree(cls)
    return [ast.get_source_segment(text, n) or "" for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]


def _module_names(cls: type, node: ast.ClassDef) -> list[str]:
    """``from MODULE import NAME`` for the names the class uses that its module defines at top level
    (a base class, a helper, a constant), which the file would otherwise miss."""
    _, tree = _module_tree(cls)
    defined = set()
    for n in tree.body:
        if isinstance(n, (ast.ClassDef, ast.FunctionDef)):
            defined.add(n.name)
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                defined.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
    used = {x.id for x in ast.walk(node) if isinstance(x, ast.Name)} - {node.name}
    return [f"from {cls.__module__} import {name}" for name in sorted(used & defined)]


def _class_text(cls: type, omit: tuple[str, ...]) -> tuple[str, ast.ClassDef]:
    """The class's source (decorators included), without the methods ``omit`` names."""
    text, tree = _module_tree(cls)
    node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__), None)
    if node is None:  # e.g. the engine's policies: marker classes a loop makes, no source to edit
        raise ValueError(f"{cls.__name__} is not a class statement of {cls.__module__}; there is no source to edit")
    lines = text.splitlines()
    start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
    keep = list(range(start, node.end_lineno or node.lineno))
    if omit:
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name in omit:
                first = min([item.lineno] + [d.lineno for d in item.decorator_list]) - 1
                gone = set(range(first, item.end_lineno or item.lineno))
                if keep and keep[-1] + 1 < len(lines) and not lines[item.end_lineno or 0].strip():
                    gone.add(item.end_lineno or 0)  # the blank line after it
                keep = [k for k in keep if k not in gone]
    return "\n".join(lines[k] for k in keep), node


def policy_source(topic: str, name: str) -> str:
    """One self-contained file defining and registering policy ``name`` of ``topic``."""
    cls = registry.get_policy(topic, name)
    if not isinstance(cls, type):
        raise ValueError(f"{topic}/{name} is not a class; only classes can be edited")
    rules = registry.load_topic(topic).edit
    if name in rules.not_editable:
        raise ValueError(f"{topic}/{name} is an oracle its topic wires to the future; it cannot be edited")
    omit = rules.omit(cls)
    algos = _algorithms(cls, name)
    imports: list[str] = []
    for c in [*algos, cls]:
        own = _imports(c) + _module_names(c, _class_text(c, omit)[1])
        imports += [i for i in own if i not in imports and i != FUTURE]
    local = {a.__name__ for a in algos}
    imports = [i for i in imports if not (i.startswith("from sims.") and i.rsplit(" ", 1)[-1] in local)]
    imports.sort(key=lambda i: i.startswith(("from sims", "import sims")))
    reg = "from sims.core.registry import register_policy"
    if not any(i.startswith("from sims.core.registry import") and "register_policy" in i for i in imports):
        imports.append(reg)
    parts = [
        f'"""The {topic} policy {name!r}, to edit: it runs as a new panel beside the others, on the same stream.\n\n'
        "Keep the @register_policy line; rename the policy there to run it beside the original.\n"
        '"""',
        "",
        FUTURE,
        "",
        *imports,
    ]
    aliases: dict[str, str] = {}
    for algo in reversed(algos):  # the farthest base first
        body, _ = _class_text(algo, omit)
        local = f"{algo.__name__}Base"
        aliases[algo.__name__] = local
        parts += ["", "", body.replace(f"class {algo.__name__}(", f"class {local}(", 1)]
    body, node = _class_text(cls, omit)
    parts += ["", "", _rebase(body, node, algos, aliases)]
    return textwrap.dedent("\n".join(parts)).rstrip() + "\n"


def _algorithms(cls: type, name: str) -> list[type]:
    """The shared algorithms ``cls`` is a face of: its bases in ``sims`` named as it is."""
    low = (cls.__name__.lower(), name.lower())
    return [b for b in cls.__mro__[1:] if b.__module__.startswith("sims.") and b.__name__.lower() in low]


def class_sources(topic: str, name: str) -> list[tuple[str, str]]:
    """``(module, source)`` of policy ``name``'s class and of the algorithms it is a face of, the
    farthest base first: the code that runs, as a concept page shows it (the methods ``EditRules.omit``
    names left out, as in the editor's file). ValueError when a class has no statement of its own (the engine's)."""
    cls = registry.get_policy(topic, name)
    omit = registry.load_topic(topic).edit.omit(cls) if isinstance(cls, type) else ()
    return [(c.__module__, textwrap.dedent(_class_text(c, omit)[0])) for c in [*reversed(_algorithms(cls, name)), cls]]


def _rebase(body: str, node: ast.ClassDef, algos: list[type], aliases: dict[str, str]) -> str:
    """Point the class's bases that are the written-out algorithms at their local copies."""
    for base in node.bases:
        text = ast.unparse(base)
        short = text.rsplit(".", 1)[-1]
        if short in aliases and any(a.__name__ == short for a in algos):
            if "." in text:  # replace.OPT.__init__(self, ...) and the like follow the copy too
                body = re.sub(rf"\b{re.escape(text)}\b", aliases[short], body)
            else:
                body = body.replace(f"({text},", f"({aliases[short]},", 1).replace(
                    f", {text})", f", {aliases[short]})", 1
                )
    return body
