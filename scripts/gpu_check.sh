#!/usr/bin/env bash
# Every GPU check in one run of at most ~8 minutes; results in DIR/gpu_check.json.
#   scripts/gpu_check.sh [DIR]      (DIR defaults to $OUT, else gpu_results/)
# Stages (each with its own time limit; a stage that fails or times out is recorded, the rest run):
#   env, kernel cases vs float64 (fp16/bf16, GQA 1/4/8, split-K off/auto/7), compute-sanitizer memcheck
#   on three small cases, the bench grid (HBM read sweep, decode attention, paged vs identity table,
#   SDPA), a full-model replay of chunked-prefill + calibration, attention-only replays of
#   kv-fragmentation (paged vs contiguous_max).
# Runs from the repository root with PYTHONPATH=. (no `pip install -e .` needed): python >= 3.11,
# torch and triton already installed (the H200 image: torch 2.11 + triton 3.6, Python 3.12).
set -u
cd "$(dirname "$0")/.."
DIR=${1:-${OUT:-gpu_results}}
mkdir -p "$DIR"
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}"
unset TRITON_INTERPRET
PY=${PYTHON:-python3}
: > "$DIR/stages.jsonl"

stage() {  # stage NAME SECONDS CMD...: stdout -> DIR/NAME.out, stderr -> DIR/NAME.err
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s)
  echo "== $name (limit ${limit}s)" >&2
  timeout --kill-after=10 "$limit" "$@" > "$DIR/$name.out" 2> "$DIR/$name.err"
  rc=$?
  echo "{\"stage\": \"$name\", \"rc\": $rc, \"seconds\": $(( $(date +%s) - start ))}" >> "$DIR/stages.jsonl"
  tail -n 3 "$DIR/$name.err" >&2
}

stage env 20 "$PY" -c '
import json, platform, subprocess, torch, triton, numpy
try:
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version,clocks.max.memory",
                          "--format=csv,noheader"], capture_output=True, text=True, timeout=15).stdout.strip()
except (OSError, subprocess.TimeoutExpired) as exc:
    smi = f"nvidia-smi unavailable: {exc}"
print(json.dumps({"python": platform.python_version(), "torch": torch.__version__, "triton": triton.__version__,
                  "numpy": numpy.__version__, "cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
                  "device": torch.cuda.get_device_name() if torch.cuda.is_available() else None, "nvidia_smi": smi}))'

stage kernels 110 "$PY" -m gpu_backend.kernel_checks --device cuda

SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
if [ -n "$SAN" ]; then
  # no caching allocator: every tensor is its own allocation, so memcheck sees out-of-bounds accesses
  stage sanitizer 80 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$SAN" --tool memcheck --error-exitcode 3 \
    "$PY" -m gpu_backend.kernel_checks --device cuda decode-fp16-g4-bs32-empty kvwrite-bf16-bs16 extend-fp16-g4-bs16
else
  echo '{"stage": "sanitizer", "rc": null, "skipped": "compute-sanitizer not found"}' >> "$DIR/stages.jsonl"
fi

stage bench 80 "$PY" -m gpu_backend.cli bench --batches 1,8,32,64,128 --contexts 512,1024,4096,8192 \
  --json --out "$DIR/bench.json"

stage replay_full 100 "$PY" -m gpu_backend.cli replay chunked-prefill --panel budget-2048 --duration 40 \
  --max-steps 1500 --full-model --json --out "$DIR/replay_full.json"
stage calibrate 20 "$PY" -m gpu_backend.cli calibrate --from "$DIR/replay_full.json" \
  --profile-out "$DIR/efficiency.calibrated.toml" --json --out "$DIR/calibrate.json"

stage replay_paged 30 "$PY" -m gpu_backend.cli replay kv-fragmentation --panel paged --duration 120 \
  --max-steps 600 --json --out "$DIR/replay_paged.json"
stage replay_contiguous 30 "$PY" -m gpu_backend.cli replay kv-fragmentation --panel contiguous_max \
  --duration 120 --max-steps 600 --json --out "$DIR/replay_contiguous.json"

"$PY" -m gpu_backend.check_report "$DIR"
