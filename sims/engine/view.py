"""What the browser draws for one engine: a bounded memory map, queues and the step timeline."""

from __future__ import annotations

from sims.engine.seq import DECODE, STATE_NAMES

MAP_CELLS = 512  # memory map cells, at most
QUEUE_ROWS = 24  # rows per queue
TABLE_BLOCKS = 32  # block-table entries shown per running request

FREE, CACHED, SHARED = -1, -2, -3  # memory-map cell codes besides a request id


def memory_map(engine) -> dict:
    """Cells over the KV memory: a request id, FREE, CACHED (free but still a prefix-cache entry)
    or SHARED (a block several requests point at). Downsampled to at most MAP_CELLS cells."""
    alloc = engine.alloc
    cells = alloc.cells(engine.holders(), MAP_CELLS)
    n = alloc.num_units
    unit = alloc.B if alloc.paged else 1
    return {"cells": cells, "cell_tokens": unit * n / len(cells), "units": n, "unit_tokens": unit}


def engine_view(engine, small: bool = False) -> dict:
    gen = engine.generated_of
    running = []
    for q in engine.holders()[:QUEUE_ROWS]:
        g = gen(q)
        running.append(
            {
                "id": q.rid,
                "state": STATE_NAMES[q.state],
                "prompt": q.prompt_len,
                "generated": g,
                "output": q.output_len,
                "context": q.prompt_len + g if q.state == DECODE else q.computed,
                "reserved": q.reserved,
                "table": list(engine.alloc.table(q))[:TABLE_BLOCKS],
                "preemptions": q.preemptions,
            }
        )
    waiting = [
        {
            "id": q.rid,
            "state": STATE_NAMES[q.state],
            "prompt": q.prompt_len,
            "generated": q.generated,
            "wait": max(0.0, engine.now - q.arrival),
        }
        for q in engine.waiting_seqs()[:QUEUE_ROWS]
    ]
    out = {
        "kind": "engine",
        "t": engine.now,
        "allocator": engine.config.allocator,
        "scheduler": engine.config.scheduler,
        "capacity_tokens": engine.alloc.capacity,
        "block_size": engine.block_size,
        "kv_usage": engine.kv_usage,
        "num_running": engine.num_running,
        "num_waiting": engine.num_waiting,
        "running": running,
        "waiting": waiting,
        "steps": [list(s) for s in engine.recent],
        "preemptions": [list(p) for p in engine.preempt_log],
    }
    if not small:
        out["memory"] = memory_map(engine)
    return out
