"""Golden results: every preset's stream hash and metrics, one JSON line per preset.

    python scripts/golden.py            # compare with tests/golden/presets.jsonl, exit 1 on a change
    python scripts/golden.py --update   # rewrite it (only in a commit that says which issue and why)

One line per preset keeps merges of branches that change different presets clean.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sims.core import api, presets  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "presets.jsonl"


def compute(names: list[str] | None = None) -> dict[str, dict]:
    out = {}
    for name in names or presets.preset_names():
        r = api.run(name)
        out[name] = {"stream_sha256": r["stream_sha256"], "panels": r["panels"]}
    return out


def read() -> dict[str, dict]:
    rows = {}
    for line in GOLDEN.read_text().splitlines():
        row = json.loads(line)
        rows[row.pop("preset")] = row
    return rows


def main(argv: list[str]) -> int:
    got = compute()
    if "--update" in argv:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(
            "".join(json.dumps({"preset": k, **v}, sort_keys=True) + "\n" for k, v in sorted(got.items()))
        )
        print(f"wrote {len(got)} presets to {GOLDEN.relative_to(ROOT)}")
        return 0
    want = read()
    changed = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    for k in changed:
        print(f"changed: {k}")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
