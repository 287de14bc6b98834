#!/usr/bin/env bash
# Compare supergcn's aggregation with PyTorch on the same graph:
#   torch.sparse.mm(A_csr, x) and index_add_(0, dst, x[src])   (shared/bench/torch_spmm_baseline.py)
#   supergcn bench aggr --graph random                          (same N, E, F, uniform random edges)
# then our power-law graph, the backward operators, and the STREAM roofline.
#
# Environment (all optional):
#   THREADS       threads for both sides (default 2)
#   SUPERGCN_BIN  prebuilt supergcn binary (default bin/supergcn, built with `go build` when missing)
#   PYTHON        python with torch (default /usr/bin/python3 when it imports torch, else python3)
#   BASELINE      path of torch_spmm_baseline.py (default ../shared/bench/torch_spmm_baseline.py from the repo root)
#   TORCH_ONLY    methods of the baseline to run (default "i,ii"; "i,i',ii" adds dst-sorted index_add_)
#   REPS          our timed repetitions (default 5)
#   KERNEL        force our kernel (default: best for the CPU)
#   HUGEPAGES=1   back our x/out with transparent huge pages (bench aggr --hugepages)
#   SKIP_POWERLAW=1 skips the power-law run.
# The baseline fixes N=200000, E=4000000, F=128; we use the same.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

THREADS=${THREADS:-2}
REPS=${REPS:-5}
BASELINE=${BASELINE:-$root/../shared/bench/torch_spmm_baseline.py}
TORCH_ONLY=${TORCH_ONLY:-i,ii}
N=200000 E=4000000 F=128

if [[ -z "${PYTHON:-}" ]]; then
	if /usr/bin/python3 -c 'import torch' 2>/dev/null; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
if [[ -z "${SUPERGCN_BIN:-}" ]]; then
	SUPERGCN_BIN=$root/bin/supergcn
	if [[ ! -x $SUPERGCN_BIN ]]; then
		echo "building $SUPERGCN_BIN" >&2
		go build -o "$SUPERGCN_BIN" ./cmd/supergcn
	fi
fi
[[ -f $BASELINE ]] || { echo "bench-aggr-vs-torch: BASELINE $BASELINE not found" >&2; exit 1; }
"$PYTHON" -c 'import torch' || { echo "bench-aggr-vs-torch: $PYTHON cannot import torch (apt-get install python3-torch)" >&2; exit 1; }

kernel_flag=()
[[ -n "${KERNEL:-}" ]] && kernel_flag=(--kernel "$KERNEL")
[[ "${HUGEPAGES:-0}" == 1 ]] && kernel_flag+=(--hugepages)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== torch ($PYTHON, BENCH_THREADS=$THREADS, BENCH_ONLY=$TORCH_ONLY)"
BENCH_THREADS=$THREADS BENCH_ONLY=$TORCH_ONLY "$PYTHON" "$BASELINE" | tee "$tmp/torch.txt"

echo "== supergcn ($SUPERGCN_BIN, --threads $THREADS)"
"$SUPERGCN_BIN" bench aggr --graph random --nodes $N --edges $E --width $F --threads "$THREADS" \
	--reps "$REPS" --stream --json "${kernel_flag[@]}" | tee "$tmp/ours.jsonl"
if [[ "${SKIP_POWERLAW:-0}" != 1 ]]; then
	"$SUPERGCN_BIN" bench aggr --graph powerlaw --nodes $N --edges $E --width $F --threads "$THREADS" \
		--reps "$REPS" --stream --json "${kernel_flag[@]}" | tee "$tmp/powerlaw.jsonl"
else
	: >"$tmp/powerlaw.jsonl"
fi

"$PYTHON" - "$tmp/torch.txt" "$tmp/ours.jsonl" "$tmp/powerlaw.jsonl" <<'PY'
import json, re, sys
torch, torch_min = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*\(([^)]*)\)\s.*?median\s+([0-9.]+) ms\s+\(runs ([0-9., ]+)\)", line)
    if m:
        torch[m.group(1)] = float(m.group(2))
        torch_min[m.group(1)] = min(float(t) for t in m.group(3).split(","))
def load(p):
    return {r["op"]: r for r in map(json.loads, filter(str.strip, open(p)))}
ours, pl = load(sys.argv[2]), load(sys.argv[3])
any_ = next(iter(ours.values()))
print()
print(f"== summary: N={any_['nodes']} E={any_['edges']} F={any_['width']} threads={any_['threads']} kernel={any_['kernel']}"
      f" STREAM triad {any_.get('stream_triad_gbs', 0):.1f} GB/s")
names = {"i": "index_add_(0,dst,x[src])", "i'": "index_add_ dst-sorted", "ii": "torch.sparse.mm(A_csr,x)"}
for k, v in torch.items():
    print(f"torch {names.get(k, k):28s} {v:9.1f} ms")
print(f"{'ours':6s}{'op':12s}{'graph':10s}{'median_ms':>10s}{'GUPS':>8s}{'GB/s':>8s}{'%STREAM':>9s}")
for g, rs in (("random", ours), ("powerlaw", pl)):
    for op, r in rs.items():
        print(f"{'':6s}{op:12s}{g:10s}{r['median_ms']:10.2f}{r['gups']:8.2f}{r['gbs']:8.1f}{100*r.get('stream_fraction', 0):8.0f}%")
print(f"speed-up (torch time / our time){'':28s}{'median':>8s}{'min':>9s}")
def ratio(op, t, label):
    r = ours.get(op)
    if r is not None and t in torch:
        print(f"  {label:56s} {torch[t]/r['median_ms']:7.2f}x {torch_min[t]/r['min_ms']:7.2f}x")
ratio("spmm", "ii", "spmm (ours) vs torch.sparse.mm")
ratio("spmm", "i", "spmm (ours) vs index_add_")
ratio("index_add", "i", "index_add (ours, prepared) vs index_add_")
ratio("index_add", "i'", "index_add (ours, prepared) vs index_add_ dst-sorted")
ratio("spmm_t", "ii", "spmm_t (ours, backward) vs torch.sparse.mm")
PY
