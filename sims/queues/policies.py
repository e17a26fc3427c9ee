"""Queue disciplines: each decides which waiting request a free server takes next, and whether
an arriving one is let in.

A discipline owns only the waiting line (``push``/``pop``/``__len__``); the panel owns the
servers, the clock and the accounting. ``pop(t)`` returns the next job to serve or None; a
discipline that sheds load at dequeue (CoDel) appends each victim to ``self.shed``, which the
panel empties after every pop. ``push`` returns False to refuse a job (drop-tail). A ``preemptive`` discipline
also ranks jobs in service: ``rank(job)`` is compared with the job in service that ranks worst.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush, nsmallest
from itertools import islice
from math import sqrt

from sims.core.limits import MAX_DURATION
from sims.core.panel import Checkpointed
from sims.core.registry import Param, register_policy


class Discipline(Checkpointed):
    PARAMS: dict[str, Param] = {}
    preemptive = False
    # The panel's inlined loop may bypass push/pop for a deque ``q``: ``append_only`` means push
    # is q.append and never refuses; ``pop_end`` is "left" (q.popleft) or "right" (q.pop) when
    # pop is only that and never sheds.
    append_only = False
    pop_end = ""

    def __init__(self, **params: object) -> None:
        self.shed: list = []  # jobs dropped by the last pop, oldest first; the panel drains it

    def push(self, job, t: float) -> bool:
        raise NotImplementedError

    def pop(self, t: float):
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def waiting(self) -> list:
        """The waiting jobs, next to be served first (for censored ages)."""
        raise NotImplementedError

    def head(self, k: int) -> list:
        """The first ``k`` of ``waiting()`` (for views: cheap on a long line)."""
        return self.waiting()[:k]

    def state(self) -> dict:
        return {}


@register_policy("queues", "fifo")
class Fifo(Discipline):
    """First come, first served: the oldest waiting job is at the left of the deque."""

    append_only = True
    pop_end = "left"

    def __init__(self, **params: object) -> None:
        super().__init__()
        self.q: deque = deque()

    def push(self, job, t: float) -> bool:
        self.q.append(job)
        return True

    def pop(self, t: float):
        return self.q.popleft() if self.q else None

    def __len__(self) -> int:
        return len(self.q)

    def waiting(self) -> list:
        return list(self.q)

    def head(self, k: int) -> list:
        return list(islice(self.q, k))


@register_policy("queues", "lifo")
class Lifo(Fifo):
    """Last come, first served: the newest waiting job is served first."""

    pop_end = "right"

    def __init__(self, **params: object) -> None:
        super().__init__()

    def pop(self, t: float):
        return self.q.pop() if self.q else None

    def waiting(self) -> list:
        return list(reversed(self.q))

    def head(self, k: int) -> list:
        return list(islice(reversed(self.q), k))


@register_policy("queues", "adaptive_lifo")
class AdaptiveLifo(Fifo):
    """FIFO while the queue is short-lived; LIFO once the oldest waiting job has waited longer
    than ``lifo_after`` (Facebook's adaptive LIFO, Maurer, "Fail at Scale", 2015): under
    overload the newest requests, whose clients are still waiting, are served first."""

    PARAMS = {
        "lifo_after": Param(
            float, 0.05, "switch to LIFO when the oldest job has waited this long, s", min=0.0, max=MAX_DURATION
        )
    }
    pop_end = ""  # the mode is decided at each pop

    def __init__(self, lifo_after: float = 0.05, **params: object) -> None:
        super().__init__()
        if not lifo_after >= 0:
            raise ValueError(f"adaptive_lifo needs lifo_after >= 0, got {lifo_after!r}")
        self.lifo_after = lifo_after
        self.lifo = False

    def pop(self, t: float):
        q = self.q
        if not q:
            self.lifo = False
            return None
        self.lifo = t - q[0].arrival > self.lifo_after
        return q.pop() if self.lifo else q.popleft()

    def waiting(self) -> list:
        return list(reversed(self.q)) if self.lifo else list(self.q)

    def head(self, k: int) -> list:
        return list(islice(reversed(self.q) if self.lifo else self.q, k))

    def state(self) -> dict:
        return {"mode": "lifo" if self.lifo else "fifo"}


@register_policy("queues", "drop_tail")
class DropTail(Fifo):
    """FIFO with room for ``capacity`` waiting jobs; an arrival that finds it full is dropped."""

    PARAMS = {
        "capacity": Param(
            int, 50, "waiting jobs the buffer holds (not counting those in service)", min=0, max=10_000_000
        )
    }
    append_only = False

    def __init__(self, capacity: int = 50, **params: object) -> None:
        super().__init__()
        if capacity < 0:
            raise ValueError(f"drop_tail needs capacity >= 0, got {capacity!r}")
        self.capacity = capacity

    def push(self, job, t: float) -> bool:
        if len(self.q) >= self.capacity:
            return False
        self.q.append(job)
        return True


class _Heap(Discipline):
    """A heap of (key, seq, job): the smallest key is served first, ties in arrival order."""

    def __init__(self, **params: object) -> None:
        super().__init__()
        self.h: list = []
        self.seq = 0

    def key(self, job) -> float:
        raise NotImplementedError

    def push(self, job, t: float) -> bool:
        heappush(self.h, (self.key(job), self.seq, job))
        self.seq += 1
        return True

    def pop(self, t: float):
        return heappop(self.h)[2] if self.h else None

    def __len__(self) -> int:
        return len(self.h)

    def waiting(self) -> list:
        return [e[2] for e in sorted(self.h)]

    def head(self, k: int) -> list:
        return [e[2] for e in nsmallest(k, self.h)]


@register_policy("queues", "priority")
class Priority(_Heap):
    """Strict priority, non-preemptive: the lowest class number first, FIFO within a class.
    With ``aging`` > 0 a job's effective class falls by one for every ``aging`` seconds it has
    waited (its key is arrival / aging + class), so a low class cannot wait forever."""

    PARAMS = {
        "aging": Param(
            float, 0.0, "seconds of waiting worth one class of priority; 0 = no aging", min=0.0, max=MAX_DURATION
        )
    }

    def __init__(self, aging: float = 0.0, **params: object) -> None:
        super().__init__()
        if not aging >= 0:
            raise ValueError(f"priority needs aging >= 0, got {aging!r}")
        self.aging = aging

    def key(self, job) -> float:
        return job.cls + job.arrival / self.aging if self.aging else job.cls


@register_policy("queues", "srpt")
class Srpt(_Heap):
    """Shortest remaining processing time, preemptive: an arrival shorter than the remaining
    work of a job in service takes its server; the preempted job waits with what it has left."""

    preemptive = True

    def key(self, job) -> float:
        return job.remaining

    rank = key


CODEL_MODES = ("server", "rfc")


@register_policy("queues", "codel")
class CoDel(Fifo):
    """Controlled Delay at the dequeue of a FIFO (Nichols & Jacobson, ACM Queue 2012), in one of
    two modes with the same constants (target 5 ms, interval 100 ms):

    - ``server`` (default): the variant for request queues in Facebook's folly (``Codel.cpp``,
      described in Maurer, "Fail at Scale", 2015). At the first dequeue after each interval the
      queue is *overloaded* iff the smallest queue delay seen in that interval exceeded target;
      while overloaded, every request that waited more than 2 x target is dropped.
    - ``rfc``: RFC 8289's packet CoDel. Once sojourns stay above target for a whole interval it
      drops the head, then again after interval / sqrt(count), until one sojourn is below target
      or a single job is left ("less than one MTU", counting jobs). Its drop rate grows slowly,
      which suits TCP senders that slow down at each drop; request clients that do not slow down
      outrun it.
    """

    PARAMS = {
        "target": Param(float, 0.005, "acceptable standing queue delay, seconds (5 ms)", min=0.0, max=MAX_DURATION),
        "interval": Param(
            float, 0.1, "window over which the minimum delay is taken, seconds (100 ms)", above=0.0, max=MAX_DURATION
        ),
        "mode": Param(
            str, "server", "server (folly's request-queue CoDel) | rfc (RFC 8289)", choices=("server", "rfc")
        ),
    }
    pop_end = ""  # it may shed at every pop

    def __init__(self, target: float = 0.005, interval: float = 0.1, mode: str = "server", **params: object) -> None:
        super().__init__()
        if not target > 0 or not interval > 0:
            raise ValueError(f"codel needs target > 0 and interval > 0, got {target!r}, {interval!r}")
        if mode not in CODEL_MODES:
            raise ValueError(f"codel mode: expected one of {', '.join(CODEL_MODES)}, got {mode!r}")
        self.target, self.interval, self.mode = target, interval, mode
        # server mode
        self.overloaded = False
        self.interval_end = 0.0  # the next dequeue at or after this time starts a new interval
        self.min_delay = 0.0  # smallest queue delay in the current interval
        self.fresh = True  # the next dequeue is the first of an interval
        # rfc mode
        self.first_above = 0.0  # when sojourns will have been above target for an interval; 0 = not above
        self.dropping = False
        self.drop_next = 0.0
        self.count = 0  # drops in the current dropping state
        self.lastcount = 0

    def pop(self, t: float):
        return self._pop_server(t) if self.mode == "server" else self._pop_rfc(t)

    def _pop_server(self, t: float):
        q, slough = self.q, 2.0 * self.target
        while q:
            job = q.popleft()
            delay = t - job.arrival
            if t > self.interval_end:
                self.interval_end = t + self.interval
                self.overloaded = self.min_delay > self.target
                self.fresh = True
            if self.fresh:  # a new interval's first request is never dropped
                self.fresh = False
                self.min_delay = delay
                return job
            if delay < self.min_delay:
                self.min_delay = delay
            if not (self.overloaded and delay > slough):
                return job
            self.shed.append(job)
        return None

    def _dequeue(self, t: float):
        """RFC 8289 dodequeue: (job, ok_to_drop)."""
        q = self.q
        if not q:
            self.first_above = 0.0
            return None, False
        job = q.popleft()
        if t - job.arrival < self.target or not q:
            self.first_above = 0.0
            return job, False
        if self.first_above == 0.0:
            self.first_above = t + self.interval
            return job, False
        return job, t >= self.first_above

    def _pop_rfc(self, t: float):
        job, ok = self._dequeue(t)
        if job is None:
            self.dropping = False
            return None
        if self.dropping:
            if not ok:
                self.dropping = False
            while self.dropping and t >= self.drop_next:
                self.shed.append(job)
                self.count += 1
                job, ok = self._dequeue(t)
                if not ok:
                    self.dropping = False
                else:
                    self.drop_next += self.interval / sqrt(self.count)
        elif ok:
            self.shed.append(job)
            job, ok = self._dequeue(t)
            self.dropping = True
            delta = self.count - self.lastcount
            self.count = delta if delta > 1 and t - self.drop_next < 16 * self.interval else 1
            self.drop_next = t + self.interval / sqrt(self.count)
            self.lastcount = self.count
        return job

    def state(self) -> dict:
        if self.mode == "server":
            return {"overloaded": self.overloaded, "min_delay": self.min_delay}
        return {"dropping": self.dropping, "count": self.count}
