#!/usr/bin/env bash
# Benchmarks (numbers, never pass/fail), as `make bench` runs them after `make build`.
#   THREADS (default: all cores), BENCH_QUICK=1 for smaller sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${SUPERGCN_BIN:-bin/supergcn}
T=${THREADS:-$(nproc)}
step() { printf '\n=== %s\n' "$*"; }
if [ "${BENCH_QUICK:-0}" = 1 ]; then N=100000; E=2000000; GN=200000; else N=200000; E=4000000; GN=1000000; fi

$BIN info

step "aggregation kernels: random graph N=$N E=$E F=128, $T threads"
$BIN bench aggr --graph random --nodes $N --edges $E --width 128 --threads "$T"
step "aggregation kernels: power-law graph N=$N E=$E F=128, $T threads"
$BIN bench aggr --graph powerlaw --nodes $N --edges $E --width 128 --threads "$T"
step "memory bandwidth (STREAM-like), $T threads"
$BIN bench stream --threads "$T"

step "quantisation: quantize+pack and unpack+dequantize throughput (GB/s of fp32 rows), $T threads"
$BIN bench quant --rows 200000 --width 128 --threads "$T"

step "GCN epoch time: 2 layers, hidden 128, synthetic graph of $GN nodes (degree 16, 64 features), $T threads"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
$BIN train --synthetic nodes=$GN,degree=16,classes=8,feat=64,seed=1 --model gcn --layers 2 --hidden 128 \
  --epochs 6 --threads "$T" --metrics "$tmp/gcn.jsonl" --quiet
awk -F'"epoch_s":' 'NR > 1 && /"epoch_s"/ { split($2, a, ","); s += a[1]; n++ }
  END { if (n) printf "GCN 2-layer epoch (training step + evaluation pass), mean of epochs 2-6: %.3f s\n", s / n }' "$tmp/gcn.jsonl"

if { /usr/bin/python3 -c 'import torch' || python3 -c 'import torch'; } 2>/dev/null && [ -f ../shared/bench/torch_spmm_baseline.py ]; then
  step "supergcn vs PyTorch aggregation, $T threads"
  THREADS=$T SUPERGCN_BIN=$BIN scripts/bench-aggr-vs-torch.sh
else
  echo "(PyTorch baseline skipped: python3-torch or ../shared/bench/torch_spmm_baseline.py not found)"
fi
