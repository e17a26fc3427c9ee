"""The panel contract: ``feed`` is the one call, checkpoints copy panel state without sharing
anything mutable, and the public Scenario methods the bridge uses."""

from __future__ import annotations

import copy
from collections import OrderedDict, deque

from hypothesis import given
from hypothesis import strategies as st

from sims.core import api
from sims.core.panel import Checkpointed, Panel, PanelContext, Shared, checkpoint_copy
from sims.core.scenario import Scenario

atoms = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=3), st.none(), st.booleans())
values = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.integers(0, 9), inner, max_size=4),
        st.lists(inner, max_size=4).map(deque),
        st.lists(st.tuples(st.integers(), st.floats(allow_nan=False)), max_size=4),
    ),
    max_leaves=12,
)


def _mutable_parts(obj):
    """Every mutable container reachable from obj (the things a checkpoint must not share)."""
    out = []
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, dict, deque, set)):
            out.append(x)
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple, deque)):
            stack.extend(x)
    return out


@given(values)
def test_checkpoint_copy_equals_deepcopy_and_shares_nothing_mutable(v):
    got = checkpoint_copy(v, {})
    assert got == copy.deepcopy(v)
    assert type(got) is type(v)
    originals = {id(x) for x in _mutable_parts(v)}
    assert not originals & {id(x) for x in _mutable_parts(got)}


class _Toy(Panel):
    def __init__(self, ctx):
        super().__init__("toy", {}, ctx)
        self.inner = [0, 1]
        self.twice = [self.inner, self.inner]  # one list reachable twice stays one list
        self.queues = [deque([(0.5, 1)]), deque()]
        self.order = OrderedDict(a=1)
        self.later = None

    def metrics(self):
        return {}


def test_a_new_field_is_never_shared_and_the_context_always_is():
    ctx = PanelContext(1, 10.0, [{"t": 0.0}], "toy")
    p = _Toy(ctx)
    p.later = {"added": [1, 2]}  # a field no copy method names: still copied
    c = copy.deepcopy(p)
    p.inner.append(2)
    p.queues[1].append((1.0, 2))
    p.later["added"].append(3)
    p.order["b"] = 2
    assert c.inner == [0, 1] and c.twice[0] is c.twice[1] is c.inner
    assert list(c.queues[1]) == [] and c.later == {"added": [1, 2]} and list(c.order) == ["a"]
    assert c.ctx is ctx and copy.deepcopy(ctx) is ctx


def test_shared_and_checkpointed_with_slots():
    class Index(Shared):
        __slots__ = ("items",)

        def __init__(self):
            self.items = [1]

    class Slotted(Checkpointed):
        __slots__ = ("a", "index", "unset")

        def __init__(self):
            self.a = [1, 2]
            self.index = Index()

    s = Slotted()
    c = copy.deepcopy(s)
    assert c.a == [1, 2] and c.a is not s.a and c.index is s.index and not hasattr(c, "unset")


def test_the_default_feed_is_the_generic_loop():
    seen = []

    class Log(Panel):
        def advance(self, until):
            seen.append(("advance", until))

        def on_event(self, ev):
            seen.append(("event", ev["t"]))

        def metrics(self):
            return {}

    events = [{"t": 1.0}, {"t": 2.0}, {"t": 3.0}]
    Log("log", {}, PanelContext(0, 5.0, events, "log")).feed(events, 0, 2, 2.5)
    assert seen == [("advance", 1.0), ("event", 1.0), ("advance", 2.0), ("event", 2.0), ("advance", 2.5)]


def test_insert_and_tuned_checkpoints_change_nothing_but_the_inserted_event():
    plain = api.run("ratelimit-burst")
    sc = Scenario("ratelimit-burst")
    sc.checkpoint()
    sc.tune_checkpoints(sc.duration / 7)
    sc.advance(sc.duration / 2)
    sc.seek(sc.duration / 5)
    sc.run()
    assert sc.result() == plain
    late = Scenario("ratelimit-burst")
    late.tune_checkpoints(1.0)
    late.advance(late.duration)
    late.insert({"t": 0.5, "kind": "request"})  # in the past: replays from the start
    early = Scenario("ratelimit-burst")
    early.insert({"t": 0.5, "kind": "request"})
    early.run()
    assert late.metrics() == early.metrics() and late.run_events() == early.run_events()
