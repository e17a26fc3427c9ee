"""Per-panel speed in CPU seconds (time.process_time), for a machine shared with other work.

    python scripts/bench_cpu.py queues-hockey-stick queues-pooling ...

Each panel runs alone over the preset's stream (built once, outside the clock), three times; the
median is reported as stream events per CPU second. ``contention bench`` measures wall time,
which on a loaded machine says more about the load than about the code.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sims.core import presets  # noqa: E402
from sims.core.scenario import Scenario  # noqa: E402


def measure(name: str, runs: int = 3) -> dict:
    p = presets.load(name)
    events = Scenario(p).events
    out = {}
    for spec in p.panels:
        times = []
        for _ in range(runs):
            sc = Scenario(p, panels=[spec.name], events=events)
            t0 = time.process_time()
            sc.run()
            times.append(time.process_time() - t0)
        out[spec.name] = round(sc.events_done / statistics.median(times))
    return {"events": sc.events_done, "events_per_cpu_s": out}


if __name__ == "__main__":
    names = sys.argv[1:] or presets.preset_names()
    print(json.dumps({n: measure(n) for n in names}, indent=2))
