"""Nodes, messages and faults on one event heap (see the package docstring for the API)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sims.core import dists
from sims.core.clock import Clock
from sims.core.panel import Checkpointed

_MSG = 0  # heap item (_MSG, src, dst, sent, msg), plus the trace's index while recording
_TIMER = 1  # heap item (_TIMER, node, name, token)
_HELD = 2  # heap item (_HELD, a _MSG item): it reached a paused node, which takes it at resume
_REQ = 3  # inside a _HELD item: (_REQ, node, request), a client's request that reached a paused node

_LINK_FIELDS = ("loss", "duplicate", "reorder")

DELAY_KINDS = ("fixed", "uniform", "exponential", "lognormal")


@dataclass(frozen=True, slots=True)
class Delay:
    """A one-way message delay in seconds: ``fixed`` (= mean), ``uniform`` on [lo, hi],
    ``exponential`` (``lo`` + an exponential of mean ``mean - lo``), ``lognormal`` (mean, sigma)."""

    kind: str = "uniform"
    mean: float = 0.0075
    lo: float = 0.005
    hi: float = 0.010
    sigma: float = 0.5

    def __post_init__(self) -> None:
        if self.kind not in DELAY_KINDS:
            raise ValueError(f"unknown delay kind {self.kind!r}; valid: {', '.join(DELAY_KINDS)}")

    def draw(self, rng: random.Random) -> float:
        k = self.kind
        if k == "uniform":
            return self.lo + (self.hi - self.lo) * rng.random()
        if k == "fixed":
            return self.mean
        if k == "exponential":
            return self.lo + dists.exponential(rng, 1.0 / max(self.mean - self.lo, 1e-9))
        return dists.lognormal_mean(rng, self.mean, self.sigma)


class Node(Checkpointed):
    """One server. Subclasses implement the ``on_*`` hooks; the network sets ``net``."""

    def __init__(self, node_id: int, n: int) -> None:
        self.id = node_id
        self.n = n
        self.up = True
        self.net: Network | None = None
        self.rng: random.Random | None = None
        self.timers: dict[str, int] = {}  # name -> token of the live timer

    paused = False  # stopped by a ``pause`` fault: up, but runs no handler until ``resume``

    # hooks ---------------------------------------------------------------------------------
    def on_start(self, now: float) -> None:
        """Boot (also after every restart)."""

    def on_message(self, src: int, msg: Any, now: float) -> None:
        """A message from ``src``."""

    def on_timer(self, name: str, now: float) -> None:
        """The timer ``name`` fired."""

    def on_request(self, req: Any, now: float) -> None:
        """A client's request (from outside the network: ``Network.request``)."""

    def on_crash(self, now: float) -> None:
        """The node stopped (it hears nothing until restarted)."""

    def on_restart(self, durable: bool, now: float) -> None:
        """Back up; ``durable=False``: its disk was lost too. Protocols reset their state here."""
        self.on_start(now)

    # Byzantine: a traitor's every message passes through ``forge`` on its way to each peer
    traitor = ""  # "" honest; "equivocate": set by the ``byzantine`` fault (or by a protocol)

    def forge(self, dst: int, msg: Any) -> Any:
        """What this traitor sends ``dst`` instead of ``msg`` (the protocol defines its lies:
        a different value to different peers, a vote it never cast). Default: the truth."""
        return msg

    # actions -------------------------------------------------------------------------------
    def send(self, dst: int, msg: Any, hold: float = 0.0) -> None:
        """``hold``: seconds the message waits before it leaves (a write to disk first)."""
        self.net.send(self.id, dst, msg, hold)

    def broadcast(self, msg: Any) -> None:
        for dst in range(self.n):
            if dst != self.id:
                self.net.send(self.id, dst, msg)

    def set_timer(self, delay: float, name: str) -> None:
        """(Re)arm timer ``name`` to fire after ``delay`` seconds of this node's clock."""
        self.net.set_timer(self, delay, name)

    def cancel_timer(self, name: str) -> None:
        self.timers.pop(name, None)

    def local_time(self, now: float) -> float:
        return self.net.local_time(self.id, now)


class Network(Checkpointed):
    """``n`` nodes, one clock; the stream's faults change who can reach whom (docstring above)."""

    def __init__(
        self,
        nodes: list[Node],
        rng: random.Random,
        delay: Delay | None = None,
        loss: float = 0.0,
        duplicate: float = 0.0,
        reorder: float = 0.0,
        node_rngs: list[random.Random] | None = None,
    ) -> None:
        self.nodes = nodes
        self.n = len(nodes)
        self.rng = rng
        self.delay = delay or Delay()
        self.loss = loss
        self.duplicate = duplicate
        self.reorder = reorder
        self.clock = Clock()
        self.group = [0] * self.n  # partition group of each node
        self.extra = [0.0] * self.n  # slow node: added to each message to or from it
        self.rate = [1.0] * self.n  # clock drift: local seconds per real second
        self.skew_at = [0.0] * self.n  # drift: (real time, local time) when the rate last changed
        self.skew_local = [0.0] * self.n
        self.partitioned = False
        self.blocked: set[tuple[int, int]] = set()  # one-way blocks: (src, dst) messages dropped
        self.held: dict[int, list[tuple]] = {}  # paused node -> what came due for it, in order
        self.links: dict[tuple[int, int], dict[str, float]] = {}  # (src, dst) -> its own loss, duplicate, reorder
        self.windows: list[tuple[float, tuple | None, dict]] = []  # (until, link or None: all, the fields it restores)
        self._token = 0
        self.sent = self.delivered = self.dropped = self.duplicated = 0
        self.trace = None  # a sims.net.trace.Trace while a run is recorded for a diagram
        for i, node in enumerate(nodes):
            node.net = self
            # an int seed: a float seed goes through the float's 32-bit hash in Pyodide (wasm32), a different stream
            node.rng = node_rngs[i] if node_rngs else random.Random(rng.randrange(1 << 62))

    # time ----------------------------------------------------------------------------------
    @property
    def now(self) -> float:
        return self.clock.now

    def local_time(self, i: int, now: float) -> float:
        return self.skew_local[i] + (now - self.skew_at[i]) * self.rate[i]

    def start(self, now: float = 0.0) -> None:
        self.clock.now = now
        for node in self.nodes:
            node.on_start(now)

    def next_time(self) -> float | None:
        return self.clock.peek()

    def advance(self, until: float, after: Callable[[float], None] | None = None) -> int:
        """Deliver messages and fire timers up to ``until``, in (time, seq) order."""
        heap = self.clock.heap
        n = 0
        while heap and heap[0][0] <= until:
            t, item = self.clock.pop()
            if self._handle(t, item) and after is not None:
                after(t)
            n += 1
        if until > self.clock.now:
            self.clock.now = until
        return n

    def _handle(self, t: float, item: tuple) -> bool:
        kind = item[0]
        if kind == _TIMER:
            _, i, name, token = item
            node = self.nodes[i]
            if not node.up or node.timers.get(name) != token:
                return False
            if self.held and i in self.held:  # paused: it fires at resume
                self.held[i].append(item)
                return False
            del node.timers[name]
            node.on_timer(name, t)
            return True
        if kind == _HELD:  # checked when it arrived; a crash since then drops it
            if item[1][0] == _REQ:
                return self._request(item, t)
            src, dst, msg = item[1][1], item[1][2], item[1][4]
            node = self.nodes[dst]
            if not node.up:
                return self._drop(item[1], t, "crash")
            if dst in self.held:  # paused again before it was taken
                self.held[dst].append(item)
                return False
            item = item[1]
        else:
            src, dst, msg = item[1], item[2], item[4]
            node = self.nodes[dst]
            if not node.up or self.group[src] != self.group[dst]:
                return self._drop(item, t, "crash" if not node.up else "partition")
            if self.blocked or self.held:
                if (src, dst) in self.blocked:
                    return self._drop(item, t, "partition")
                if dst in self.held:  # arrived; it waits for the node to resume
                    self.held[dst].append((_HELD, item))
                    return False
        self.delivered += 1
        if self.trace is not None:
            self.trace.arrived(item[5], t, "delivered")
        node.on_message(src, msg, t)
        return True

    def request(self, i: int, req: Any, now: float) -> None:
        """A client's request reaches node ``i`` (from outside the network: not a message, not
        counted): taken at once, or, while the node is paused, at its resume in the order it
        came, among its messages and timers. A down node never hears it."""
        if not self.nodes[i].up:
            return
        if self.held and i in self.held:
            self.held[i].append((_HELD, (_REQ, i, req)))
            return
        self.nodes[i].on_request(req, now)

    def _request(self, item: tuple, t: float) -> bool:
        i, req = item[1][1], item[1][2]
        if not self.nodes[i].up:
            return False
        if i in self.held:  # paused again before it was taken
            self.held[i].append(item)
            return False
        self.nodes[i].on_request(req, t)
        return True

    def _drop(self, item: tuple, t: float, fate: str) -> bool:
        self.dropped += 1
        if self.trace is not None:
            self.trace.arrived(item[5], t, fate)
        return False

    # messages and timers -------------------------------------------------------------------
    def send(self, src: int, dst: int, msg: Any, hold: float = 0.0) -> None:
        rng = self.rng
        self.sent += 1
        if self.nodes[src].traitor:
            msg = self.nodes[src].forge(dst, msg)
        loss, duplicate, reorder = self.loss, self.duplicate, self.reorder
        if self.links or self.windows:  # one link's own settings, or a window that may have ended
            if self.windows and self.clock.now >= self.windows[0][0]:
                self._end_windows(self.clock.now)
            loss, duplicate, reorder = self.loss, self.duplicate, self.reorder
            own = self.links.get((src, dst))
            if own is not None:
                loss = own.get("loss", loss)
                duplicate = own.get("duplicate", duplicate)
                reorder = own.get("reorder", reorder)
        if loss > 0.0 and rng.random() < loss:
            self.dropped += 1
            if self.trace is not None:
                self.trace.arrived(self.trace.sent(self.clock.now, src, dst, msg), self.clock.now, "loss")
            return
        copies = 2 if duplicate > 0.0 and rng.random() < duplicate else 1
        self.duplicated += copies - 1
        now = self.clock.now
        for _ in range(copies):
            d = self.delay.draw(rng) + self.extra[src] + self.extra[dst]
            if reorder > 0.0 and rng.random() < reorder:
                d += self.delay.draw(rng)
            if hold > 0.0:
                d += hold
            if self.trace is None:
                self.clock.schedule(now + d, (_MSG, src, dst, now, msg))
            else:  # the record's index rides with the message
                self.clock.schedule(now + d, (_MSG, src, dst, now, msg, self.trace.sent(now, src, dst, msg)))

    def set_timer(self, node: Node, delay: float, name: str) -> None:
        self._token += 1
        node.timers[name] = self._token
        real = delay / self.rate[node.id]
        self.clock.schedule(self.clock.now + real, (_TIMER, node.id, name, self._token))

    # faults --------------------------------------------------------------------------------
    def can_reach(self, a: int, b: int) -> bool:
        return self.nodes[b].up and self.group[a] == self.group[b] and (a, b) not in self.blocked

    def apply(self, fault: dict, now: float) -> None:
        """Apply one fault event (see the package docstring); unknown kinds raise ValueError."""
        kind = fault["fault"]
        if self.trace is not None:
            self.trace.fault(now, fault)
        if kind == "partition":
            group = [len(fault["groups"])] * self.n
            for g, members in enumerate(fault["groups"]):
                for i in members:
                    group[int(i)] = g
            self.group = group
            self.partitioned = len(set(group)) > 1
        elif kind == "heal":
            self.group = [0] * self.n
            self.partitioned = False
            self.blocked = set()
        elif kind == "oneway":
            self.blocked.add((int(fault["from"]), int(fault["to"])))
        elif kind == "crash":
            i = int(fault["node"])
            node = self.nodes[i]
            if node.up:
                node.up = False
                node.timers = {}
                for item in self.held.pop(i, ()):
                    if item[0] == _HELD and item[1][0] != _REQ:  # a client's request just goes unanswered
                        self._drop(item[1], now, "crash")
                node.paused = False
                node.on_crash(now)
        elif kind == "pause":
            i = int(fault["node"])
            if self.nodes[i].up and i not in self.held:
                self.held[i] = []
                self.nodes[i].paused = True
        elif kind == "resume":
            i = int(fault["node"])
            if i in self.held:
                self.nodes[i].paused = False
                for item in self.held.pop(i):  # in the order they came due, before anything later
                    self.clock.schedule(now, item)
        elif kind == "restart":
            node = self.nodes[int(fault["node"])]
            if not node.up:
                node.up = True
                node.on_restart(bool(fault.get("durable", True)), now)
        elif kind == "slow":
            self.extra[int(fault["node"])] = float(fault.get("extra", 0.0))
        elif kind == "drift":
            i = int(fault["node"])
            self.skew_local[i] = self.local_time(i, now)
            self.skew_at[i] = now
            self.rate[i] = float(fault.get("rate", 1.0))
        elif kind == "byzantine":
            self.nodes[int(fault["node"])].traitor = str(fault.get("mode", "equivocate"))
        elif kind == "link":
            self._link(fault, now)
        else:
            raise ValueError(
                f"unknown fault {kind!r}; valid: partition, heal, oneway, crash, restart, pause, resume, slow, drift, link, byzantine"
            )

    def _link(self, fault: dict, now: float) -> None:
        """Loss, duplication and reordering: of the whole network, or (``from``, ``to``) of one
        direction of one link; until ``until``, when each field it set gets back the value it
        had just before (a link's own field that had none follows the network again)."""
        self._end_windows(now)
        key = (int(fault["from"]), int(fault["to"])) if "from" in fault else None
        own = self.links.setdefault(key, {}) if key is not None else None
        saved = {}
        for name in _LINK_FIELDS:
            if name in fault:
                saved[name] = getattr(self, name) if own is None else own.get(name)
                if own is None:
                    setattr(self, name, float(fault[name]))
                else:
                    own[name] = float(fault[name])
        if own is not None and not own:
            del self.links[key]
        if fault.get("until") is not None and saved:
            self.windows.append((float(fault["until"]), key, saved))
            self.windows.sort(key=lambda w: w[0])

    def _end_windows(self, now: float) -> None:
        """Close the windows whose end has come, earliest first."""
        while self.windows and self.windows[0][0] <= now:
            _, key, saved = self.windows.pop(0)
            own = None if key is None else self.links.setdefault(key, {})
            for name, old in saved.items():
                if own is None:
                    setattr(self, name, old)
                elif old is None:
                    own.pop(name, None)
                else:
                    own[name] = old
            if own is not None and not own:
                del self.links[key]

    # views ---------------------------------------------------------------------------------
    def in_flight(self, now: float) -> list[tuple[int, int, float, float, Any]]:
        """Messages still on the wire at ``now`` (src, dst, sent, arrives, msg), by arrival."""
        out = [(e[2][1], e[2][2], e[2][3], e[0], e[2][4]) for e in self.clock.heap if e[2][0] == _MSG]
        out.sort(key=lambda m: (m[3], m[0], m[1], m[2]))
        return out
