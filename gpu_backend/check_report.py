"""Merge the stage outputs of ``scripts/gpu_check.sh`` into one JSON report with the issue's targets.

``python -m gpu_backend.check_report DIR`` reads DIR/{stages.jsonl, env.out, kernels.out,
sanitizer.out/err, bench.json, replay_*.json, calibrate.json} (any may be missing: a stage that
timed out or crashed) and writes DIR/gpu_check.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TARGETS = {
    "decode_frac_measured_hbm_b64_c4096": 0.70,  # at least
    "paged_overhead_b64_c4096": 0.10,  # at most
    "calibrated_decode_mean_abs_rel_err": 0.10,  # at most
}


def _json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _lines(path: Path) -> list[dict]:
    out = []
    try:
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    except OSError:
        pass
    return out


def build(d: Path) -> dict:
    report: dict = {"stages": _lines(d / "stages.jsonl"), "env": _json(d / "env.out")}
    cases = [r for r in _lines(d / "kernels.out") if "ok" in r]
    report["kernels"] = {
        "cases": len(cases),
        "passed": sum(r["ok"] for r in cases),
        "failed": [r for r in cases if not r["ok"]],
        "max_err": max((r["max_err"] or 0.0 for r in cases), default=None),
    }
    san_text = ""
    for name in ("sanitizer.out", "sanitizer.err"):
        try:
            san_text += (d / name).read_text()
        except OSError:
            pass
    summary = [line for line in san_text.splitlines() if "ERROR SUMMARY" in line]
    report["sanitizer"] = {
        "summary": summary[-1].strip() if summary else None,
        "cases": [r for r in _lines(d / "sanitizer.out") if "ok" in r],
    }
    bench = _json(d / "bench.json")
    report["bench"] = bench
    measured: dict = {}
    if bench:
        for row in bench["rows"]:
            if row["batch"] == 64 and row["context"] == 4096:
                measured["decode_frac_measured_hbm_b64_c4096"] = row["frac_measured_hbm"]
                measured["decode_frac_datasheet_b64_c4096"] = row["frac_datasheet"]
                measured["paged_overhead_b64_c4096"] = row["paged_overhead"]
        if bench["rows"]:
            measured["paged_overhead_max"] = max(r["paged_overhead"] for r in bench["rows"])
        measured["hbm_read_bytes_s"] = bench["hbm"]["read_bytes_s"]
        measured["hbm_copy_bytes_s"] = bench["hbm"]["copy_bytes_s"]
    replays = {}
    for f in sorted(d.glob("replay_*.json")):
        r = _json(f)
        if r:
            replays[f.stem] = {
                k: r.get(k) for k in ("preset", "panel", "allocator", "full_model", "t_end", "gpu", "sim", "truncated")
            }
    report["replays"] = replays
    cal = _json(d / "calibrate.json")
    report["calibrate"] = cal
    if cal:
        measured["calibrated_decode_mean_abs_rel_err"] = cal.get("decode_mean_abs_rel_err_after")
        measured["calibrated_mean_abs_rel_err"] = cal.get("mean_abs_rel_err_after")
    report["measured"] = measured
    verdict = {}
    for key, bound in TARGETS.items():
        value = measured.get(key)
        if value is None:
            verdict[key] = "missing"
        elif key.startswith("decode_frac"):
            verdict[key] = "met" if value >= bound else "missed"
        else:
            verdict[key] = "met" if value <= bound else "missed"
    report["targets"] = {"bounds": TARGETS, "verdict": verdict}
    return report


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m gpu_backend.check_report DIR", file=sys.stderr)
        return 2
    d = Path(argv[0])
    report = build(d)
    (d / "gpu_check.json").write_text(json.dumps(report, indent=1))
    print(
        json.dumps(
            {
                "kernels": {k: report["kernels"][k] for k in ("cases", "passed")},
                "sanitizer": report["sanitizer"]["summary"],
                "measured": report["measured"],
                "targets": report["targets"]["verdict"],
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
