"""The engine's fast paths against the plain ones: the decode-run loop against the
general step, lazy prefix hashes against hashing every block at once, and the LRU free queue
against an OrderedDict model. Results, block tables, free-queue order and block hashes must be
identical, not close."""

from __future__ import annotations

import random
from collections import OrderedDict

import pytest

from sims.core import presets
from sims.core.scenario import Scenario
from sims.engine import engine as engine_mod
from sims.engine.freequeue import LRUFree
from sims.engine.paged import Paged
from sims.engine.seq import Seq

NAMES = sorted(n for n in presets.preset_names() if presets.load(n).topic in ("engine", "cluster"))


def _engines(sc: Scenario) -> list:
    out = []
    for p in sc.panels.values():
        eng = getattr(p, "engine", None)
        if eng is not None:
            out.extend(getattr(eng, "engines", None) or [eng])
        out.extend(getattr(p, "engines", []))
    return out


def _state(sc: Scenario) -> list:
    rows = []
    for e in _engines(sc):
        alloc = e.alloc
        row = [e.now, e.step_idx, e.batch.s_dec, e.batch.work, alloc.held, alloc.reserved_sum, alloc.useful_sum]
        row.append([(q.rid, q.order, list(alloc.table(q)), q.reserved, q.cached_blocks) for q in e.holders()])
        row.append(list(e.recent))
        if e.paged:
            pool = alloc.pool
            row += [pool.free_q.order(), [h is not None for h in pool.block_hash], pool.evictions, pool.gains]
            row.append(pool.num_cached)
        rows.append(row)
    return rows


def _hashes(sc: Scenario) -> list:
    """Every engine's block hashes once each lazy root is hashed (attaching a listener does it)."""
    out = []
    for e in _engines(sc):
        if e.paged:
            e.alloc.kv_listener = e.alloc.kv_listener or (lambda kind, hashes: None)
            e.alloc.check_invariants(e.holders())
            out.append(list(e.alloc.pool.block_hash))
    return out


def _run(name: str, plain: bool, monkeypatch) -> tuple[list, list, dict, list]:
    p = presets.load(name)
    duration = min(p.duration, p.ci_duration or 60.0, 60.0)
    with monkeypatch.context() as m:
        if plain:
            m.setattr(engine_mod, "can_run", lambda eng: False)
            init = Paged.__init__

            def eager(self, *a, **k):
                init(self, *a, **k)
                self.lazy = False

            m.setattr(Paged, "__init__", eager)
        sc = Scenario(p, duration=duration)
        states = []
        for k in range(1, 5):
            sc.advance(duration * k / 4)
            states.append(_state(sc))
            states.append(sc.views())
        return states, _hashes(sc), sc.metrics(), _engines(sc)


@pytest.mark.every_preset("name")
@pytest.mark.parametrize("name", NAMES)
def test_fast_paths_equal_the_plain_step(name, monkeypatch):
    fast = _run(name, False, monkeypatch)
    plain = _run(name, True, monkeypatch)
    assert fast[2] == plain[2]  # metrics
    assert fast[0] == plain[0]  # engine state and views at four instants
    assert fast[1] == plain[1]  # the same block hashes, once the lazy ones are computed
    assert any(e.stats.steps for e in fast[3])


def test_the_decode_run_prices_most_steps_of_a_steady_decode(monkeypatch):
    calls = []
    orig = engine_mod.Engine._step
    monkeypatch.setattr(engine_mod.Engine, "_step", lambda self: calls.append(self) or orig(self))
    p = presets.load("engine-vidur-10k")
    sc = Scenario(p, duration=60.0).run()
    eng = _engines(sc)[0]
    general = sum(1 for e in calls if e is eng)
    assert eng.stats.steps > 2 * general > 0  # most steps never reach the general step


def test_a_root_seen_once_is_never_hashed(monkeypatch):
    import sims.engine.paged as paged

    hashed = []
    orig = paged.block_hashes
    monkeypatch.setattr(paged, "block_hashes", lambda *a, **k: hashed.append(1) or orig(*a, **k))
    from sims.engine import seq as seq_mod

    monkeypatch.setattr(seq_mod, "block_hashes", lambda *a, **k: hashed.append(1) or orig(*a, **k))
    sc = Scenario(presets.load("engine-vidur-10k"), duration=30.0).run()
    eng = _engines(sc)[0]
    assert eng.alloc.pool.num_cached > 1000 and not hashed  # blocks cached, none hashed


@pytest.mark.parametrize("seed", range(5))
def test_lru_free_queue_matches_an_ordered_dict(seed):
    rng = random.Random(seed)
    q, model = LRUFree(), OrderedDict()
    q.fill(8)
    for b in range(8):
        model[b] = None
        model.move_to_end(b, last=False)
    hashed: dict[int, bool] = dict.fromkeys(range(8), False)
    held = []
    for _ in range(2000):
        op = rng.random()
        if op < 0.35 and len(model):
            n = rng.randint(1, min(4, len(model)))
            got = q.take(n)
            want = [model.popitem(last=False)[0] for _ in range(n)]
            assert got == want
            held += got
        elif op < 0.7 and held:
            rng.shuffle(held)
            k = rng.randint(1, len(held))
            out, held = held[:k], held[k:]
            flags = [rng.random() < 0.6 for _ in out]
            for b, h in zip(out, flags, strict=True):
                hashed[b] = h
                model[b] = None
                if not h:
                    model.move_to_end(b, last=False)
            q.push_freed(
                [b for b, h in zip(out, flags, strict=True) if h], [b for b, h in zip(out, flags, strict=True) if not h]
            )
        elif op < 0.85:
            cand = [b for b in model if hashed[b]]
            if cand:
                b = rng.choice(cand)
                del model[b]
                q.remove(b)
                held.append(b)
        elif len(model):
            b = q.pop()
            assert b == model.popitem(last=False)[0]
            held.append(b)
        assert len(q) == len(model)
        assert q.order() == list(model)


@pytest.mark.parametrize("name", ["engine-vidur-10k", "prefix-sharing", "routing-llmd-short"])
def test_seeking_back_through_lazy_roots_gives_the_same_run(name):
    p = presets.load(name)
    fresh = Scenario(p, duration=40.0)
    fresh.advance(40.0)
    sc = Scenario(p, duration=40.0, checkpoint_every=10.0)
    sc.advance(40.0)
    sc.seek(15.0)
    sc.advance(40.0)
    assert sc.metrics() == fresh.metrics()
    assert _state(sc) == _state(fresh)
    assert _hashes(sc) == _hashes(fresh)


def _seq(order, prompt, out):
    s = Seq(order, 0.0, prompt, out, [[f"u{order}", prompt]], f"o{order}", order)
    s.final_len = prompt + out
    return s


def test_a_table_swapped_back_in_is_freed_by_its_hashes_not_its_lazy_roots_old_marks():
    alloc = Paged(64 * 16, 16, caching=True, eviction="lru")
    seq = _seq(1, 10, 400)
    assert alloc.prompt_hashes(seq, 10) is None  # a new root: registered lazily
    assert alloc.allocate_slots(seq, 10, None, 0) is not None
    alloc.grow(seq, 200)
    alloc.release(seq, 199)  # swapped out: 12 full blocks registered with the root's mark
    assert alloc.pool.lazy == 12
    assert alloc.allocate_slots(seq, 200, None, 0) is not None  # swapped back in: new blocks, no hashes
    alloc.release(seq, 10)  # done: its prompt fills no block, nothing to register
    alloc.check_invariants([])  # every free block on the side of the queue its hash says
    other = _seq(2, 1000, 10)
    assert alloc.allocate_slots(other, 1000, None, 0) is not None  # takes every free block, marks and all
    alloc.check_invariants([other])
