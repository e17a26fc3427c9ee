"""``contention replay`` (its parser is in sims/cli/edges.py)."""

from __future__ import annotations

import argparse
import json
import signal

from realsys import replay, servers
from sims.core import presets
from sims.core.limits import InputError


def _stop(signum, frame) -> None:  # noqa: ANN001
    raise SystemExit(128 + signum)  # unwinds, so the server is stopped and its folder removed


def cmd_replay(args: argparse.Namespace, table) -> int:
    signal.signal(signal.SIGTERM, _stop)  # as on Ctrl-C: a killed replay leaves no server behind
    preset = presets.load(args.preset)  # a name, or the path of a .toml file
    try:
        result = replay.run(preset, args.against, args.speed, args.address, args.seed, args.duration)
    except (servers.RealError, ConnectionError, OSError) as exc:
        raise InputError(f"replay against {args.against}: {exc}") from None
    if args.json:
        print(json.dumps(result))
    else:
        print(table(result))
        for label, rows in result.get("disagreements", {}).items():
            print(f"{label}: {len(rows)} decisions differ from the model on the stream's times")
    return 0
