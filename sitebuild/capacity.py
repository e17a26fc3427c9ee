"""The answers on "Serve a 70B model to 10,000 concurrent users" (topics/cluster/serve-70b/):
``contention plan --space`` on the ``serve-70b-slice`` preset, one call per GPU, SLO and router,
run once and kept in ``sitebuild/data/serve-70b.json``, which the build reads (it runs nothing).

A slice is 1,000 users. The page's answer for U users is U / 1,000 slices, each with the
replicas ``plan`` found for one: every session stays with its slice's router, as a prefix-aware
router keeps it with one replica. Pooling the slices behind one router can only help (the same
load on more replicas to choose from); ``check`` runs three slices pooled, at the answer's size,
and records whether they meet the SLO too.

    python -m sitebuild.capacity --update   # rerun every cell (about 4 min on 2 cores)

tests/test_capacity_page.py reruns two cells and the check against the file, as golden does.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data" / "serve-70b.json"
PRESET = "serve-70b-slice"
SLICE_USERS = 1000
VARY = "defaults.replicas=1:12"
SEEDS = 3
GPUS = ("H100-80GB", "H200")
ROUTERS = ("precise_prefix", "random", "round_robin")
SLOS = {  # name -> (label, targets)
    "chat": ("TTFT p90 under 0.5 s, TPOT p99 under 100 ms", ("ttft_p90<0.5", "tpot_p99<0.1")),
    "tight": ("TTFT p90 under 0.25 s, TPOT p99 under 75 ms", ("ttft_p90<0.25", "tpot_p99<0.075")),
}
POOLED = 3  # slices run as one cluster by ``check``


def command(gpu: str, slo: str, router: str) -> list[str]:
    """The ``contention plan`` arguments of one cell (what the page prints beside its answer)."""
    targets = [a for t in SLOS[slo][1] for a in ("--target", t)]
    return [
        "plan", PRESET, "--vary", VARY, "--space", f"defaults.gpu={gpu}", *targets,
        "--panel", router, "--seeds", str(SEEDS), "--drain",
    ]  # fmt: skip


def cell(gpu: str, slo: str, router: str, execute) -> dict:
    """One cell's answer, as ``plan --space --json`` gives it, less the probes' per-seed rows."""
    from sims.core import presets
    from sweep import deploy, plan

    targets = [plan.parse_target(t) for t in SLOS[slo][1]]
    r = deploy.search(presets.load(PRESET), VARY, [f"defaults.gpu={gpu}"], targets, SEEDS, router, execute, drain=True)
    keep = ("feasible", "config", "gpus", "usd_per_hour", "usd_per_month", "usd_per_mtok_out", "margins", "binding")
    out = {k: r[k] for k in keep if k in r}
    out["probes"] = [{"replicas": p["value"], "ok": p["ok"], "bounds": p["bounds"]} for p in r["probes"]]
    out["command"] = shlex.join(["contention", *command(gpu, slo, router)])  # quoted: "<" is a shell redirect
    return out


def check(replicas: int, gpu: str, slo: str, router: str, seeds=(7, 8)) -> dict:
    """POOLED slices as one cluster (POOLED x 1,000 users behind one router, POOLED x replicas):
    the SLO's figures per seed, drained, and whether each meets every target."""
    from sims.core import presets
    from sweep import plan

    p = presets.load(PRESET).with_overrides(
        {"workload.users": POOLED * SLICE_USERS, "defaults.replicas": POOLED * replicas, "defaults.gpu": gpu}
    )
    targets = [plan.parse_target(t) for t in SLOS[slo][1]]
    rows = []
    for seed in seeds:
        m = _drained(p, seed, router)
        rows.append(
            {"seed": seed, **{t.metric: m[t.metric] for t in targets}, "met": all(t.met(m[t.metric]) for t in targets)}
        )
    return {
        "users": POOLED * SLICE_USERS,
        "replicas": POOLED * replicas,
        "gpu": gpu,
        "slo": slo,
        "router": router,
        "runs": rows,
    }


def _drained(p, seed: int, panel: str) -> dict:
    from sims.core.scenario import Scenario

    return Scenario(p, seed, None, [panel], drain=True).run().metrics()[panel]


def build(execute) -> dict:
    cells = {}
    for gpu in GPUS:
        for slo in SLOS:
            for router in ROUTERS:
                key = f"{gpu}/{slo}/{router}"
                print(f"plan {key}", file=sys.stderr)
                cells[key] = cell(gpu, slo, router, execute)
    best = cells[f"{GPUS[0]}/chat/{ROUTERS[0]}"]
    return {
        "preset": PRESET,
        "slice_users": SLICE_USERS,
        "seeds": SEEDS,
        "gpus": list(GPUS),
        "routers": list(ROUTERS),
        "slos": {k: {"label": v[0], "targets": list(v[1])} for k, v in SLOS.items()},
        "cells": cells,
        "check": check(best["config"]["defaults.replicas"], GPUS[0], "chat", ROUTERS[0]),
    }


def load() -> dict:
    return json.loads(DATA.read_text())


USERS = tuple(range(SLICE_USERS, 20 * SLICE_USERS + 1, SLICE_USERS))  # the page's choices
DEFAULT = {"users": 10 * SLICE_USERS, "gpu": GPUS[0], "slo": "chat", "router": ROUTERS[0]}


def answer(data: dict, users: int, gpu: str, slo: str, router: str) -> dict:
    """The page's answer for ``users`` (a multiple of the slice): the cell's plan times the
    slices. capacity.js does the same multiplication in the browser (a test holds them equal)."""
    c = data["cells"][f"{gpu}/{slo}/{router}"]
    slices = users // data["slice_users"]
    if not c["feasible"]:
        return {"feasible": False, "binding": c["binding"], "command": c["command"]}
    per = c["config"]["defaults.replicas"]
    return {
        "feasible": True,
        "slices": slices,
        "replicas_per_slice": per,
        "replicas": slices * per,
        "gpus": slices * c["gpus"],
        "usd_per_hour": slices * c["usd_per_hour"],
        "usd_per_month": slices * c["usd_per_month"],
        "usd_per_mtok_out": c["usd_per_mtok_out"],
        "command": c["command"],
    }


def sentence(data: dict, users: int, gpu: str, slo: str, router: str) -> str:
    """The answer in one sentence, as the page prints it (capacity.js writes the same words)."""
    a = answer(data, users, gpu, slo, router)
    if not a["feasible"]:
        top = VARY.rpartition(":")[2]
        return (
            f"{users:,} users: no slice of up to {top} replicas meets {data['slos'][slo]['label']}; "
            f"{a['binding']} binds."
        )
    per_replica = a["gpus"] // a["replicas"]
    return (
        f"{users:,} users: {a['replicas']:,} replicas of {per_replica} {gpu} = {a['gpus']:,} GPUs, "
        f"${a['usd_per_hour']:,.0f} an hour, ${a['usd_per_month']:,.0f} a month, "
        f"${a['usd_per_mtok_out']:.2f} per million output tokens "
        f"({a['slices']} slices of {data['slice_users']:,} users, {a['replicas_per_slice']} replicas each)."
    )


def answers() -> dict:
    """What the page renders: the file, its choices, and the default answer (the text the page
    shows before any script runs)."""
    data = load()
    for gpu in data["gpus"]:
        for slo in data["slos"]:
            for router in data["routers"]:
                if f"{gpu}/{slo}/{router}" not in data["cells"]:
                    raise ValueError(f"{DATA}: no cell {gpu}/{slo}/{router}: run python -m sitebuild.capacity --update")
    table = [
        {"gpu": g, "slo": s, "router": r, **answer(data, DEFAULT["users"], g, s, r)}
        for s in data["slos"]
        for g in data["gpus"]
        for r in data["routers"]
    ]
    return {
        "data": data,
        "users": list(USERS),
        "top": int(VARY.rpartition(":")[2]),
        "default": DEFAULT,
        "answer": answer(data, **DEFAULT),
        "sentence": sentence(data, **DEFAULT),
        "table": table,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sitebuild.capacity", description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="rerun every cell and rewrite the file")
    ap.add_argument("--workers", type=int, default=None, help="local processes (default: every core)")
    args = ap.parse_args(argv)
    if not args.update:
        print(json.dumps(load(), indent=1))
        return 0
    from sweep import executors

    data = build(executors.pick(None, args.workers))
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {DATA}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
