"""``contention trace trees``: replay a file of operations on one structure and print its metrics.

One operation a line (blank lines and ``#`` comments are skipped): ``insert K``, ``delete K``,
``search K``, ``range A B``, ``pop``, ``add I D`` and ``prefix I``. Keys are integers when every
key in the file is one, else all are strings (one word each). A structure takes only its own
operations (the heap: insert and pop; the trie: insert, delete, search; Fenwick and the segment
tree: integer keys from 0 to ``MAX_UNIVERSE`` − 1, whose largest sets the array's size); any other
line is refused with its file and line, before anything runs. The result holds the metrics and
``answers``, one per line: inserted or deleted (true when the set changed), found, a range's
count, the key a pop took (null when empty), a[i] after an add, a prefix sum.
"""

from __future__ import annotations

from pathlib import Path

from sims.core.limits import InputError
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, resolve_params
from sims.core.trace import TraceArg, TraceError, TraceSpec, bad_token, lines

MAX_OPS = 200_000  # lines a trace may hold
MAX_UNIVERSE = 1_000_000  # Fenwick and segment tree: array slots
MAX_STEPS = 50_000_000  # a run that needs more (a BST fed 200,000 sorted keys) stops with exit 2
ARITY = {"insert": 1, "delete": 1, "search": 1, "range": 2, "pop": 0, "add": 2, "prefix": 1}
FORMS = "insert K | delete K | search K | range A B | pop | add I D | prefix I"
RESULT = (
    "ops size height height_bound rotations recolourings visits_mean visits_max splits merges borrows "
    "pages_read pages_per_op range_pages found nodes bytes"
).split()


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def read(path: Path, cls) -> tuple[list[list], dict]:
    """The operations of the file and the stream's ``universe``/``keys``; TraceError names the file
    and line of a malformed one, or of one ``cls`` does not take."""
    raw: list[tuple[int, list[str]]] = []
    name = cls.policy_name
    for n, text in lines(path):
        if len(raw) >= MAX_OPS:
            raise TraceError(f"{path}:{n}: more than {MAX_OPS} operations")
        words = text.split()
        op = words[0]
        if op not in ARITY or len(words) != 1 + ARITY[op]:
            raise bad_token(path, n, f"one of {FORMS}", text)
        if op not in cls.OPS:
            raise TraceError(f"{path}:{n}: {name} does not take {op} (it takes {', '.join(sorted(cls.OPS))})")
        if op in ("add", "prefix") and any(_int(w) is None for w in words[1:]):
            raise bad_token(path, n, f"integers: {op} {'I D' if op == 'add' else 'I'}", text)
        raw.append((n, words))
    ints = all(_int(w) is not None for _, words in raw for w in words[1:])
    ops: list[list] = []
    top = 0
    for n, words in raw:
        args = [int(w) for w in words[1:]] if ints else words[1:]
        if words[0] == "add":
            args = [int(words[1]), int(words[2])]
        elif words[0] == "prefix":
            args = [int(words[1])]
        if cls.KEYS == "int":
            if not ints:
                raise TraceError(f"{path}:{n}: {name} takes integer keys, and this file has words for keys")
            index = args[0] if args else 0
            if not 0 <= index < MAX_UNIVERSE:
                raise TraceError(f"{path}:{n}: {name} takes keys 0 … {MAX_UNIVERSE - 1}, got {index}")
        if ints and args:
            top = max(top, args[0])  # the key, the range's start or the slot
        ops.append([words[0], *args])
    return ops, {"universe": min(MAX_UNIVERSE, top + 1), "keys": "int" if ints else "str"}


def replay(structure: str, ops: list[list], stream: dict, params: dict | None = None) -> dict:
    """Take ``ops`` with ``structure`` to the end; the metrics and one answer an operation."""
    topic = load_topic("trees")
    cls = get_policy("trees", structure)
    full = resolve_params(dict(topic.panel_params) | dict(cls.PARAMS), params or {}, "trace")
    ev = {"t": 0.0, "kind": "ops", "ops": ops, **stream}
    panel = topic.make_panel(structure, structure, full, PanelContext(0, 0.0, [ev], structure))
    panel.on_event(ev)
    panel.d.answers = []
    if not panel.run_to_end(MAX_STEPS):
        raise InputError(
            f"{structure} took more than {MAX_STEPS:,} steps on these {len(ops)} operations and was stopped "
            "(a worst case for it: try another structure or a shorter file)"
        )
    panel.check_invariants()
    m = panel.metrics()
    return {"structure": structure, **{k: m[k] for k in RESULT}, "answers": panel.d.answers}


def _run(structure: str, args: dict, path: Path) -> dict:
    cls = get_policy("trees", structure)  # an unknown structure is named before the file is read
    given = {k: v for k, v in args.items() if v is not None}
    for flag in given:
        if flag not in cls.PARAMS:
            raise InputError(f"--{flag.replace('_', '-')} applies to --structure b_tree and b_plus_tree")
    ops, stream = read(path, cls)
    return replay(structure, ops, stream, given)


TRACE = TraceSpec(
    help="replay operations (insert K, delete K, search K, range A B, pop, add I D, prefix I) on one tree",
    args=(
        TraceArg("--page-bytes", int, "b_tree, b_plus_tree: bytes in a page (96 … 65536)", required=False),
        TraceArg("--key-bytes", int, "b_tree, b_plus_tree: bytes a key takes in a page", required=False),
    ),
    run=_run,
    policy_flag="--structure",
)
