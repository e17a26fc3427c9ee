"""The token-per-minute policies over ``TpmPanel``'s mechanism (``tpm.py``): what each counts,
and when. ``tpm_reserve`` and ``tpm_estimate`` charge at admission against an exact sliding
window, ``tpm_post_debit`` debits actual tokens after the response, ``tpm_shared`` splits one
budget across gateways that sync periodically."""

from __future__ import annotations

from sims.core.limits import MAX_DURATION
from sims.core.registry import Param, register_policy
from sims.ratelimit.exact import ticks
from sims.ratelimit.tpm import _SYNC, COMMON, TpmPanel
from sims.ratelimit.tpm_window import TokenLog


class _LocalWindow(TpmPanel):
    """One gateway with an exact sliding-window counter of charged tokens."""

    def __init__(self, name: str, params: dict, ctx) -> None:
        super().__init__(name, params, ctx)
        self.counter = TokenLog(self.window)

    def _charge(self, ev: dict) -> int:
        raise NotImplementedError

    def _cost_and_held(self, d) -> tuple[int, int]:
        """This decision's charge and what the window held before it (for explain)."""
        cost = self._charge(d.facts["ev"])
        return cost, d.facts["counter"] - (cost if d.action == "admit" else 0)

    def _admit(self, t: float, ev: dict) -> object | None:
        tn = self.now  # ticks(t), converted once per attempt
        edge = tn - self._window_ticks
        rpm = self.rpm
        if rpm:
            times = self.reqlog.times
            while times and times[0] <= edge:
                times.popleft()
            if len(times) >= rpm:
                self._why = "rpm"
                return None
        cost = self._charge(ev)
        tpm = self.tpm
        if cost > tpm:
            self._why = "never"
            return None
        c = self.counter
        log = c.log
        while log and log[0][0] <= edge:  # c.expire(t)
            e = log.popleft()
            c.total -= e[1]
            e[2] = False
        if c.total + cost > tpm:
            self._why = "tpm"
            return None
        if rpm:
            times.append(tn)
        self.tokens_charged += cost
        e = [tn, cost, True]
        log.append(e)
        total = c.total = c.total + cost
        if total > self.peak_counter:
            self.peak_counter = total
        return e

    def _retry_after(self, t: float, ev: dict) -> float | None:
        wait = self.reqlog.wait(t, self.rpm) if self.rpm else 0.0
        tok = self.counter.wait(t, self.tpm - self._charge(ev))
        return None if tok is None else max(wait, tok)

    def _counter(self) -> int:
        return self.counter.total

    def check_invariants(self) -> None:
        super().check_invariants()
        self.counter.check_invariants()
        assert self.counter.total <= self.tpm, "admitted above the token limit"
        if self.rpm and not self.params["count_rejected"]:
            assert len(self.reqlog.times) <= self.rpm, "admitted above the request limit"


@register_policy("ratelimit", "tpm_reserve")
class TpmReserve(_LocalWindow):
    """Reserve prompt + max_tokens, settle to actual at completion (Anthropic, Azure)."""

    def _charge(self, ev: dict) -> int:
        return ev["prompt_len"] + ev["max_tokens"]

    def _complete(self, t: float, handle: list, actual: int) -> None:
        self.tokens_charged += actual - handle[1]
        if handle[2]:  # self.counter.settle(handle, actual)
            self.counter.total += actual - handle[1]
        handle[1] = actual

    def explain(self, d, other=None) -> str:
        cost, held = self._cost_and_held(d)
        return self._say(
            d, f"reserving prompt + max_tokens ({cost}) on top of the {held} tokens reserved in the window"
        )


@register_policy("ratelimit", "tpm_estimate")
class TpmEstimate(_LocalWindow):
    """Charge max(max_tokens, prompt characters / 4) and keep it (OpenAI's documented rule)."""

    def _charge(self, ev: dict) -> int:
        return max(ev["max_tokens"], (ev["prompt_chars"] + 3) // 4)

    def explain(self, d, other=None) -> str:
        cost, held = self._cost_and_held(d)
        return self._say(
            d, f"charging max(max_tokens, prompt characters / 4) = {cost} on top of the {held} charged in the window"
        )


@register_policy("ratelimit", "tpm_post_debit")
class TpmPostDebit(TpmPanel):
    """Admit while the counter is below the limit; debit actual tokens after the response
    (LiteLLM, Envoy). Nothing is charged up front, so the counter lags by a response time."""

    def __init__(self, name: str, params: dict, ctx) -> None:
        super().__init__(name, params, ctx)
        self.counter = TokenLog(self.window)  # debits at completion time

    def _admit(self, t: float, ev: dict) -> object | None:
        rpm = self.rpm
        if rpm:
            reqs = self.reqlog
            reqs.expire(t)
            if len(reqs.times) >= rpm:
                self._why = "rpm"
                return None
        c = self.counter
        log = c.log
        tn = self.now  # ticks(t), converted once per attempt
        edge = tn - self._window_ticks
        while log and log[0][0] <= edge:  # c.expire(t)
            e = log.popleft()
            c.total -= e[1]
            e[2] = False
        if c.total >= self.tpm:
            self._why = "tpm"
            return None
        if rpm:
            reqs.times.append(tn)
        return True

    def _complete(self, t: float, handle: object, actual: int) -> None:
        c = self.counter
        log = c.log
        tn = ticks(t)
        edge = tn - self._window_ticks
        while log and log[0][0] <= edge:  # c.expire(t)
            e = log.popleft()
            c.total -= e[1]
            e[2] = False
        log.append([tn, actual, True])  # c.add(t, actual)
        total = c.total = c.total + actual
        self.tokens_charged += actual
        if total > self.peak_counter:
            self.peak_counter = total

    def explain(self, d, other=None) -> str:
        return self._say(
            d, f"nothing charged up front: the counter of actual tokens debited after responses ({d.facts['counter']})"
        )

    def _retry_after(self, t: float, ev: dict) -> float | None:
        wait = self.reqlog.wait(t, self.rpm) if self.rpm else 0.0
        tok = self.counter.wait(t, self.tpm - 1)
        return max(wait, tok if tok is not None else 0.0)

    def _counter(self) -> int:
        return self.counter.total

    def check_invariants(self) -> None:
        super().check_invariants()
        self.counter.check_invariants()


@register_policy("ratelimit", "tpm_shared")
class TpmShared(TpmPanel):
    """``workers`` gateways share one budget (reserve + settle, as ``tpm_reserve``). Each admits
    against the global counter as of its last sync plus its own charges since; all sync every
    ``sync`` seconds (0 = always exact). Requests reach the gateways round robin."""

    PARAMS = COMMON | {
        "workers": Param(int, 4, "gateways sharing the budget", min=1, max=1000, work=1),
        "sync": Param(
            float, 1.0, "seconds between syncs with the global counter; 0 = exact", min=0.0, max=MAX_DURATION, work=-1
        ),
    }

    def __init__(self, name: str, params: dict, ctx) -> None:
        super().__init__(name, params, ctx)
        n, s = params["workers"], params["sync"]
        if n < 1 or s < 0:
            raise ValueError(f"tpm_shared needs workers >= 1 and sync >= 0, got {n!r}, {s!r}")
        self.n, self.sync = n, s
        self.counter = TokenLog(self.window)  # the truth: every gateway's charges
        self.seen_tokens = [0] * n  # global counter at the last sync
        self.seen_reqs = [0] * n
        self.local_tokens = [0] * n  # own charges since the last sync
        self.local_reqs = [0] * n
        self.next_worker = 0
        self.next_sync = s
        if s > 0:
            self._push(s, _SYNC, None, None, None)

    def _sync(self, t: float) -> None:
        c = self.counter
        c.expire(t)
        self.reqlog.expire(t)
        n = self.n
        self.seen_tokens = [c.total] * n
        self.seen_reqs = [len(self.reqlog.times)] * n
        self.local_tokens = [0] * n
        self.local_reqs = [0] * n
        self.next_sync = t + self.sync
        self._push(self.next_sync, _SYNC, None, None, None)

    def _admit(self, t: float, ev: dict) -> object | None:
        w = self.next_worker
        self.next_worker = w + 1 if w + 1 < self.n else 0
        c = self.counter
        log = c.log
        tn = self.now  # ticks(t), converted once per attempt
        edge = tn - self._window_ticks
        while log and log[0][0] <= edge:  # c.expire(t): the truth's window, for peak_counter
            e = log.popleft()
            c.total -= e[1]
            e[2] = False
        rpm = self.rpm
        if rpm:
            self.reqlog.expire(t)
        if self.sync == 0:
            tokens, reqs = c.total, len(self.reqlog.times)
        else:
            tokens = self.seen_tokens[w] + self.local_tokens[w]
            reqs = self.seen_reqs[w] + self.local_reqs[w]
        cost = ev["prompt_len"] + ev["max_tokens"]
        tpm = self.tpm
        if rpm and reqs >= rpm:
            self._why = "rpm"
            return None
        if cost > tpm:
            self._why = "never"
            return None
        if tokens + cost > tpm:
            self._why = "tpm"
            return None
        self.local_tokens[w] += cost
        self.local_reqs[w] += 1
        if rpm:
            self.reqlog.times.append(tn)
        self.tokens_charged += cost
        e = [tn, cost, True]  # c.add(t, cost)
        log.append(e)
        total = c.total = c.total + cost
        if total > self.peak_counter:
            self.peak_counter = total
        return e

    def _complete(self, t: float, handle: list, actual: int) -> None:
        self.tokens_charged += actual - handle[1]
        if handle[2]:  # self.counter.settle(handle, actual)
            self.counter.total += actual - handle[1]
        handle[1] = actual

    def explain(self, d, other=None) -> str:
        ev = d.facts["ev"]
        view = (
            "the exact shared counter"
            if self.sync == 0
            else f"its gateway's view (the global counter at its last sync, {self.sync:g} s apart, plus its own charges)"
        )
        return self._say(d, f"reserving {ev['prompt_len'] + ev['max_tokens']} against {view}")

    def _retry_after(self, t: float, ev: dict) -> float | None:
        if self.sync == 0:
            room = self.tpm - ev["prompt_len"] - ev["max_tokens"]
            return self.counter.wait(t, room)
        return self.next_sync - t  # the gateway learns of freed room at its next sync

    def _counter(self) -> int:
        return self.counter.total

    def check_invariants(self) -> None:
        super().check_invariants()
        self.counter.check_invariants()
        if self.sync == 0:
            assert self.counter.total <= self.tpm, "exact sharing admitted above the limit"
