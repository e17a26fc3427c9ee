"""Decode runs: the steps in which every running sequence only decodes, priced in one tight loop.

Between two events that change the batch (an arrival, a prefill, a preemption), a step's duration
is a closed-form function of the step index: the batch keeps its ``n`` sequences and their context
sum grows by ``n`` a step. ``run_decodes`` executes those steps exactly as ``Engine._step`` would,
one by one and in the same floating-point order (every sum is still accumulated step by step, so
results are bit-identical), but without the general step's per-step work: no calendar of demotions,
no admission, no chunk list. A step's block-boundary crossings go to the KV manager in one call
(``Allocator.decode_grow``: this module never touches a block); a sequence that finishes ends its
step as in ``Engine._step``. It hands back to the general step at the first step it cannot price:
a crossing the KV manager will not serve (too few free blocks: a preemption; a contiguous range),
any other pending work, or a step past ``until``. ``tests/test_engine_fast.py`` checks it against
the general step on every engine and cluster preset.

It is part of the step loop: it reads the engine's ``Batch``, KV manager and cost model, and
writes what a decode step writes (the clock, the step index, the batch's ``s_dec`` and ``work``,
the calendars it pops, the statistics and ``recent``), finishing sequences through the engine.
"""

from __future__ import annotations


def can_run(eng) -> bool:
    """Only decoding is left to do and nobody watches individual steps."""
    b = eng.batch
    return bool(
        b.decode
        and not b.prefilling
        and not b.waiting
        and not b.swapped
        and not b.demote_cal
        and eng.step_listener is None
    )


def run_decodes(eng, until: float) -> None:
    """Run decode-only steps that start at or before ``until`` while ``can_run`` holds; return at
    the first step the general ``Engine._step`` must take."""
    b = eng.batch
    alloc = eng.alloc
    cost = eng.cost
    st = eng.stats
    decode = b.decode
    grow_cal = b.grow_cal
    fin_cal = b.finish_cal
    recent = eng.recent
    itl = st.itl_us
    decode_grow = alloc.decode_grow
    # CostModel.step_time with no prefill: a batch's fixed part (linear, communication, overhead)
    # plus its decode attention, the same two calls in the same order
    base_s = cost.base_s
    attn_s = cost.decode_attention_s
    cap = alloc.capacity
    s_other = b.s_other
    now, s, s_dec, work = eng.now, eng.step_idx, b.s_dec, b.work
    held, rsum, usum = alloc.held, alloc.reserved_sum, alloc.useful_sum
    # the memory terms that change only when blocks move (crossings, finishes): integers, exact
    shared, never, free, usage = rsum - held, rsum - usum, cap - held, held / cap  # usage(): held / cap
    busy, k_tot, k_state, k_res, k_int, k_ext = (
        st.busy_s,
        st.kv_total,
        st.kv_state,
        st.kv_reserved,
        st.kv_internal,
        st.kv_external,
    )
    steps = tokens = 0
    stop = False
    while decode and not stop:
        n_d = len(decode)
        base = base_s(n_d, n_d)
        s0 = s
        while now <= until:
            dur = base + attn_s(n_d, s_dec)  # CostModel.step_time(0, 0, 0, n_d, s_dec)
            if dur <= 0.0:  # the general step reports the stall
                stop = True
                break
            g = grow_cal.pop(s, None)
            if g is not None:  # crossings: the KV manager grows them all, or the general step does
                eng.now = now  # (a cache listener reads the clock)
                if not decode_grow(g, grow_cal, s):
                    grow_cal[s] = g
                    stop = True
                    break
                held, rsum, usum = alloc.held, alloc.reserved_sum, alloc.useful_sum
                shared, never, free, usage = rsum - held, rsum - usum, cap - held, held / cap
            fins = fin_cal.pop(s, None)
            # Engine._account, term by term
            busy += dur
            us = int(dur * 1e6 + 0.5)
            itl[us] = itl.get(us, 0) + n_d
            state = s_dec + s_other
            k_tot += dur * cap
            k_state += dur * (state - shared)
            k_res += dur * (usum - state)
            k_int += dur * never
            k_ext += dur * free
            now += dur
            s += 1
            s_dec += n_d
            work -= n_d
            if fins is not None:
                eng.now, eng.step_idx, b.s_dec, b.work = now, s, s_dec, work
                for epoch, seq in fins:
                    if epoch == seq.epoch:
                        eng._finish(seq)
                s_dec = b.s_dec
                held, rsum, usum = alloc.held, alloc.reserved_sum, alloc.useful_sum
                shared, never, free, usage = rsum - held, rsum - usum, cap - held, held / cap
            recent.append([now - dur, dur, 0, n_d, usage])
            if fins is not None:
                break  # the batch changed: new constants
        steps += s - s0
        tokens += (s - s0) * n_d
        if now > until:
            break
    eng.now, eng.step_idx, b.s_dec, b.work = now, s, s_dec, work
    st.busy_s, st.kv_total, st.kv_state, st.kv_reserved, st.kv_internal, st.kv_external = (
        busy,
        k_tot,
        k_state,
        k_res,
        k_int,
        k_ext,
    )
    st.steps += steps
    st.batch_sum += tokens
    st.tokens_sum += tokens
    st.decode_tokens += tokens
