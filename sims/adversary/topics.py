"""What a search varies in each topic it supports, and how a candidate becomes a stream.

A candidate (a "genome") is a list of integers: page numbers or cache keys (paging, cache), a
set of distinct keys (hashing), arrival times in milliseconds, sorted (ratelimit), or a fault
schedule: each gene one step and the wait after it, ``step * len(GAPS) + gap``. For consensus a
step of ``sims.consensus.trials`` (isolate the leader alone or with its next node, crash it or
its next node, restart the crashed, heal, a client command); for replication one of
``sims.replication.trials`` (crash or isolate node i, restart the crashed, heal; pause node i
and resume the paused only when a lease policy is searched), under the
client operations of a fixed ``registers`` workload on the search's seed; for election the
consensus steps (an election panel resolves ``leader`` and marks in faults as a consensus panel
does, and ignores the commands) and two of its own, ``ELECTION_STEPS``: pause the leader for one
of ``PAUSES`` (the gene's gap is the pause's length), and slow its clock to ``SKEW``; a
consensus or election search may choose its steps instead (``step_set``, the CLI's ``--steps``),
among them ``oneway``, which the defaults leave out. Each topic
spec turns it into exactly the events its preset workload generates (``sequence`` for keys,
``arrival_times`` for times) and into that ``[workload]`` table, so a written preset replays the
candidate bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sims.core import registry
from sims.core.limits import InputError

__all__ = ["SPECS", "Layout", "TopicSpec", "spec_of"]


@dataclass(frozen=True)
class TopicSpec:
    topic: str
    size_param: str  # the panel parameter that --size (k) sets
    genome: str  # "keys" (a reference string), "set" (distinct keys), "times" (sorted ms), "schedule"
    rate: float = 1.0  # references per second for key genomes
    # build each panel once and copy it per candidate (its constructor is costly: a ring of
    # 1,000 SHA-256 points); only for panels that never read their context's stream
    copy_panels: bool = False
    default_size: int = 4  # --size when it is not given
    violations: str = ""  # the checker's metric: what the objective "violations" counts

    def violations_of(self, policy: str) -> str:
        """The checker's metric that the objective "violations" counts for ``policy``: the
        topic's, or the policy's own (``violations`` on its class: the replication lease
        policies promise linearizable reads, so theirs is the oracle's ``stale_reads``)."""
        own = getattr(registry.get_policy(self.topic, policy), "violations", None)
        return own if isinstance(own, str) and own else self.violations

    def pauses(self, policies) -> bool:
        """Whether a replication schedule search of ``policies`` may pause nodes: only for a
        policy whose safety rests on time (``leases`` on its class), so the other searches keep
        their steps and their evaluation counts."""
        if self.topic != "replication":
            return False
        return any(getattr(registry.get_policy(self.topic, p), "leases", False) for p in policies)

    def layout(
        self,
        k: int,
        length: int,
        keys: int | None,
        duration: float | None = None,
        seed: int = 1,
        steps: tuple[str, ...] | None = None,
        pauses: bool = False,
    ) -> Layout:
        """How candidates of this search become streams. ``duration``: fit every candidate into
        a preset's run of that length (the browser keeps the page's duration), else the run lasts
        until the last event. ``seed``: the stream's (a replication schedule's client operations).
        ``steps``: a consensus or election schedule's step names (default: the topic's own set);
        ``pauses``: a replication schedule may pause nodes (``pauses()``)."""
        rate = self.rate
        span = max(2, -(-length // k))  # ratelimit: seconds over which arrivals come at the limit on average
        if duration is not None:
            rate = length / duration  # the length-th reference lands at or before the duration
            while length * (1.0 / rate) > duration:
                rate = math.nextafter(rate, math.inf)
            span = duration
        if self.genome == "schedule":
            if duration is not None:
                raise InputError("a schedule search runs on its own durations, not a page's")
            if self.topic == "replication":
                from sims.replication import trials

                if steps is not None:
                    raise InputError(
                        "--steps: a replication schedule's steps are its own (see sims.replication.trials)"
                    )
                universe = len(trials.steps(k, pauses)) * len(trials.GAPS)
                return Layout(self.genome, rate, universe, None, k, self.topic, seed, length, pauses=pauses)
            from sims.consensus.trials import GAPS, step_set

            names = step_set(self.topic, steps)
            return Layout(self.genome, rate, len(names) * len(GAPS), None, k, self.topic, seed, length, names=names)
        if steps is not None:
            raise InputError(f"--steps: {self.topic} searches workloads, not fault schedules")
        if self.genome == "times":
            universe = int(1000 * span)
        elif keys is not None:
            universe = keys
        elif self.genome == "set":
            universe = 1_000_000
        else:  # k+3 pages: FIFO's anomaly needs at least k+2 distinct pages and is easy to find with k+3
            universe = k + 3 if self.topic == "paging" else 2 * k
        return Layout(self.genome, rate, universe, duration)

    def size_of(self, params: dict) -> int | None:
        """The size (k) of a panel with these resolved parameters."""
        if not self.size_param:
            return None
        if self.topic == "ratelimit":
            v = params.get("limit", params.get("burst"))
        else:
            v = params.get(self.size_param)
        return int(v) if isinstance(v, (int, float)) and v == int(v) else None

    def panel_params(self, policy: str, size: int) -> dict:
        """The raw panel parameters of ``policy`` at size ``size`` (before the topic's defaults)."""
        cls = registry.get_policy(self.topic, policy)
        if not self.size_param:  # the size is the workload's (servers), not a panel's
            return {}
        if self.topic != "ratelimit":
            return {self.size_param: size}
        params = getattr(cls, "PARAMS", None)
        if not isinstance(cls, type) or params is None or not any(p in params for p in ("limit", "burst")):
            raise InputError(f"ratelimit policy {policy!r} limits tokens, not requests; search cannot vary it")
        out: dict = {}
        for name, spec in params.items():
            if name in ("limit", "burst", "rate"):
                out[name] = spec.type(size)
        return out


@dataclass(frozen=True)
class Layout:
    """Candidates as streams: keys at ``rate`` per second from t = 1/rate, or arrival times in
    milliseconds 1..``universe``; ``duration`` fixed (a preset's) or up to the last event."""

    genome: str
    rate: float
    universe: int  # keys 0..universe-1, milliseconds 1..universe, or schedule steps 0..universe-1
    duration: float | None = None
    size: int = 0  # a schedule's servers
    topic: str = ""
    seed: int = 1  # a replication schedule's client operations come from this seed's stream
    length: int = 0  # the most steps in a schedule
    names: tuple[str, ...] = ()  # a consensus or election schedule's steps (``sims.consensus.trials``)
    pauses: bool = False  # a replication schedule's steps include pause and resume

    @property
    def gaps(self) -> tuple[float, ...]:
        """The waits a schedule step may have after it, shortest first."""
        if self.topic == "replication":
            from sims.replication.trials import GAPS
        else:
            from sims.consensus.trials import GAPS
        return GAPS

    def step_times(self, step: int) -> tuple[float, ...]:
        """The time a schedule step of index ``step`` may take, by its gap: the wait after it, or
        a pause's length (the next step comes when the paused node resumes)."""
        if self.names and self.names[step] == "pause":
            from sims.consensus.trials import PAUSES

            return PAUSES
        return self.gaps

    def step_time(self, gene: int) -> float:
        """The time from this gene's step to the next step's."""
        step, gap = divmod(gene, len(self.gaps))
        return self.step_times(step)[gap]

    def _schedule(self, genome: list[int]) -> tuple[list[dict], float]:
        genes = [divmod(g, len(self.gaps)) for g in genome]
        if self.topic == "replication":
            from sims.replication import trials

            longest = trials.START + self.length * max(trials.GAPS) + trials.SETTLE
            return trials.events(genes, self.size, self.seed, longest, self.pauses)
        from sims.consensus.trials import schedule_events

        return schedule_events(genes, self.names, self.size)

    def schedule(self, genome: list[int]) -> list[dict]:
        """A candidate's schedule as written: the consensus workload's ``schedule`` entries, or a
        replication preset's ``[[events]]`` (its faults)."""
        if self.topic == "replication":
            from sims.replication.trials import faults

            return faults([divmod(g, len(self.gaps)) for g in genome], self.size, self.pauses)[0]
        return self.workload(genome)["schedule"]

    def workload(self, genome: list[int]) -> dict:
        """The preset's ``[workload]`` table for a candidate."""
        if self.genome == "schedule" and self.topic == "replication":
            from sims.replication.trials import workload

            return workload(self.size)
        if self.genome == "schedule":
            table = []
            for ev in self._schedule(genome)[0]:
                if ev["kind"] == "op":
                    table.append({"t": ev["t"], "kind": "op"})
                else:
                    table.append({k: v for k, v in ev.items() if k != "kind"})
            return {"kind": "consensus", "nodes": self.size, "op_rate": 0.0, "schedule": table}
        if self.genome == "times":
            return {"kind": "arrival_times", "times": [ms / 1000 for ms in genome]}
        return {"kind": "sequence", "rate": self.rate, "keys": list(genome)}

    def events(self, genome: list[int]) -> list[dict]:
        """The stream the workload above generates: the same dicts, the same float times."""
        if self.genome == "schedule":
            return self._schedule(genome)[0]
        if self.genome == "times":
            return [{"t": ms / 1000, "kind": "request", "id": i} for i, ms in enumerate(genome)]
        dt = 1.0 / self.rate
        return [{"t": i * dt, "kind": "ref", "key": key} for i, key in enumerate(genome, 1)]

    def genome_of(self, events: list[dict], length: int) -> list[int]:
        """A candidate from a stream (a preset's own generator): its first ``length`` references
        (integer keys) or arrivals (times in whole milliseconds, 1..universe)."""
        if self.genome == "schedule":
            raise InputError("--from: a schedule search starts from random schedules, not a preset's")
        if self.genome == "times":
            times = [ev["t"] for ev in events if ev["kind"] == "request"][:length]
            return [min(self.universe, max(1, round(t * 1000))) for t in times]
        keys = [ev["key"] for ev in events if ev["kind"] == "ref" and isinstance(ev.get("key"), int)][:length]
        if self.genome == "set":
            keys = list(dict.fromkeys(keys))
        return keys

    def run_length(self, genome: list[int]) -> float:
        """The run's duration: the fixed one, else up to the last event (at least 1 s)."""
        if self.duration is not None:
            return self.duration
        if self.genome == "schedule":
            return self._schedule(genome)[1]
        if not genome:
            return 1.0
        last = genome[-1] / 1000 if self.genome == "times" else len(genome) * (1.0 / self.rate)
        return max(1.0, float(last))


SPECS = {
    "paging": TopicSpec("paging", "frames", "keys"),
    "cache": TopicSpec("cache", "size", "keys"),
    "hashing": TopicSpec("hashing", "nodes", "set", rate=1000.0, copy_panels=True),
    "ratelimit": TopicSpec("ratelimit", "limit", "times"),
    "consensus": TopicSpec("consensus", "nodes", "schedule", default_size=5, violations="safety_violations"),
    "replication": TopicSpec("replication", "nodes", "schedule", default_size=3, violations="lost_acked_writes"),
    # the consensus topic's schedules: an election panel resolves "leader" and marks as it does
    "election": TopicSpec("election", "nodes", "schedule", default_size=5, violations="split_brain_s"),
}


def spec_of(topic: str) -> TopicSpec:
    if topic not in SPECS:
        raise InputError(f"unknown topic {topic!r} for search; valid: {', '.join(sorted(SPECS))}")
    return SPECS[topic]
