#!/usr/bin/env bash
# One node at the hardware's limit: supergcn GCN 2×128 and SAGE 3×256 LayerNorm against the plain-PyTorch
# trainer (bench/train_torch.py) on the same generated graph, one process, T threads; dense GEMMs against torch.mm.
# Writes to $OUT: info.txt, gemm_supergcn.csv, gemm_torch.csv, gemm.csv, metrics_<model>.jsonl, torch_<model>.json,
# time_* (GNU time -v, or scripts/peak-rss.py where it is missing: peak RSS, CPU seconds), epochs.csv (median epoch s
# of epochs 2–5, peak RSS) and summary.md.
#
#   BIN      supergcn binary (default bin/supergcn)           OUT   output directory (default out/bench-single-node)
#   SPEC     `supergcn gen` spec (default products)           DATA  graph file (default build/bench-single-node/SPEC.sgb;
#   THREADS  threads (default: all cores)                            generated when absent, kept for the next run)
#   EPOCHS   epochs per run (default 5; TORCH_EPOCHS for the PyTorch trainer, default EPOCHS)
#   PY       python3 with torch (default python3)
#   (SPEC products is the ogbn-products-like preset, docs/GRAPHS.md; SPEC=sbm-products is the stochastic block
#   model of earlier runs; a cached DATA of another spec is generated again)
#   STEPS    what to run, comma separated (default info,gemm,supergcn,torch):
#            info | gemm (bench gemm + bench/gemm_torch.py) | supergcn (GCN and SAGE) | torch (both models)
#            | gcn | sage | gat (GAT 8 heads × 8) | torch-gcn | torch-sage | torch-gat (one model)
#            | pyg (PyG's layers, bench/pyg_train.py, on PYG_DEVICE, default cuda: GCN, SAGE and GAT)
#   TRAIN_FLAGS more supergcn train flags (e.g. --precision bf16); TORCH_FLAGS more bench/train_torch.py flags
#            (e.g. --precision bf16: torch.autocast to bfloat16)
#   GEMM_ROWS rows of the GEMM shapes (default: the graph's nodes)   GEMM_REPS timed repetitions (default 5)
# The 16-core box (products): STEPS=info,gemm,supergcn, then STEPS=torch-gcn and STEPS=torch-sage TORCH_EPOCHS=3, each
# under 10 min with the same OUT (the report merges what OUT holds; DATA survives while the machine stays warm).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/supergcn}
OUT=${OUT:-out/bench-single-node}
SPEC=${SPEC:-products}
THREADS=${THREADS:-$(nproc)}
EPOCHS=${EPOCHS:-5}
TORCH_EPOCHS=${TORCH_EPOCHS:-$EPOCHS}
PY=${PY:-python3}
STEPS=${STEPS:-info,gemm,supergcn,torch}
DATA_GIVEN=${DATA:+1}
DATA=${DATA:-build/bench-single-node/$(echo "$SPEC" | tr -c 'A-Za-z0-9=.\n' '_').sgb}
mkdir -p "$OUT" "$(dirname "$DATA")"
# Peak RSS and CPU seconds per run: GNU time, or scripts/peak-rss.py where it is missing (as the other scripts).
if [ -x /usr/bin/time ]; then TIMEV=(/usr/bin/time -v -o); else TIMEV=("$PY" scripts/peak-rss.py); fi
has() { [[ ",$STEPS," == *",$1,"* ]]; }
log() { echo "[bench-single-node $(date -u +%H:%M:%S)] $*"; }

# a cached graph of another spec (DATA.spec; a preset name's meaning can change) is generated again
if [ ! -f "$DATA" ] || { [ -z "$DATA_GIVEN" ] && [ "$(cat "$DATA.spec" 2>/dev/null)" != "$SPEC" ]; }; then
  log "generating $SPEC -> $DATA"
  "$BIN" gen --spec "$SPEC" --out "$DATA" | tee "$OUT/gen.txt"
  [ -n "$DATA_GIVEN" ] || echo "$SPEC" >"$DATA.spec"
fi
NODES=$("$PY" -c "import sys; sys.dont_write_bytecode = True; sys.path.insert(0,'bench'); import sgb; print(sgb.load('$DATA')['nodes'])")
GEMM_ROWS=${GEMM_ROWS:-$NODES}
GEMM_REPS=${GEMM_REPS:-5}

if has info; then
  { "$BIN" info --no-mpi; echo "threads: $THREADS; graph: $SPEC ($NODES nodes); $(nproc) cores";
    "$PY" -c "import torch; print('torch', torch.__version__, 'MKL' if torch.backends.mkl.is_available() else 'no MKL', torch.get_num_threads(), 'threads by default')" 2>/dev/null || true; } \
    | tee "$OUT/info.txt"
fi
if has gemm; then
  log "bench gemm, $GEMM_ROWS rows"
  "$BIN" bench gemm --rows "$GEMM_ROWS" --threads "$THREADS" --reps "$GEMM_REPS" --csv | tee "$OUT/gemm_supergcn.csv"
  "$PY" bench/gemm_torch.py --rows "$GEMM_ROWS" --threads "$THREADS" --reps "$GEMM_REPS" | tee "$OUT/gemm_torch.csv"
fi

GAT_FLAGS=(--heads 8) # GAT 8 heads × 8 (--hidden 8 is a head's width)
run_supergcn() { # model layers hidden norm [flags]
  log "supergcn $1 $2×$3 norm $4"
  rm -f "$OUT/metrics_$1.jsonl"
  # shellcheck disable=SC2086 # TRAIN_FLAGS is a list of flags
  "${TIMEV[@]}" "$OUT/time_supergcn_$1" "$BIN" train --data "$DATA" --model "$1" --layers "$2" --hidden "$3" \
    --norm "$4" "${@:5}" --epochs "$EPOCHS" --threads "$THREADS" --metrics "$OUT/metrics_$1.jsonl" ${TRAIN_FLAGS:-} 2>&1 | tee "$OUT/train_supergcn_$1.txt"
}
# run_py impl script model layers hidden norm [flags]: a Python trainer's run; its JSON summary into IMPL_MODEL.json
# (a model that does not fit a GPU ends with exit 3 and a summary that says so)
run_py() {
  log "$1 $3 $4×$5 norm $6"
  local rc=0
  "${TIMEV[@]}" "$OUT/time_$1_$3" "$PY" "$2" --data "$DATA" --model "$3" --layers "$4" --hidden "$5" --norm "$6" \
    "${@:7}" > "$OUT/train_$1_$3.txt" 2>&1 || rc=$?
  cat "$OUT/train_$1_$3.txt"
  [ "$rc" = 0 ] || [ "$rc" = 3 ] || { log "$1 $3 failed (exit $rc)"; return "$rc"; }
  grep '^{"impl"' "$OUT/train_$1_$3.txt" > "$OUT/$1_$3.json"
}
# shellcheck disable=SC2086 # TORCH_FLAGS is a list of flags
run_torch() { run_py torch bench/train_torch.py "$@" --epochs "$TORCH_EPOCHS" --threads "$THREADS" ${TORCH_FLAGS:-}; }
run_pyg() { run_py pyg bench/pyg_train.py "$@" --epochs "$TORCH_EPOCHS" --device "${PYG_DEVICE:-cuda}"; }
if has supergcn || has gcn; then run_supergcn gcn 2 128 none; fi
if has supergcn || has sage; then run_supergcn sage 3 256 layer; fi
if has gat; then run_supergcn gat 2 8 none "${GAT_FLAGS[@]}"; fi
if has torch || has torch-gcn; then run_torch gcn 2 128 none; fi
if has torch || has torch-sage; then run_torch sage 3 256 layer; fi
if has torch-gat; then run_torch gat 2 8 none "${GAT_FLAGS[@]}"; fi
if has pyg; then
  run_pyg gcn 2 128 none; run_pyg sage 3 256 layer; run_pyg gat 2 8 none "${GAT_FLAGS[@]}"
fi
"$PY" bench/report.py "$OUT"
