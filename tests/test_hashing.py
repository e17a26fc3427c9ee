"""Consistent hashing: the presets' claims in numbers, and consistency as a property."""

from __future__ import annotations

import json
from math import ceil

import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from sims.core import api, presets
from sims.core.panel import PanelContext
from sims.core.registry import get_policy, load_topic, policies, resolve_params
from sims.core.scenario import Scenario
from sims.hashing import make_panel
from sims.hashing.placement import h64, jump_hash

KEYS = [h64(f"key{i}") for i in range(400)]


def _panel(policy: str, **params):
    cls = get_policy("hashing", policy)
    specs = dict(load_topic("hashing").panel_params) | dict(cls.PARAMS)
    return make_panel(policy, policy, resolve_params(specs, params, "panel"), PanelContext(1, 10.0, [], policy))


# -- the presets' claims -------------------------------------------------------------------------
def test_adding_an_eleventh_node_moves_one_eleventh_on_a_ring_and_most_keys_with_modulo():
    m = api.run("hashing-add-node")["panels"]
    assert m["modulo"]["remapped_fraction"] > 0.85  # about 10/11
    for name in ("ring", "rendezvous", "jump"):
        assert 0.065 < m[name]["remapped_fraction"] < 0.125, (name, m[name])  # about 1/11 = 0.091
        assert m[name]["inconsistent_moves"] == 0
    for v in m.values():
        assert v["nodes"] == 11 and v["changes"] == 1 and v["keys"] == 10_000


def test_more_virtual_nodes_spread_load_more_evenly():
    m = api.run("hashing-vnodes")["panels"]
    ratios = [m[f"ring_{v}"]["max_load_ratio"] for v in (1, 10, 100, 1000)]
    assert ratios == sorted(ratios, reverse=True), ratios
    assert ratios[0] > 1.5 and ratios[2] < 1.15 and ratios[3] < 1.08
    assert m["rendezvous"]["max_load_ratio"] < 1.1


def test_bounded_load_caps_the_hot_keys_node():
    m = api.run("hashing-hot-key")["panels"]
    assert m["ring"]["max_load_ratio"] > 2.5 and m["rendezvous"]["max_load_ratio"] > 2.5
    assert m["bounded_load"]["max_load_ratio"] <= 1.3
    assert m["bounded_load"]["spilled"] > 0.2 * m["bounded_load"]["requests"]


def test_snapshot_at_t_equals_a_run_to_t_across_a_membership_change():
    p = presets.load("hashing-hot-key")
    events = [{"t": 2.0, "kind": "add_node"}, {"t": 3.0, "kind": "remove_node", "node": "n4"}]
    p = p.with_overrides({"events": events, "workload.rate": 2000.0, "duration": 4.0})
    sc = Scenario(p, duration=4.0)
    for t in (1.5, 2.0, 3.3):
        sc.advance(t)
        assert sc.metrics() == Scenario(p, duration=t).run().metrics()
    sc.check_invariants()
    views = json.loads(json.dumps(sc.views()))
    assert views["bounded_load"]["members"][0]["name"] == "n0" and views["ring"]["ring"]


def test_seeking_back_through_checkpoints_replays_exactly():
    events = [{"t": 1.0, "kind": "add_node"}, {"t": 2.0, "kind": "remove_node", "node": "n1"}]
    p = presets.load("hashing-hot-key").with_overrides({"events": events, "workload.rate": 2000.0, "duration": 3.0})
    sc = Scenario(p, checkpoint_every=0.5)
    sc.advance(2.8)
    late = sc.metrics()
    for t in (1.2, 0.3, 2.1):
        sc.seek(t)
        assert sc.metrics() == Scenario(p, duration=t).run().metrics()
    sc.advance(2.8)
    assert sc.metrics() == late


# -- properties ----------------------------------------------------------------------------------
_CHANGES = st.lists(st.tuples(st.booleans(), st.integers(0, 1000)), min_size=1, max_size=12)


@settings(max_examples=30, deadline=None)
@given(policy=st.sampled_from(["ring", "rendezvous", "jump"]), changes=_CHANGES, vnodes=st.sampled_from([1, 7, 50]))
def test_a_key_moves_only_to_or_from_the_member_that_changed(policy, changes, vnodes):
    cls = get_policy("hashing", policy)
    place = cls(vnodes=vnodes) if policy == "ring" else cls()
    members = [f"n{i}" for i in range(5)]
    created = 5
    place.build(members)
    before = [place.lookup(k) for k in KEYS]
    for add, pick in changes:
        add = add or len(members) == 1
        if add:
            node = f"n{created}"
            created += 1
            members.append(node)
        else:
            node = members[-1] if policy == "jump" else members[pick % len(members)]
            members.remove(node)
        place.build(members)
        after = [place.lookup(k) for k in KEYS]
        for old, new in zip(before, after, strict=True):
            assert new in members
            if old != new:
                assert (add and new == node) or (not add and old == node), (old, new, node)
        before = after


@settings(max_examples=examples(20), deadline=None)
@given(
    policy=st.sampled_from(sorted(policies("hashing"))),
    ops=st.lists(st.tuples(st.sampled_from(["ref", "add_node", "remove_node"]), st.integers(0, 40)), max_size=80),
)
def test_every_policy_keeps_its_invariants_after_every_event(policy, ops):
    extra = {"table_size": 101} if policy == "maglev" else {}
    panel = _panel(policy, nodes=4, hold=0.05, **extra)
    for i, (kind, x) in enumerate(ops):
        ev = {"t": i * 0.01, "kind": kind}
        if kind == "ref":
            ev["key"] = x
        elif kind == "remove_node" and x % 2:
            ev["node"] = f"n{x % 6}"
        panel.on_event(ev)
        panel.check_invariants()
    assert panel.requests == sum(1 for kind, _ in ops if kind == "ref")


@settings(max_examples=examples(50), deadline=None)
@given(key=st.integers(0, 2**64 - 1), n=st.integers(1, 300))
def test_jump_hash_moves_a_key_only_to_the_new_bucket(key, n):
    b = jump_hash(key, n)
    assert 0 <= b < n
    assert jump_hash(key, n + 1) in (b, n)


def test_jump_removing_a_middle_member_is_flagged_not_consistent():
    panel = _panel("jump")
    for i in range(2000):
        panel.on_event({"t": i * 0.001, "kind": "ref", "key": i})
    panel.on_event({"t": 2.0, "kind": "remove_node", "node": "n2"})
    change = panel.changes[-1]
    assert change["consistent"] is False and change["inconsistent"] > 0
    assert change["fraction"] > 0.3
    panel.check_invariants()  # renumbering is expected here, so it is not counted as a violation


@settings(max_examples=20, deadline=None)
@given(keys=st.lists(st.integers(0, 30), min_size=1, max_size=300), c=st.sampled_from([1.1, 1.25, 2.0]))
def test_bounded_load_never_places_above_its_cap(keys, c):
    panel = _panel("bounded_load", c=c, hold=0.05, nodes=4)
    for i, key in enumerate(keys):
        t = i * 0.004
        panel.advance(t)
        before = dict(panel.load)
        panel.on_event({"t": t, "kind": "ref", "key": key})
        (m,) = [m for m in panel.members if panel.load[m] > before[m]]
        assert panel.load[m] <= ceil(c * panel.in_flight / 4)
        panel.check_invariants()


def test_bad_parameters_are_value_errors():
    with pytest.raises(ValueError, match="vnodes"):
        _panel("ring", vnodes=0)
    with pytest.raises(ValueError, match="c > 1"):
        _panel("bounded_load", c=1.0)
    with pytest.raises(ValueError, match="nodes"):
        _panel("ring", nodes=0)


def test_a_key_on_a_ring_point_goes_to_the_next_point():
    ring = get_policy("hashing", "ring")(vnodes=4)
    ring.build(["a", "b", "c"])
    for i, h in enumerate(ring.hashes):
        assert ring.lookup(h) == ring.owners[(i + 1) % len(ring.owners)]  # strictly after
        assert ring.lookup(h - 1) == ring.owners[i]  # just before it: that point
