"""The engine against Vidur in one sitting: ``run engine-vidur-10k --panels a100 --json`` and Vidur
0.0.26 on the same workload, run in turn, and the ratio of their median times (docs/benchmarks.md).

    VID=/tmp/vid python scripts/bench_vidur.py            # 3 rounds: Vidur, then ours, each round
    python scripts/bench_vidur.py --vid /tmp/vid --runs 5

``--vid DIR`` (or ``$VID``) is Vidur's folder as docs/benchmarks.md sets it up: ``DIR/.venv`` holds
vidur 0.0.26, ``DIR/run/.vidur_cache`` its offline profiling cache (trained by a first run, which
this script makes and does not time). Each run's wall time and CPU seconds (user + system, of the
process and its children) are reported; on a shared machine a run waits for a core, so the CPU
ratio moves less than the wall one. Our bytecode caches are warmed first and
``PYTHONDONTWRITEBYTECODE`` dropped, so no run compiles.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = [sys.executable, "-m", "sims", "run", "engine-vidur-10k", "--panels", "a100", "--json"]
# Vidur's 10,000 requests of 512 + 128 tokens at 12 req/s, Llama-3-8B on one A100, its vLLM
# scheduler, random-forest step times over the cached profiles, no plots or traces written
VIDUR_ARGS = """--seed 42 --replica_config_model_name meta-llama/Llama-3-8B --replica_config_device a100
 --replica_config_network_device a100_dgx --replica_config_tensor_parallel_size 1
 --replica_config_num_pipeline_stages 1 --cluster_config_num_replicas 1
 --request_generator_config_type synthetic --synthetic_request_generator_config_num_requests 10000
 --length_generator_config_type fixed --fixed_request_length_generator_config_prefill_tokens 512
 --fixed_request_length_generator_config_decode_tokens 128 --interval_generator_config_type poisson
 --poisson_request_interval_generator_config_qps 12 --replica_scheduler_config_type vllm
 --execution_time_predictor_config_type random_forrest
 --random_forrest_execution_time_predictor_config_model_profiling_dataset local/meta-llama-3-8b-a100
 --random_forrest_execution_time_predictor_config_network_profiling_dataset local/a100-dgx
 --random_forrest_execution_time_predictor_config_num_estimators 250
 --random_forrest_execution_time_predictor_config_max_depth 16
 --random_forrest_execution_time_predictor_config_min_samples_split 2
 --random_forrest_execution_time_predictor_config_k_fold_cv_splits 2
 --random_forrest_execution_time_predictor_config_prediction_max_tokens_per_request 4096
 --no-metrics_config_store_plots --no-metrics_config_enable_chrome_trace""".split()


def timed(cmd: list[str], cwd: Path, env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``cmd``; a failed run stops the sitting."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vid", default=os.environ.get("VID", ""), help="Vidur's folder (.venv, run/.vidur_cache)")
    ap.add_argument("--runs", type=int, default=3, help="rounds, each one run of Vidur and one of ours")
    args = ap.parse_args()
    vid = Path(args.vid or "vid").resolve()
    python = vid / ".venv" / "bin" / "python"
    run_dir = vid / "run"
    if not python.exists() or not (run_dir / ".vidur_cache").is_dir():
        ap.error(f"{vid}: no Vidur here (needs .venv/bin/python and run/.vidur_cache; docs/benchmarks.md)")
    out = vid / "out"
    vidur = [str(python), "-m", "vidur.main", *VIDUR_ARGS, "--metrics_config_output_dir", str(out)]
    vidur_env = dict(os.environ, WANDB_MODE="disabled", HF_HUB_OFFLINE="1")
    ours_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ours_env["PYTHONPATH"] = str(ROOT)
    timed(OURS, ROOT, ours_env)  # bytecode caches
    timed(vidur, run_dir, vidur_env)  # trains Vidur's models on a cold cache, warms the page cache
    load0 = os.getloadavg()
    runs: dict[str, list[tuple[float, float]]] = {"vidur": [], "ours": []}
    for _ in range(args.runs):
        runs["vidur"].append(timed(vidur, run_dir, vidur_env))
        runs["ours"].append(timed(OURS, ROOT, ours_env))
    load1 = os.getloadavg()
    med = {}
    for name, rs in runs.items():
        med[name] = (statistics.median(w for w, _ in rs), statistics.median(c for _, c in rs))
        each = " ".join(f"{w:.3f}/{c:.3f}" for w, c in rs)
        print(f"{name}: wall {med[name][0]:.3f} s, CPU {med[name][1]:.3f} s (median of {len(rs)}; wall/CPU {each})")
    for i, what in enumerate(("wall", "CPU")):
        rounds = " ".join(f"{v[i] / o[i]:.1f}" for v, o in zip(runs["vidur"], runs["ours"], strict=True))
        print(f"ratio, {what}: {med['vidur'][i] / med['ours'][i]:.1f}x (medians; per round {rounds})")
    print(
        f"load average (1, 5, 15 min): before {' '.join(f'{x:.2f}' for x in load0)}, after {' '.join(f'{x:.2f}' for x in load1)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
