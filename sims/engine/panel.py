"""Engine panels: one policy name fixes one axis of the engine; the panel params set the rest.

Every choice of every axis (``config.AXES``: allocator, scheduler, batching, preemption, eviction,
deployment) is a registered policy of topic ``engine``, and ``engine`` sets the params alone.
A param naming the same axis must be empty or agree with the policy, so a preset can say
``policy = "mlfq"`` and ``allocator = "paged"`` but never ``policy = "mlfq"`` with
``scheduler = "fcfs"``.
"""

from __future__ import annotations

import math

from sims.core.panel import Panel
from sims.core.registry import Param, Topic, get_policy, register_policy, register_topic
from sims.engine.bill import PARAMS as BILL_PARAMS
from sims.engine.bill import bill
from sims.engine.config import AXES, CONFIG_FIELDS, EngineConfig, knobs
from sims.engine.disagg import Deployment
from sims.engine.engine import Engine
from sims.engine.metrics import Accumulator, Slo, last_completion
from sims.engine.seq import STATE_NAMES
from sims.engine.users import Users
from sims.engine.view import engine_view

_ENGINE_KNOBS = [n for n in CONFIG_FIELDS if n != "role"]  # a deployment sets each replica's role
PANEL_PARAMS = {
    **knobs(_ENGINE_KNOBS, **{axis: "" for axis in AXES if axis in CONFIG_FIELDS}),
    "deployment": Param(
        str, "", f"single (empty) | {' | '.join(AXES['deployment'])}", choices=("", *AXES["deployment"])
    ),
    "prefill_replicas": Param(
        int, 1, "disaggregated: prefill engines (colocated: part of the total)", min=1, max=64, work=1
    ),
    "decode_replicas": Param(
        int, 1, "disaggregated: decode engines (colocated: part of the total)", min=1, max=64, work=1
    ),
    "link_bytes_s": Param(float, 0.0, "KV transfer bandwidth between pools; 0 = the GPU profile's", min=0.0, max=1e15),
    **BILL_PARAMS,
}


class EnginePanel(Panel):
    """One engine (or one Deployment of several) over the shared request stream."""

    topic = "engine"

    def __init__(self, name: str, params: dict, ctx, config: EngineConfig, deployment: str = "") -> None:
        super().__init__(name, params, ctx)
        rng = ctx.rng("engine")
        if deployment:
            self.engine = Deployment(
                config, deployment, params["prefill_replicas"], params["decode_replicas"], params["link_bytes_s"], rng
            )
            self.single = None
        else:
            self.engine = self.single = Engine(config, rng)
        self.acc = Accumulator(Slo.from_params(params))
        self._seen: list[int] = []
        self._t = 0.0
        self._bursts = 0
        self.users: Users | None = None  # a closed loop's users (a ``users`` event made it)

    def feed(self, events: list[dict], lo: int, hi: int, until: float) -> None:
        eng = self.engine
        for k in range(lo, hi):
            ev = events[k]
            kind = ev["kind"]
            if self.users is not None:
                self.users.run(ev["t"], self._arrive, eng.advance, self._engines())
            if kind == "request":  # ``on_event``'s first case, without the call
                t = ev["t"]
                eng.advance(t)
                eng.submit(ev, t)
            elif kind == "burst":
                eng.advance(ev["t"])
                self.on_event(ev)
            else:
                self.on_event(ev)
        if self.users is not None:
            self.users.run(until, self._arrive, self.engine.advance, self._engines())
        eng.advance(until)
        self._t = until

    def _arrive(self, req: dict, t: float) -> None:
        self.engine.advance(t)
        self.engine.submit(req, t)

    def _engines(self) -> list:
        return [self.single] if self.single is not None else self.engine.engines

    def on_event(self, ev: dict) -> None:
        """A request, a closed loop's ``users`` and ``user`` (sims/engine/users.py), or a
        "burst" action: ``count`` requests of ``prompt_len``/``output_len`` tokens at once (the
        site's "break it" button); burst requests get negative ids."""
        kind = ev["kind"]
        if kind == "request":
            self.engine.submit(ev, ev["t"])
        elif kind == "users":
            self.users = Users(ev)
        elif kind == "user":
            if self.users is None:
                raise ValueError(f"user {ev.get('id')!r} at t={ev['t']:g}: no users event came first")
            self.users.join(ev)
        elif kind == "burst":
            for _ in range(int(ev.get("count", 1))):
                self._bursts += 1
                rid = -self._bursts
                n = int(ev.get("prompt_len", 2000))
                req = {
                    "id": rid,
                    "prompt_len": n,
                    "output_len": int(ev.get("output_len", 200)),
                    "segments": [[f"burst{rid}", n]],
                }
                self.engine.submit(req, ev["t"])

    def advance(self, until: float) -> None:
        if self.users is not None:
            self.users.run(until, self._arrive, self.engine.advance, self._engines())
        self.engine.advance(until)
        if until > self._t:
            self._t = until

    def next_time(self) -> float | None:
        t = self.engine.next_time()
        u = self.users.next_time() if self.users is not None else None
        return u if t is None else t if u is None else min(t, u)

    def drain(self) -> None:
        """No more arrivals (closed-loop users send no further turns): run until every request
        finishes. The window then ends at the last completion (vLLM benchmark_serving's
        convention for throughput)."""
        if self.users is not None:
            self.users.closed = True
        self.engine.advance(math.inf)
        self._collect()
        self._t = last_completion(self.engine.records, self._t)

    def _collect(self) -> None:
        engines = self.engine.engines if self.single is None else [self.single]
        if len(self._seen) < len(engines):
            self._seen = [0] * len(engines)
        for i, e in enumerate(engines):
            recs = e.records
            for k in range(self._seen[i], len(recs)):
                self.acc.add(recs[k])
            self._seen[i] = len(recs)

    def metrics(self) -> dict[str, float]:
        self._collect()
        out = self.acc.result(self._t, self.engine.stats, self.engine.in_flight(), self._t)
        # the share of KV memory held at this instant (kv_utilization is token state, run average)
        out["kv_held_now"] = self.single.kv_usage if self.single else _mean(e.kv_usage for e in self.engine.engines)
        out["waiting"] = self.single.num_waiting if self.single else sum(e.num_waiting for e in self.engine.engines)
        out["running"] = self.single.num_running if self.single else sum(e.num_running for e in self.engine.engines)
        if self.single is None:
            out["kv_transfer_s"] = self.engine.transfer_s
        engines = [self.single] if self.single else self.engine.engines
        cost = engines[0].cost
        out.update(bill(self.acc, self.engine.stats, self._t, len(engines), cost.tp, cost.gpu, self.params))
        return out

    def view(self) -> dict:
        if self.single is not None:
            return engine_view(self.single)
        return {
            "kind": "deployment",
            "mode": self.engine.mode,
            "prefill": [engine_view(e, small=True) for e in self.engine.prefill],
            "decode": [engine_view(e, small=True) for e in self.engine.decode],
        }

    def check_invariants(self) -> None:
        self.engine.check_invariants()
        if self.users is not None:
            self.users.check_invariants()


def _mean(values) -> float:
    v = list(values)
    return sum(v) / len(v) if v else 0.0


def _policy(axis: str, name: str):
    cls = type(f"EnginePolicy_{name}", (), {"AXIS": axis, "PARAMS": {}, "__doc__": f"{axis} = {name}"})
    return register_policy("engine", name)(cls)


for _axis, _names in AXES.items():
    for _name in _names:
        _policy(_axis, _name)
_policy("", "engine")


def resolve(policy: str, params: dict) -> tuple[EngineConfig, str]:
    """The engine config and deployment a panel's policy and params describe."""
    cls = get_policy("engine", policy)
    params = dict(params)
    if cls.AXIS:
        given = params.get(cls.AXIS, "")
        if given not in ("", policy):
            raise ValueError(f"panel policy {policy!r} sets {cls.AXIS}={policy!r} but the params say {given!r}")
        params[cls.AXIS] = policy
    deployment = params.pop("deployment", "") or ""
    fields = {k: v for k, v in params.items() if k in CONFIG_FIELDS and v != ""}
    return EngineConfig(**fields), deployment


def make_panel(policy: str, name: str, params: dict, ctx) -> Panel:
    config, deployment = resolve(policy, params)
    return EnginePanel(name, params, ctx, config, deployment)


register_topic(Topic("engine", make_panel, panel_params=PANEL_PARAMS))

__all__ = ["AXES", "EnginePanel", "PANEL_PARAMS", "STATE_NAMES", "make_panel", "resolve"]
