"""Recording mode for replacement panels (cache and paging): each reference's decision, and the
helpers the policies' ``explain`` sentences share.

A ``ref`` decides ``hit`` (resident), ``admit`` (a miss into a free slot) or ``evict`` (a miss that
pushed a victim out: the victim is the subject). A ``scan`` decides its whole list of victims.
``History`` remembers, in recording mode only, when each key came in, when it was last used and how
often since, so a sentence can say "last used at t=3.200 s" whatever the policy keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from sims.core.diverge import Decision, seconds
from sims.replace.base import scan_keys

_TITLES = {"twoq": "2Q", "s3fifo": "S3-FIFO", "aging": "Aging"}


def title(policy: Any) -> str:
    """How a sentence names a policy: LRU, ARC, 2Q; names with an underscore as they are."""
    name = getattr(policy, "policy_name", "") or type(policy).__name__
    return _TITLES.get(name, name if "_" in name else name.upper())


class History:
    """Per key: when it was admitted, last used, and its uses since admission (as this panel saw)."""

    def __init__(self) -> None:
        self.admitted: dict[Hashable, float] = {}
        self.last: dict[Hashable, float] = {}
        self.uses: dict[Hashable, int] = {}

    def facts(self, key: Hashable) -> dict[str, Any]:
        return {
            "victim": key,
            "admitted": self.admitted.get(key),
            "last": self.last.get(key),
            "uses": self.uses.get(key, 0),
        }

    def saw(self, keys: list[Hashable], victims: list[Hashable], t: float) -> None:
        for v in victims:
            self.admitted.pop(v, None)
        for key in keys:
            if key in self.admitted:
                self.uses[key] += 1
            else:
                self.admitted[key] = t
                self.uses[key] = 1
            self.last[key] = t


def record(panel: Any, policy: Any, events: list[dict], k: int, name: Callable[[Hashable], str]) -> Decision | None:
    """Feed ``events[k]`` to ``panel`` (whose ``policy`` reports victims through ``on_evict`` and
    whose ``hits`` counts hits) and return the decision."""
    ev = events[k]
    kind = ev["kind"]
    if kind != "ref" and kind != "scan":
        panel.feed(events, k, k + 1, ev["t"])
        return None
    history = panel.__dict__.get("_history")
    if history is None:
        history = panel._history = History()
    victims: list[Hashable] = []
    before = policy.on_evict

    def note(v: Hashable) -> None:
        victims.append(v)
        if before is not None:
            before(v)

    policy.on_evict = note
    hits = panel.hits
    try:
        panel.feed(events, k, k + 1, ev["t"])
    finally:
        policy.on_evict = before
    keys = [ev["key"]] if kind == "ref" else list(scan_keys(ev))
    facts = history.facts(victims[0]) if victims else {}
    facts["key"] = name(keys[0]) if keys else ""
    facts["t"] = ev["t"]
    if kind == "scan":
        subject = f"{len(keys)} keys from {name(keys[0])}" if keys else "an empty scan"
        target = f"{len(victims)} evicted" + (f", first {name(victims[0])}" if victims else "")
        facts["first"] = name(victims[0]) if victims else ""
        d = Decision("scan", subject, target, tuple(victims), facts)
    elif victims:  # Redis evicts at the next command, a hit included
        facts["hit"] = panel.hits > hits
        d = Decision("evict", name(victims[0]), detail=tuple(victims), facts=facts)
    elif panel.hits > hits:
        d = Decision("hit", name(keys[0]), facts=facts)
    else:
        d = Decision("admit", name(keys[0]), facts=facts)
    history.saw(keys, victims, ev["t"])
    return d


def say(policy: Any, d: Decision, reason: str) -> str:
    """The sentence for a replacement decision; ``reason`` says why the victim of an ``evict``
    went, in the policy's terms ({last}, {admitted}, {uses} are the victim's history). A scan's
    sentence counts its victims (the policy's state after a whole scan no longer shows why each
    one went)."""
    who = title(policy)
    f = d.facts
    why = reason.format(last=seconds(f.get("last")), admitted=seconds(f.get("admitted")), uses=f.get("uses", 0))
    if d.action == "hit":
        return f"{who} still held {d.subject}, so it was a hit"
    if d.action == "admit":
        return f"{who} admitted {d.subject} into a free slot: nothing had to go"
    if d.action == "scan":
        first = f", first {f['first']} (last used at {seconds(f.get('last'))})" if d.detail else ""
        return f"{who} let the scan of {d.subject} push out {len(d.detail)} keys{first}"
    cause = f"on the reference to {f.get('key')}" if f.get("hit") else f"to admit {f.get('key')}"
    return f"{who} evicted {d.subject} {cause}: {why}"


def kept(other: Decision | None, where: Callable[[Hashable], str | None]) -> str:
    """ ", and kept k17 in T2" when the other panel evicted a key this one still holds."""
    if other is None or other.action != "evict":
        return ""
    place = where(other.detail[0])
    return f"; it kept {other.subject} {place}" if place else ""
