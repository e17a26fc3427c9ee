"""A request's life after its prefill: the first token, parallel samples (fork), completion and
its ``Record``, and the disaggregated handoff.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left

from sims.engine.metrics import Record
from sims.engine.seq import DONE, Seq
from sims.engine.steps import Handoff


class Lifecycle:
    """Prefill done, fork, finish, complete and hand off (a mixin of ``Engine``)."""

    def _prefill_done(self, seq: Seq) -> None:
        """The prefill (or recompute) finished at the end of this step: one token out."""
        rk = self._running
        self._prefilling.remove(seq)
        self._s_other -= seq.computed
        seq.generated += 1
        self._work -= 1
        self.stats.prefills_done += 1
        if seq.first_token < 0:
            seq.first_token = self.now
        if self.caching:
            self.alloc.register(seq, seq.computed)
        if seq.generated >= seq.output_len:  # a one-token answer (or a recompute that ends here)
            if seq.samples > 1:
                self._fork(seq)
            del rk[bisect_left(rk, (seq.vkey, seq.order))]
            self._complete(seq)
        elif self.config.role == "prefill":
            del rk[bisect_left(rk, (seq.vkey, seq.order))]
            self._handoff(seq)
        else:
            if seq.samples > 1:
                self._fork(seq)
            self._enter_decode(seq, self.step_idx)

    def _fork(self, seq: Seq) -> None:
        """Parallel sampling: n - 1 more samples share the prompt's full blocks (refcounts); the
        block holding each sample's own first token is copied on write. A sample that finds no
        memory for its copy waits to be recomputed (its prompt is then a prefix-cache hit)."""
        n, seq.samples = seq.samples, 1
        seq.group = [n, n, max(0, seq.cached_tokens), 0]  # samples left, n, cached tokens, preemptions
        alloc = self.alloc
        for k in range(1, n):
            self._orders += 1
            child = Seq(
                rid=seq.rid,
                arrival=seq.arrival,
                prompt_len=seq.prompt_len,
                output_len=seq.output_len,
                segments=seq.segments,
                out_cid=f"{seq.out_cid}.s{k}",
                order=self._orders,
                tenant=seq.tenant,
                priority=seq.priority,
                session=seq.session,
                turn=seq.turn,
            )
            child.final_len = seq.final_len
            child.generated = 1
            child.first_token = seq.first_token
            child.cached_tokens = 0
            child.group = seq.group
            child.level, child.level_end = seq.level, seq.level_end
            child.key = self.sched.key(child)
            child.target = child.computed = seq.computed
            self.stats.prefills_done += 1
            self._work -= 1
            if child.generated >= child.output_len:  # a one-token answer: nothing to decode
                self._complete(child)
                continue
            copied = alloc.fork(seq, child)
            ok = copied is not None
            if ok:
                self.stats.cow_copies += copied
            if ok:
                self._add_running(child)
                self._enter_decode(child, self.step_idx)
            else:
                child.target, child.computed = child.prompt_len + 1, 0
                self._work += child.target
                heapq.heappush(self._waiting, (child.key, child.order, child))

    def _finish(self, seq: Seq) -> None:
        self._drop_running(seq)
        self._complete(seq)

    def _complete(self, seq: Seq) -> None:
        seq.generated = seq.output_len
        # output blocks are worth caching only if a later prompt can contain them (chat turns)
        keep = seq.final_len - 1 if seq.session >= 0 else seq.prompt_len
        self.alloc.release(seq, keep, float(keep))
        seq.state = DONE
        g = seq.group
        if g is not None:  # a request with parallel samples completes with its last sample
            g[0] -= 1
            g[3] += seq.preemptions
            if g[0] == 0:
                self.records.append(
                    Record(
                        seq.rid,
                        seq.arrival,
                        seq.first_token,
                        self.now,
                        seq.prompt_len,
                        seq.output_len * g[1],
                        g[2],
                        g[3],
                        seq.tenant,
                        g[1],
                    )
                )
            return
        self.records.append(
            Record(
                seq.rid,
                seq.arrival,
                seq.first_token,
                self.now,
                seq.prompt_len,
                seq.output_len,
                max(0, seq.cached_tokens),
                seq.preemptions,
                seq.tenant,
            )
        )

    def _handoff(self, seq: Seq) -> None:
        tokens = seq.prompt_len
        self.alloc.release(seq, tokens, float(tokens))
        seq.state = DONE
        self._work -= seq.samples * seq.output_len - seq.generated
        req = {
            "id": seq.rid,
            "prompt_len": seq.prompt_len,
            "output_len": seq.output_len,
            "n": seq.samples,
            "max_tokens": seq.output_len,
            "tenant": seq.tenant,
            "segments": seq.segments,
            "prefilled": {
                "arrival": seq.arrival,
                "first_token": seq.first_token,
                "cached_tokens": max(0, seq.cached_tokens),
                "preemptions": seq.preemptions,
            },
        }
        if seq.session >= 0:
            req["session"], req["turn"] = seq.session, seq.turn
        h = Handoff(self.now, tokens, req)
        self.handoffs.append(h)
        if self.handoff_listener is not None:
            self.handoff_listener(h)
