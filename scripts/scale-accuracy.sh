#!/usr/bin/env bash
# Accuracy at full size across job-length limits: trains each of CONFIGS on the graph SPEC up to EPOCHS, saving a
# checkpoint every SAVE_EVERY epochs, and stops cleanly when LIMIT seconds of this call are spent (train
# --stop-after: the epoch finishes, the checkpoint is written, exit 75). Run it again with the same WORK and each
# unfinished config continues from its checkpoint (train --resume), as jobs/slurm.sh's requeue does; a finished
# config is skipped. Each config's metrics accumulate in WORK/CONFIG.jsonl (a resumed run appends), its output in
# WORK/CONFIG.log.
#
#   CONFIGS="np16-fp32 np16-int2lp np1-fp32" LIMIT=540 scripts/scale-accuracy.sh          # SAGE 3×256 LN, products
#   SPEC=reddit CONFIGS="np16-fp32 np16-int2lp" scripts/scale-accuracy.sh
#   SPEC=products,nodes=20000 EPOCHS=3 EVAL_EVERY=1 CONFIGS="np2-fp32 np2-int2 np1-fp32" scripts/scale-accuracy.sh
#
# Configs: npP-fp32 (P ranks under mpirun, --bits 32), npP-int2 (--bits 2 --intra-bits 2: the rows of every rank
# pair quantised, as if each rank were a node), npP-int2lp (the same with --label-prop $LP), np1-fp32 (one process
# on every core, no MPI). Ranks partition the graph in memory (--partition-method multilevel) at every start.
# Environment (defaults in brackets): SPEC [products] (supergcn gen), MODEL_FLAGS [--model sage --layers 3
# --hidden 256 --norm layer --dropout 0.5 --lr 0.01], EPOCHS [100], EVAL_EVERY [10], SAVE_EVERY [10], LIMIT [0: no
# limit] seconds for this call (graph generation included), LP [0.5], BIN [bin/supergcn], WORK [out/scale]
# (graph.sgb made from SPEC when absent; a WORK whose graph has another SPEC is refused), MPIRUN [mpirun].
# WORK/accuracy.csv gathers every config's epochs (bench/metrics_csv.py) at the end of each call.
# Exit status: 0 when every config reached EPOCHS, 75 when LIMIT stopped one (run again), else the failure's.
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${SPEC:-products}
MODEL_FLAGS=${MODEL_FLAGS:---model sage --layers 3 --hidden 256 --norm layer --dropout 0.5 --lr 0.01}
EPOCHS=${EPOCHS:-100} EVAL_EVERY=${EVAL_EVERY:-10} SAVE_EVERY=${SAVE_EVERY:-10}
LIMIT=${LIMIT:-0} LP=${LP:-0.5}
CONFIGS=${CONFIGS:-np16-fp32 np16-int2lp np1-fp32}
BIN=${BIN:-bin/supergcn} WORK=${WORK:-out/scale} MPIRUN=${MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
start=$SECONDS
mkdir -p "$WORK"

die() { echo "scale-accuracy: $*" >&2; exit 2; }
graph=$WORK/graph.sgb
if [ -f "$graph" ]; then
  [ "$(cat "$WORK/graph.spec" 2>/dev/null)" = "$SPEC" ] || die "$WORK holds a graph of another SPEC ($(cat "$WORK/graph.spec" 2>/dev/null)); use another WORK"
else
  echo "== gen --spec $SPEC"
  "$BIN" gen --spec "$SPEC" --out "$graph.tmp"
  mv "$graph.tmp" "$graph"
  echo "$SPEC" >"$WORK/graph.spec"
fi

# run CONFIG: 0 when the config has reached EPOCHS (now or before), 75 when LIMIT stopped it.
run() {
  local cfg=$1 np bits ck=$WORK/$1.ckpt left flags=()
  [ -f "$WORK/$cfg.done" ] && { echo "== $cfg: done before"; return 0; }
  [[ $cfg =~ ^np([0-9]+)-(fp32|int2|int2lp)$ ]] || die "config $cfg is not npP-fp32, npP-int2 or npP-int2lp"
  np=${BASH_REMATCH[1]} bits=${BASH_REMATCH[2]}
  case $bits in
    fp32) flags=(--bits 32) ;;
    int2) flags=(--bits 2 --intra-bits 2) ;;
    int2lp) flags=(--bits 2 --intra-bits 2 --label-prop "$LP") ;;
  esac
  if [ "$LIMIT" -gt 0 ]; then
    left=$(( LIMIT - (SECONDS - start) ))
    [ "$left" -gt 60 ] || { echo "== $cfg: no time left in LIMIT"; return 75; }
    flags+=(--stop-after "$(( left - 30 ))s")
  fi
  if [ -f "$ck" ]; then
    flags+=(--data "$graph" --resume "$ck" --save "$ck")   # model and training settings come from the checkpoint
  else
    # shellcheck disable=SC2206
    flags+=(--data "$graph" $MODEL_FLAGS --eval-every "$EVAL_EVERY" --save "$ck")
  fi
  flags+=(--epochs "$EPOCHS" --save-every "$SAVE_EVERY" --metrics "$WORK/$cfg.jsonl")
  local cmd=("$BIN" train)
  if [ "$np" -gt 1 ]; then
    cmd=($MPIRUN -np "$np" --bind-to none "$BIN" train --threads 1 --partition-method multilevel)
  else
    cmd+=(--mpi off)
  fi
  echo "== $cfg: ${cmd[*]} ${flags[*]}"
  local rc=0
  "${cmd[@]}" "${flags[@]}" 2>&1 | tee -a "$WORK/$cfg.log" || rc=${PIPESTATUS[0]}
  case $rc in
    0) touch "$WORK/$cfg.done"; return 0 ;;
    75) return 75 ;;
    *) echo "scale-accuracy: $cfg failed with status $rc (log: $WORK/$cfg.log)" >&2; exit "$rc" ;;
  esac
}

# table: WORK/accuracy.csv from the metrics of every config run so far.
table() {
  local args=() f
  for f in "$WORK"/*.jsonl; do [ -f "$f" ] && args+=("$(basename "$f" .jsonl)=$f"); done
  [ ${#args[@]} -eq 0 ] || python3 bench/metrics_csv.py "${args[@]}" >"$WORK/accuracy.csv"
}

for cfg in $CONFIGS; do
  rc=0
  run "$cfg" || rc=$?
  [ "$rc" -eq 0 ] || { table; echo "== stopped by LIMIT=$LIMIT during $cfg; run again to continue"; exit 75; }
done
table
echo "== every config reached $EPOCHS epochs"
