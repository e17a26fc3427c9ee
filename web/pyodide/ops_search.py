"""Worker operations for "Find a workload that breaks this" (docs/search.md): an adversary search
over a preset page's own panels, run in chunks so the page can draw progress between them.

``search_info`` says whether the page's preset can be searched and what the search starts with;
``search_start`` builds it; ``search_run`` spends N more evaluations and returns the progress;
``search_result`` gives the best workload as the ``overrides`` the bridge's ``create`` takes
(``{"workload": {...}}``, which replaces the preset's generator, and ``controls`` without the
sliders of that generator where it had some: the page's duration and panels stay, so the page
plays it with no other change); ``search_drop`` forgets it.

On consensus, election and replication pages whose ``[site.search]`` names the policies to
break, it is "Find a schedule that breaks this": the CLI's fault schedule search, stopped at the
first schedule the objective scores above 0, whose result adds the schedule (as the CLI prints
it), what the safety checker caught, and a ``duration`` override (the schedule's own run, as the
search scored it; a replication schedule's faults come as ``events``).
"""

from __future__ import annotations

from typing import Any

from sims.adversary import SPECS, Problem, Search
from sims.adversary.shrink import shrink
from sims.core import presets

MAX_BUDGET = 50_000  # evaluations one page search may spend
MAX_LENGTH = 2_000  # references (arrivals) a found workload may hold: it travels in the URL
SHRINK_BUDGET = 5_000  # evaluations the page spends cutting a found workload down
# a short search per topic when the preset says nothing: (length, budget) from k
_SHORT = {
    "paging": lambda k: (40, 20_000),
    "cache": lambda k: (min(1_200, 6 * k), min(1_000, 300_000 // min(1_200, 6 * k))),
    "hashing": lambda k: (50, 300),
    "ratelimit": lambda k: (min(MAX_LENGTH, 4 * k), 2_000),
}

# a fault schedule search (the consensus topic's steps, sims/consensus/trials.py): (length, budget)
_SCHEDULES = {"consensus": (40, 2_000), "election": (40, 2_000), "replication": (40, 2_000)}
MAX_STEPS = 200  # steps a page's schedule may hold: each is one to three events in the URL

_SEARCHES: dict[str, tuple[Search, Any]] = {}  # id -> (search, the preset it runs over)


def _base(preset_name: str, overrides: dict | None):
    """The page's preset with its current overrides, except those of the workload it replaces."""
    p = presets.load(preset_name)
    keep = {k: v for k, v in (overrides or {}).items() if k != "workload" and not k.startswith("workload.")}
    return p.with_overrides(keep) if keep else p


def defaults(preset) -> dict:
    """What the page's search starts with: the preset's ``[site.search]`` (objective, size,
    length, budget), else the reverse of its claim (the claim says panel A beats panel B: find
    a workload on which B beats A by the most)."""
    if preset.topic in _SCHEDULES:
        return _schedule_defaults(preset)
    if preset.topic not in _SHORT:
        covered = sorted([*_SHORT, *_SCHEDULES])
        raise ValueError(f"the page's search covers {', '.join(covered)}, not {preset.topic}")
    spec = SPECS[preset.topic]
    own = preset.site.get("search") or {}
    objective, size = own.get("objective"), own.get("size")
    if objective is None:
        claim = preset.site.get("claim") or {}
        names = claim.get("panels") or []
        by_name = {p.name: p for p in preset.panels}
        if len(names) < 2 or not all(n in by_name for n in names[:2]):
            raise ValueError(f"{preset.name} states no claim between two panels: write an objective")
        a, b = by_name[names[0]], by_name[names[1]]
        sa, sb = spec.size_of(a.params), spec.size_of(b.params)
        if sa is None or sb is None:
            raise ValueError(f"{preset.name}: its claim's panels have no size to search over")
        if (a.policy, sa) == (b.policy, sb):
            raise ValueError(
                f"{preset.name}: its claim's panels differ in more than policy and size: write an objective"
            )
        m = claim.get("metric")
        better, worse = (f"{m}({b.policy}, {sb})", f"{m}({a.policy}, {sa})")
        objective = f"{better} - {worse}" if claim.get("higher_is_better", True) else f"{worse} - {better}"
        size = sa
    if size is None:
        size = next((s for s in (spec.size_of(p.params) for p in preset.panels) if s is not None), 4)
    length, budget = _SHORT[preset.topic](int(size))
    return {
        "searches": "workload",
        "objective": objective,
        "size": int(size),
        "length": min(MAX_LENGTH, int(own.get("length", length))),
        "budget": min(MAX_BUDGET, int(own.get("budget", budget))),
    }


def _schedule_defaults(preset) -> dict:
    """A fault schedule search's start: the preset's ``[site.search]`` names its objective, or
    "violations" and the ``policies`` whose safety checker counts (as the CLI's ``--objective
    violations --policies``); the size is the page's servers."""
    spec = SPECS[preset.topic]
    own = preset.site.get("search")
    if not own:
        raise ValueError(f"{preset.name}: a fault schedule search needs the page's [site.search] (its policies)")
    objective = str(own.get("objective", "violations"))
    size = next((s for s in (spec.size_of(p.params) for p in preset.panels) if s is not None), spec.default_size)
    if objective.strip() == "violations":
        policies = own.get("policies") or []
        if not policies:
            raise ValueError(f"{preset.name}: [site.search] objective 'violations' needs policies: whose to count")
        objective = " + ".join(f"{spec.violations_of(p)}({p})" for p in policies)  # the CLI's words
    length, budget = _SCHEDULES[preset.topic]
    return {
        "searches": "schedule",
        "objective": objective,
        "size": int(size),
        "length": min(MAX_STEPS, int(own.get("length", length))),
        "budget": min(MAX_BUDGET, int(own.get("budget", budget))),
    }


def _op_search_info(a: dict) -> dict:
    try:
        return {"supported": True, **defaults(_base(a["preset"], a.get("overrides")))}
    except ValueError as exc:
        return {"supported": False, "reason": str(exc)}


def _int(a: dict, key: str, default: int, top: int) -> int:
    v = a.get(key, default)
    if v is None:
        v = default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or not 1 <= v <= top:
        raise ValueError(f"{key}: expected an integer in [1, {top}], got {v!r}")
    return int(v)


def _op_search_start(a: dict) -> dict:
    preset = _base(a["preset"], a.get("overrides"))
    start = defaults(preset)
    seed = a.get("seed", preset.seed)
    problem = Problem(
        preset.topic,
        a.get("objective") or start["objective"],
        _int(a, "size", start["size"], 1_000_000),
        _int(a, "length", start["length"], MAX_STEPS if preset.topic in _SCHEDULES else MAX_LENGTH),
        seed=preset.seed if seed is None else int(seed),
        preset=preset,
    )
    search = Search(problem, _int(a, "search_seed", 1, 2**53 - 1), _int(a, "budget", start["budget"], MAX_BUDGET))
    _SEARCHES[a["id"]] = (search, preset)
    return {"objective": problem.objective.text, "size": problem.size, **search.state()}


def _search(a: dict) -> Search:
    try:
        return _SEARCHES[a["id"]][0]
    except KeyError:
        raise ValueError(f"no search {a.get('id')!r}: start it first") from None


def _op_search_run(a: dict) -> dict:
    """N more evaluations; a fault schedule search stops at its first violation, as the CLI's
    ``--shrink`` does (one is the claim broken: the shrink then makes it readable)."""
    s = _search(a)
    first = s.problem.spec.genome == "schedule"
    s.run(_int(a, "n", 200, MAX_BUDGET), until_found=first)
    state = s.state()
    return {**state, "done": state["done"] or (first and s.found)}


def _op_search_result(a: dict) -> dict:
    """The best workload found, shrunk (unless ``shrink`` is false) to a locally minimal one
    that still scores above 0, at most ``SHRINK_BUDGET`` evaluations."""
    s = _search(a)
    p = s.problem
    best, score, shrunk = s.best, s.best_score, None
    if s.found and a.get("shrink", True) is not False:
        out = shrink(p, best, SHRINK_BUDGET)
        best, score = out.genome, out.score
        shrunk = {"from": len(s.best), "to": len(best), "evaluations": out.evaluations, "minimal": out.minimal}
    metrics = p.metrics(best)
    overrides: dict[str, Any] = {"workload": p.layout.workload(best)}
    preset = _SEARCHES[a["id"]][1]
    controls = [dict(c) for c in preset.controls]
    if any(c["target"].startswith("workload.") for c in controls):  # sliders of the replaced generator go
        overrides["controls"] = [c for c in controls if not c["target"].startswith("workload.")]
    found: dict[str, Any] = {}
    if p.spec.genome == "schedule":  # the run lasts until the last step settles, as the search ran it
        overrides["duration"] = p.layout.run_length(best)
        if p.topic == "replication":  # its faults are the preset's [[events]]; the workload is the clients'
            overrides["events"] = p.layout.schedule(best)
        found = {"schedule": p.layout.schedule(best), "steps": len(best), "why": p.why(best)}
    return {
        **s.state(),
        **found,
        "best_score": score,
        "shrunk": shrunk,
        "objective": p.objective.text,
        "overrides": overrides,
        "panels": {plan.name: metrics[plan.name] for plan in p.panels},
    }


def _op_search_drop(a: dict) -> dict:
    _SEARCHES.pop(a.get("id"), None)
    return {}


OPS = {
    "search_info": _op_search_info,
    "search_start": _op_search_start,
    "search_run": _op_search_run,
    "search_result": _op_search_result,
    "search_drop": _op_search_drop,
}
