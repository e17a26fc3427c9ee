"""What a run will cost, estimated from its parameters before anything is built.

Three budgets, each refused with the file and the field that drives it, within a second:
- the stream: its events and the memory they hold (a run keeps every event), from a sample of the
  generator's first ``SAMPLE`` events extrapolated to the run's horizon (or the events given);
- the panels' state: what each parameter's value makes a panel hold (``params.State``: replicas x
  KV blocks, a cache's table, groups x prompts), plus what a panel keeps per event;
- the work: CPU seconds, from each topic's cost per event, per virtual second and per token
  (``budget`` in its topic.toml, measured with ``contention bench`` on CPython) scaled by the
  parameters that declare a ``work`` exponent (replicas, a heartbeat interval, a graph's speed).

Every figure is an estimate for CPython on a 64-bit machine, the same in every runtime (a model of
object sizes, not a measurement), so the CLI, the server, the site's links and the worker refuse
exactly the same runs. ``check`` is called by ``preset_schema.parse_preset`` (a preset, and every
override of one, at its own duration) and by ``Scenario`` (the run's duration and panels).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from sims.core import registry
from sims.core.limits import MAX_RATE, MAX_STREAM_EVENTS, InputError, show
from sims.core.params import Param

MiB = 1 << 20
MAX_STREAM_BYTES = 640 * MiB  # the events a run holds (5M small events would be 1.2 GB)
MAX_STATE_BYTES = 512 * MiB  # what the panels' parameters make them hold
MAX_MEMORY_BYTES = 896 * MiB  # both together: a run stays under 1 GB with the interpreter
MAX_WORK_S = 60.0  # estimated CPU seconds of one run (CPython on the development machine)
SAMPLE = 1000  # generator events drawn to estimate the stream (a rate to a few percent)
BURST = 50_000  # drawn at most while every one sits at t = 0
SLOT = 16  # per event: its slot in the stream's list and in the scenario's list of times

_DICT = ((5, 184), (10, 272), (21, 464), (42, 848))  # CPython 3.11 dict sizes by number of keys


def event_bytes(value: Any) -> int:
    """The memory one event holds in CPython (64-bit), a model: dicts by their key count, lists
    exactly as JSON builds them, each string and float its own object, small integers, keys and
    the ``kind`` shared (a generator's literals; the trace readers intern them)."""
    size = _dict_bytes(len(value))
    for k, v in value.items():
        if k != "kind":
            size += _bytes(v)
    return size


def _dict_bytes(n: int) -> int:
    return next((b for k, b in _DICT if n <= k), 848 + 20 * (n - 42))


def _bytes(value: Any) -> int:
    t = type(value)
    if t is float:
        return 24
    if t is int:
        return 0 if -5 <= value <= 256 else 28 + 4 * (value.bit_length() // 30)
    if t is str:
        return 49 + len(value)
    if t is list:
        return 56 + 8 * len(value) + sum(map(_bytes, value))
    if t is dict:
        return _dict_bytes(len(value)) + sum(map(_bytes, value.values()))
    return 0  # True, False, None: shared


def tokens(ev: dict) -> int:
    """The tokens an LLM request event asks an engine for (prompt, and output for each sample)."""
    prompt, out = ev.get("prompt_len"), ev.get("output_len")
    if type(prompt) is not int or type(out) is not int:
        return 0
    n = ev.get("n", 1)
    return prompt + out * (n if type(n) is int and n > 0 else 1)


@dataclass(frozen=True)
class Stream:
    """A stream's size: events to the horizon, and per event its bytes and tokens (means)."""

    events: int
    event_bytes: float
    tokens: float
    exact: bool  # every event counted (a short stream, or one given)
    horizon: float = 0.0  # how far it was estimated (a longer or shorter one scales with it)

    def to(self, horizon: float) -> Stream:
        """The same stream to another horizon: a finite one keeps its events, the rest scale."""
        if self.exact or not self.horizon:
            return self
        return Stream(int(self.events * horizon / self.horizon), self.event_bytes, self.tokens, False, horizon)


@dataclass(frozen=True)
class Cost:
    """One figure against its bound, with the field that drives it (for the message)."""

    value: float
    field: str
    why: str


@dataclass(frozen=True)
class Estimate:
    stream: Stream
    events_run: float  # events within the run's duration (the panels' share of the work)
    state: Cost  # bytes the panels hold, the biggest term's field
    work: Cost  # CPU seconds, the panel or parameter that costs most

    @property
    def stream_bytes(self) -> float:
        return self.stream.events * (self.stream.event_bytes + SLOT)

    @property
    def memory(self) -> float:
        return self.stream_bytes + self.state.value

    def over(self) -> float:
        """How many times over its tightest budget this run is (<= 1: within every one)."""
        return max(
            self.stream.events / MAX_STREAM_EVENTS,
            self.stream_bytes / MAX_STREAM_BYTES,
            self.state.value / MAX_STATE_BYTES,
            self.memory / MAX_MEMORY_BYTES,
            self.work.value / MAX_WORK_S,
        )


# -- the stream ---------------------------------------------------------------------------------
def sample_stream(preset, seed: int, horizon: float) -> Stream:
    """The preset's stream to ``horizon``, estimated from its first ``SAMPLE`` events (more while
    they all sit at t = 0, up to ``BURST``): the rate of the later half of the sample (an initial
    burst is not a rate) carried to the horizon."""
    from sims.core import stream

    closed = registry.get_workload(preset.workload_kind).estimate
    if closed is not None:  # the panels make the requests: count those, the stream holds a few
        requests, per = closed(preset.workload, horizon)
        scheduled = sum(1 for e in preset.events if e["t"] <= horizon)
        return Stream(int(requests) + scheduled, 0.0, per, False, horizon)
    gen = stream.generate(preset.workload_kind, preset.workload, seed, horizon)
    head = list(islice(gen, SAMPLE))
    while len(head) < BURST and head and head[-1]["t"] <= 0.0 and len(head) % SAMPLE == 0:
        head += islice(gen, SAMPLE)
    scheduled = sum(1 for e in preset.events if e["t"] <= horizon)
    n = len(head) or 1
    size, toks = sum(map(event_bytes, head)) / n, sum(map(tokens, head)) / n
    if len(head) % SAMPLE or next(gen, None) is None:
        return Stream(len(head) + scheduled, size, toks, True, horizon)
    t_end = head[-1]["t"]
    if t_end <= 0.0:  # more than BURST events at t = 0: at least that many, at once
        return Stream(max(len(head), MAX_STREAM_EVENTS) + 1, size, toks, True, horizon)
    half = sum(1 for ev in head if ev["t"] >= t_end / 2)
    rate = half / (t_end / 2)
    return Stream(int(len(head) + rate * (horizon - t_end)) + scheduled, size, toks, False, horizon)


def given_stream(events: list[dict]) -> Stream:
    """A stream read from a trace: every event counted, sizes from ``SAMPLE`` of them, evenly spread."""
    step = max(1, len(events) // SAMPLE)
    some = [events[k] for k in range(0, len(events), step)]
    n = len(some) or 1
    held = getattr(events, "nbytes", None)  # a ``Columns`` stream knows what it holds
    size = held / len(events) - SLOT if held is not None and len(events) else sum(map(event_bytes, some)) / n
    return Stream(len(events), size, sum(map(tokens, some)) / n, True, 0.0)


# -- the panels ---------------------------------------------------------------------------------
def _value(params: dict, name: str) -> float:
    return float(sum(params.get(part, 0) or 0 for part in name.split("+")))


def state_terms(specs: dict[str, Param], params: dict, events: float) -> Iterable[tuple[float, str]]:
    """(bytes, parameter) for each parameter that declares the memory its value costs."""
    for key, spec in specs.items():
        st = spec.state
        if st is None or key not in params or isinstance(params[key], (bool, str)):
            continue
        v = float(len(params[key])) if isinstance(params[key], list) else float(params[key])
        if v == 0:
            v = st.zero
        size = st.bytes * v + st.fill * min(v, events)
        if st.per:
            size /= max(1.0, _value(params, st.per))
        for name in st.times:
            size *= max(1.0, _value(params, name))
        yield size, key


def work_factor(specs: dict[str, Param], params: dict) -> tuple[float, str]:
    """How much more a panel costs than at the defaults (each declared ``work``, an integer
    exponent, applied by multiplying: the same figure in every runtime), and the parameter that
    adds most."""
    factor, top, top_f = 1.0, "", 1.0
    for key, spec in specs.items():
        v, d = params.get(key), spec.default
        if not spec.work or isinstance(v, bool) or not isinstance(v, (int, float)) or not isinstance(d, (int, float)):
            continue
        if v <= 0 or d <= 0:
            continue  # 0 = off (no timer) or derived: the default's cost
        r = v / d if spec.work > 0 else d / v
        f = 1.0
        for _ in range(abs(int(spec.work))):
            f *= r
        factor *= f
        if f > top_f:
            top, top_f = key, f
    return factor, top


def _panel_specs(topic, policy: str) -> dict[str, Param]:
    cls = registry.get_policy(topic.name, policy)
    return dict(topic.panel_params) | dict(getattr(cls, "PARAMS", {}))


def _parts(preset):
    """(topic info, topic, workload spec, each panel's specs) of a preset."""
    topic = registry.load_topic(preset.topic)
    specs = [_panel_specs(topic, p.policy) for p in preset.panels]
    return registry.topic_info(preset.topic), registry.get_workload(preset.workload_kind), specs


def built_state(preset) -> Cost:
    """The bytes the panels and the workload hold as soon as they are built (no event yet)."""
    _, wl, specs = _parts(preset)
    terms = [(b, f"workload.{k}") for b, k in state_terms(wl.params, preset.workload, 0.0)]
    for i, (spec, ps) in enumerate(zip(preset.panels, specs, strict=True)):
        terms += [(b, f"panels[{i}].{k}") for b, k in state_terms(ps, spec.params, 0.0)]
    return Cost(sum(b for b, _ in terms), max(terms, default=(0.0, ""))[1], "state")


def estimate(
    preset,
    duration: float | None = None,
    seed: int | None = None,
    events: list | None = None,
    sampled: Stream | None = None,
) -> Estimate:
    """The cost of running ``preset`` (its selected panels) for ``duration`` (default: its own);
    ``sampled``: the stream as an earlier estimate sampled it (carried to this horizon)."""
    from sims.core import stream as _stream

    duration = preset.duration if duration is None else float(duration)
    seed = preset.seed if seed is None else seed
    info, wl, specs = _parts(preset)
    per = dict(info.budget)
    horizon = _stream.horizon(preset, duration)
    if events is not None:
        st = given_stream(events)
    else:
        st = sampled.to(horizon) if sampled is not None else sample_stream(preset, seed, horizon)
    run_events = st.events if events is not None else st.events * min(1.0, duration / horizon)
    state = [(b, f"workload.{k}") for b, k in state_terms(wl.params, preset.workload, 0.0)]
    wfactor, wdriver = work_factor(wl.params, preset.workload)
    work, work_top, work_field = 0.0, 0.0, ""
    for i, (spec, ps) in enumerate(zip(preset.panels, specs, strict=True)):
        state += [(b, f"panels[{i}].{k}") for b, k in state_terms(ps, spec.params, run_events)]
        state.append((per.get("panel_bytes", 0.0) + per.get("event_bytes", 0.0) * run_events, f"panels[{i}]"))
        factor, driver = work_factor(ps, spec.params)
        us = per.get("event_us", 1.0) * run_events * wfactor
        us += per.get("token_us", 0.0) * st.tokens * run_events * wfactor
        us += per.get("second_us", 0.0) * duration + per.get("second2_us", 0.0) * duration * duration
        w = us * factor / 1e6
        work += w
        if w > work_top:
            work_top = w
            work_field = f"panels[{i}].{driver}" if driver else (f"workload.{wdriver}" if wdriver else "duration")
    if events is not None and work_field == "duration":
        work_field = "panels"  # a trace's events are given: fewer panels is the way down
    total = sum(b for b, _ in state)
    biggest = max(state, default=(0.0, ""))[1]
    return Estimate(st, run_events, Cost(total, biggest, "state"), Cost(work, work_field, "work"))


# -- the check ----------------------------------------------------------------------------------
def _mb(n: float) -> str:
    return f"{n / MiB:,.0f} MiB" if n < 1 << 40 else f"{n / (1 << 40):,.0f} TiB"


def _seconds(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:,.0f} h"


def check(
    preset,
    duration: float | None = None,
    seed: int | None = None,
    events: list | None = None,
    where: str | None = None,
) -> Estimate:
    """``estimate``, refused (``PresetError`` naming the file and the field) past any budget."""
    from sims.core.preset_schema import PresetError

    where = where or preset.path or preset.name
    d = preset.duration if duration is None else float(duration)
    built = built_state(preset)  # first: a table of 10^12 entries is never sampled, let alone built
    if built.value > MAX_STATE_BYTES:
        raise PresetError(
            f"{where}: field '{built.field}': the panels would hold about {_mb(built.value)} once built; "
            f"at most {_mb(MAX_STATE_BYTES)}"
        )
    try:
        est = estimate(preset, d, seed, events)
    except InputError:
        raise
    except (ValueError, TypeError, ArithmeticError, IndexError, KeyError) as exc:
        # the workload's own checks (a ladder's shape, ws <= pages), run while it is sampled
        what = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {show(str(exc), 120)}"
        raise PresetError(f"{where}: field 'workload': {what}") from None
    st = est.stream
    span = f"{d:g} s" if events is None else f"the {st.events:,} events given"
    most = longest(preset, d, est) if events is None and est.over() > 1 else 0.0
    # a shorter run still holds the preset's own stream (oracles look ahead over it): no duration
    # fits when that alone is over, and then only smaller values do
    fit = f"at most {_floor(most)} s or " if most > 0 else ""
    if events is None and (st.events > MAX_STREAM_EVENTS or est.stream_bytes > MAX_STREAM_BYTES):
        field = "duration" if most > 0 else _rate_field(preset)
        key = field.rpartition(".")[2]
        spec = registry.get_workload(preset.workload_kind).params.get(key)
        lower = "a lower rate" if spec is None or spec.max == MAX_RATE else f"a smaller {key}"
        raise PresetError(
            f"{where}: field '{field}': the stream would hold about {st.events:,} events ({_mb(est.stream_bytes)}) "
            f"in {span}; at most {MAX_STREAM_EVENTS:,} events and {_mb(MAX_STREAM_BYTES)}: ask for {fit}{lower}"
        )
    if est.state.value > MAX_STATE_BYTES or est.memory > MAX_MEMORY_BYTES:
        raise PresetError(
            f"{where}: field '{est.state.field}': the panels would hold about {_mb(est.state.value)} "
            f"(the stream {_mb(est.stream_bytes)} more); at most {_mb(MAX_STATE_BYTES)}, "
            f"{_mb(MAX_MEMORY_BYTES)} in all: ask for {fit}smaller values"
        )
    if est.work.value > MAX_WORK_S:
        panels = len(preset.panels)
        raise PresetError(
            f"{where}: field '{est.work.field}': the run would take about {_seconds(est.work.value)} of CPU "
            f"({panels} panel{'s' * (panels != 1)}, {span}, about {st.events:,} events); at most about "
            f"{_seconds(MAX_WORK_S)}: ask for {fit}fewer panels or smaller values"
        )
    return est


def _rate_field(preset) -> str:
    """The workload's parameter that most exceeds its default (what a stream too big at any
    duration asks to lower: a rate, or a count such as a heap's live objects), or the workload."""
    specs = registry.get_workload(preset.workload_kind).params
    best, top = "workload", 1.0
    for key, spec in specs.items():
        v = preset.workload.get(key)
        if spec.max is None or isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if not isinstance(spec.default, (int, float)) or isinstance(spec.default, bool):
            continue
        ratio = v / spec.default if spec.default > 0 else v
        if ratio > top or (ratio == top and spec.max == MAX_RATE and best != "workload"):
            best, top = f"workload.{key}", ratio
    return best


def longest(preset, duration: float, est: Estimate) -> float:
    """The longest duration up to ``duration`` within every budget, by bisection over the
    estimate (its stream sample carried to each horizon)."""
    lo, hi = 0.0, duration
    for _ in range(40):
        mid = (lo + hi) / 2
        if estimate(preset, mid, sampled=est.stream).over() <= 1.0:
            lo = mid
        else:
            hi = mid
    return lo


def _floor(x: float) -> str:
    """A round number at or below ``x`` (two significant digits)."""
    if not x > 0:
        return "0"
    if x < 10:
        digits = 0
        while x * 10**digits < 10:
            digits += 1
        return f"{int(x * 10**digits) / 10**digits:g}"
    digits = len(str(int(x)))
    e = 10 ** max(0, digits - 2)
    return f"{int(x) // e * e:,}"


__all__ = ["Estimate", "MAX_MEMORY_BYTES", "MAX_STATE_BYTES", "MAX_STREAM_BYTES", "MAX_WORK_S", "check", "estimate"]
