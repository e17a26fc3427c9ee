#!/usr/bin/env bash
# The two questions of docs/sweeps.md, end to end (about 15 CPU minutes on 2 cores).
#   bash scripts/sweeps_doc.sh OUTDIR
set -euo pipefail
out=${1:-sweeps-out}
mkdir -p "$out"
py=${PYTHON:-python}
# 1. How many replicas keep P90 TTFT (over every arrival) under 1 s, per router?
for router in precise_prefix estimated_prefix random load_only; do
  $py -m sims plan routing-llmd-short --vary defaults.replicas=4:16 --target "ttft_p90<1.0" --drain \
    --seeds 5 --panel "$router" --workers 2 > "$out/plan-$router.txt"
done
# 2. Which chunked-prefill budget gives the lowest ITL p99 while P90 TTFT stays under 0.5 s?
$py -m sims sweep chunked-prefill --grid panels.budget-2048.max_num_batched_tokens=512,1024,2048,4096,8192 \
  --seeds 5 --panels budget-2048 --metrics itl_p99,ttft_p90,tpot_p99 --drain --workers 2 \
  --out "$out/chunked.jsonl" --plot "$out/chunked.html" > "$out/chunked.txt"
$py -m sims plan chunked-prefill --vary panels.budget-2048.max_num_batched_tokens=512:8192:512 \
  --target "ttft_p90<0.5" --drain --seeds 5 --panel budget-2048 --workers 2 > "$out/plan-chunked.txt"
