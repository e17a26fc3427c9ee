"""What both of the queue panel's loops work on: one attempt (``Job``) and one waiting line with
its servers (``Group``)."""

from __future__ import annotations

from sims.core.panel import Checkpointed
from sims.queues.retry import BUDGET_CAP

__all__ = ["BUDGET_CAP", "Group", "Job"]


class Job(Checkpointed):
    """One attempt of one client request at the queue."""

    __slots__ = (
        "id",
        "client",
        "attempt",
        "arrival",
        "size",
        "remaining",
        "cls",
        "start",
        "ver",
        "done",
        "gone",
        "group",
    )

    def __init__(self, id: int, client: int, attempt: int, arrival: float, size: float, cls: int) -> None:
        self.id = id  # attempt number at this queue, in arrival order
        self.client = client  # the stream request this attempt serves
        self.attempt = attempt  # 0 for the first try
        self.arrival = arrival  # when this attempt reached the queue
        self.size = size  # work, seconds at speed 1
        self.remaining = size  # work left (less than size only after a preemption)
        self.cls = cls  # priority class, 0 highest
        self.start = -1.0  # when it last started service; -1 while it never has
        self.ver = 0  # bumped on preemption: older completion entries are stale
        self.done = False  # served or dropped: it left the system
        self.gone = False  # its client timed out and stopped waiting
        self.group = 0  # which queue it joined


class Group(Checkpointed):
    """One waiting line and the servers that take from it."""

    __slots__ = ("disc", "servers", "busy")

    def __init__(self, disc, servers: int) -> None:
        self.disc = disc
        self.servers = servers
        self.busy: list[Job] = []  # jobs in service, at most ``servers``
