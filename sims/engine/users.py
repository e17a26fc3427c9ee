"""The closed loop: turns of the ``users`` workload (sims/workloads/users.py), sent when due.

A panel that meets a ``users`` event makes a ``Users``; each ``user`` event then joins one user,
whose first turn is due at once. ``run(until, arrive, engines)`` moves the panel to ``until``:
it advances the engines in slices no longer than the shortest wait (``think_min``), reads the
requests they completed in that slice, and schedules each one's next turn at its finish plus a
wait. A wait is never shorter than a slice, so a turn is always scheduled before the engines
pass its time, and ``arrive(request, t)`` (the panel's own submit: one engine, or the router)
sends it at exactly ``t``: the loop is exact, not sampled.

A user's turns are drawn from its own seed and turn number (``_draw``), never from a shared
generator, so every panel sends the same turns with the same lengths; only when differs.
A request's id is ``user + users × k`` for its user's k-th turn (the same on every panel).
"""

from __future__ import annotations

from heapq import heappop, heappush
from random import Random

from sims.core import portmath
from sims.core.dists import lognormal_mean
from sims.core.panel import Checkpointed


class _User(Checkpointed):
    __slots__ = ("id", "seed", "k", "session", "sessions", "turn", "context", "tool", "busy")

    def __init__(self, uid: int, seed: int) -> None:
        self.id, self.seed = uid, seed
        self.k = 0  # turns sent
        self.sessions = 0
        self.session = -1
        self.turn = 0
        self.context: tuple = ()  # the session's segments so far: ((content id, tokens), ...)
        self.tool = False  # the last answer was a tool call: the next input is its result
        self.busy = False  # a turn in flight


class Users(Checkpointed):
    """Every user of one panel, and the turns due (a heap of ``(t, user id)``)."""

    def __init__(self, spec: dict) -> None:
        self.spec = {k: v for k, v in spec.items() if k not in ("t", "kind")}
        self.n = int(self.spec["users"])
        self.gap = float(self.spec["think_min"])
        self.users: dict[int, _User] = {}
        self.due: list[tuple[float, int]] = []
        self.asked: dict[int, int] = {}  # request id -> user, while in flight
        self.cursor = 0.0  # the engines have been advanced to here
        self.read: list[list[int]] = []  # per engine: records and rejections already read
        self.turns = 0
        self.closed = False  # drain: no new turns

    def join(self, ev: dict) -> None:
        uid = int(ev["id"])
        if not 0 <= uid < self.n or uid in self.users:
            raise ValueError(f"user {ev['id']!r} at t={ev['t']:g}: expected a new id in 0..{self.n - 1}")
        self.users[uid] = _User(uid, int(ev["seed"]))
        heappush(self.due, (float(ev["t"]), uid))

    def next_time(self) -> float | None:
        return self.due[0][0] if self.due and not self.closed else None

    def run(self, until: float, arrive, advance, engines: list) -> None:
        """Send every turn due by ``until`` through ``arrive(request, t)``, moving the panel
        with ``advance(t)`` in slices of at most ``think_min``; ``engines`` (each with
        ``records`` and ``rejected``) say which turns were answered."""
        while True:
            self._read(engines)
            end = min(until, self.cursor + self.gap)
            if self.due and not self.closed and self.due[0][0] <= end:
                t, uid = heappop(self.due)
                self.cursor = max(self.cursor, t)
                req = self._next(self.users[uid])
                req["t"], req["kind"] = t, "request"
                arrive(req, t)
                continue
            advance(end)
            self.cursor = end
            if end >= until:
                self._read(engines)
                return

    # -- one user's turns ---------------------------------------------------------------------
    def _draw(self, user: _User, purpose: int) -> Random:
        """The generator of ``user``'s turn k for one purpose (0: the turn, 1: the wait after it)."""
        return Random((user.seed * 1_000_003 + user.k) * 2 + purpose)

    def _length(self, rng: Random, mean: float) -> int:
        sigma = self.spec["sigma"]
        n = int(mean) if sigma <= 0 else int(lognormal_mean(rng, mean, sigma) + 0.5)
        return max(1, min(n, self.spec["max_len"] - 1))

    def _next(self, user: _User) -> dict:
        """The user's next request (its turn ``k``), its context grown by the last answer."""
        s, rng = self.spec, self._draw(user, 0)
        if user.session < 0 or (not user.tool and rng.random() * s["turns"] < 1.0):
            self._new_session(user)
        if user.turn == 0:
            kind, tokens = "u", self._length(rng, s["first_mean"])
        elif user.tool:  # the tool's result comes back
            kind, tokens = "r", self._length(rng, s["tool_result_mean"])
        else:
            kind, tokens = "u", self._length(rng, s["turn_mean"])
        segments = (*user.context, (f"{kind}{user.session}.{user.turn}", tokens))
        prompt = sum(x[1] for x in segments)
        if prompt >= s["max_len"] and user.turn > 0:  # the context is full: a new conversation
            self._new_session(user)
            segments = (*user.context, (f"u{user.session}.0", self._length(rng, s["first_mean"])))
            prompt = sum(x[1] for x in segments)
        tool = s["tool_frac"] > 0 and rng.random() < s["tool_frac"]
        output = self._length(rng, s["tool_output_mean"] if tool else s["output_mean"])
        room = s["max_len"] - prompt
        req = {
            "id": user.id + self.n * user.k,
            "prompt_len": prompt,
            "output_len": max(1, min(output, room)),
            "segments": segments,
            "session": user.session,
            "turn": user.turn,
            "tenant": user.id % s["system_prompts"] if s["system_prompts"] else 0,
        }
        user.context = segments
        user.tool = tool
        user.busy = True
        user.k += 1
        self.asked[req["id"]] = user.id
        self.turns += 1
        return req

    def _new_session(self, user: _User) -> None:
        s = self.spec
        user.session = user.id + self.n * user.sessions  # unique: the engine names answers by it
        user.sessions += 1
        user.turn = 0
        user.tool = False
        system = ()
        if s["system_prompts"] and s["system_len"]:
            system = ((f"sys{user.id % s['system_prompts']}", s["system_len"]),)
        user.context = system

    def _answered(self, rid: int, finish: float, output: int) -> None:
        uid = self.asked.pop(rid, None)
        if uid is None:
            return  # not a user's turn (a burst)
        user = self.users[uid]
        user.busy = False
        if output:  # the answer joins the context: the engine caches it as a{session}.{turn}
            user.context = (*user.context, (f"a{user.session}.{user.turn}", output))
            user.turn += 1
        else:  # refused (too long for the engine): start over
            user.session = -1
        s, rng = self.spec, self._draw(user, 1)  # k was counted when it was sent: the turn just answered is k - 1
        mean = s["tool_latency"] if user.tool else s["think"]
        floor = self.gap
        wait = floor + (-portmath.log(1.0 - rng.random()) * (mean - floor) if mean > floor else 0.0)
        heappush(self.due, (finish + wait, uid))

    def _read(self, engines: list) -> None:
        read = self.read
        while len(read) < len(engines):
            read.append([0, 0])
        for i, e in enumerate(engines):
            at = read[i]
            recs, rejected = e.records, e.rejected
            for k in range(at[0], len(recs)):
                r = recs[k]
                self._answered(r.rid, r.finish, r.output_len)
            for k in range(at[1], len(rejected)):
                self._answered(rejected[k], self.cursor, 0)
            at[0], at[1] = len(recs), len(rejected)

    def check_invariants(self) -> None:
        busy = sum(1 for u in self.users.values() if u.busy)
        assert busy == len(self.asked), f"{busy} users wait for an answer, {len(self.asked)} requests asked"
        assert busy + len(self.due) == len(self.users), "a user is neither waiting nor due"
