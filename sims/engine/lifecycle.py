"""A request's life at the engine's exits, as records: the ``Record`` a completed request leaves,
and the request a prefill replica hands to a decode replica. The step loop (``Engine``) calls
these; neither touches the batch or the KV manager.
"""

from __future__ import annotations

from sims.engine.metrics import Record
from sims.engine.seq import Seq


def record_of(seq: Seq, now: float) -> Record | None:
    """The ``Record`` of ``seq``, completed at ``now``; a request with parallel samples completes
    with its last sample (None before that: the samples' shared group counts down)."""
    g = seq.group
    if g is not None:
        g[0] -= 1
        g[3] += seq.preemptions
        if g[0]:
            return None
        return Record(
            seq.rid,
            seq.arrival,
            seq.first_token,
            now,
            seq.prompt_len,
            seq.output_len * g[1],
            g[2],
            g[3],
            seq.tenant,
            g[1],
        )
    return Record(
        seq.rid,
        seq.arrival,
        seq.first_token,
        now,
        seq.prompt_len,
        seq.output_len,
        max(0, seq.cached_tokens),
        seq.preemptions,
        seq.tenant,
    )


def handoff_request(seq: Seq) -> dict:
    """role="prefill": the request a decode replica receives for ``seq``, whose first token is out."""
    req = {
        "id": seq.rid,
        "prompt_len": seq.prompt_len,
        "output_len": seq.output_len,
        "n": seq.samples,
        "max_tokens": seq.output_len,
        "tenant": seq.tenant,
        "segments": seq.segments,
        "prefilled": {
            "arrival": seq.arrival,
            "first_token": seq.first_token,
            "cached_tokens": max(0, seq.cached_tokens),
            "preemptions": seq.preemptions,
        },
    }
    if seq.session >= 0:
        req["session"], req["turn"] = seq.session, seq.turn
    return req
