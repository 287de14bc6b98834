#!/usr/bin/env bash
# The papers100M-sized run of docs/SCALING.md on one big machine (a 64- or 128-core box with ~500 GB), in four steps
# that each skip what an earlier call finished (so it can run in several calls of a job-length limit while WORK lasts):
#   gen        supergcn gen --spec SPEC into WORK/graph.sgb (papers: 111,059,956 nodes, ~3.2 B arcs, 128 features)
#   partition  the multilevel partitioner under mpirun -np P into P parts, each P of PS (scripts/bench-partition-scaling.sh:
#              time, peak RSS per rank, edge cut, hybrid rows), kept as WORK/p-multilevel-P
#   train      every CONFIG at P ranks from that partition directory, EPOCHS epochs (evaluated at the last), peak RSS per
#              rank; metrics in OUT/train-P-CONFIG.jsonl
#   predict    supergcn predict for the same model, partition and bits on PROFILE (measured with `supergcn bench
#              profile` on this machine when PROFILE is unset and OUT/profile.json is absent), network shm
# and gathers OUT/results.csv (one row per P and CONFIG: measured and predicted epoch, stages, plan time, RSS).
#
#   WORK=/scratch/papers OUT=/scratch/papers/out PS="64 128" scripts/scale-papers.sh
#   STEPS="gen partition" PS=128 scripts/scale-papers.sh            # in pieces
#   SPEC=papers,nodes=20000 PS="2" EPOCHS=2 scripts/scale-papers.sh # the whole pipeline in a minute
#
# Environment (defaults in brackets): SPEC [papers], PS [64], CONFIGS [fp32 int2 int2lp] (fp32: --bits 32; int2:
# --bits 2 --intra-bits 2, every rank pair quantised as if each rank were a node; int2lp: int2 with --label-prop LP),
# LP [0.5], EPOCHS [5], MODEL_FLAGS [--model sage --layers 3 --hidden 128 --dropout 0.5] (train's and predict's),
# TRAIN_FLAGS [--lr 0.01] (train's only), THREADS [1] per rank, STEPS [gen partition train predict], PROFILE
# [OUT/profile.json], BIN [bin/supergcn], WORK [out/papers] (the graph and the partitions: hundreds of GB at full
# size), OUT [WORK/out], MPIRUN [mpirun]. The measured epoch is the mean of epochs 2..EPOCHS (the evaluation of the
# last included once), as predict --eval-every EPOCHS averages it.
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${SPEC:-papers} PS=${PS:-64} CONFIGS=${CONFIGS:-fp32 int2 int2lp} LP=${LP:-0.5} EPOCHS=${EPOCHS:-5}
MODEL_FLAGS=${MODEL_FLAGS:---model sage --layers 3 --hidden 128 --dropout 0.5} TRAIN_FLAGS=${TRAIN_FLAGS:---lr 0.01}
THREADS=${THREADS:-1} STEPS=${STEPS:-gen partition train predict}
BIN=${BIN:-bin/supergcn} WORK=${WORK:-out/papers} MPIRUN=${MPIRUN:-mpirun}
OUT=${OUT:-$WORK/out} PROFILE=${PROFILE:-$OUT/profile.json}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
die() { echo "scale-papers: $*" >&2; exit 2; }
[ -x "$BIN" ] || die "$BIN is not an executable (set BIN)"
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
for p in $PS; do [[ $p =~ ^[1-9][0-9]*$ ]] || die "PS: $p is not a rank count"; done
for c in $CONFIGS; do [[ $c =~ ^(fp32|int2|int2lp)$ ]] || die "CONFIGS: $c is not fp32, int2 or int2lp"; done
mkdir -p "$WORK" "$OUT"
if [ -x /usr/bin/time ]; then TIMEV="/usr/bin/time -v -o"; else TIMEV="python3 $PWD/scripts/peak-rss.py"; fi
has() { [[ " $STEPS " == *" $1 "* ]]; }
graph=$WORK/graph.sgb

if has gen && [ ! -f "$graph" ]; then
  echo "== gen --spec $SPEC"
  $TIMEV "$OUT/gen.time" "$BIN" gen --spec "$SPEC" --out "$graph.tmp" | tee "$OUT/gen.log"
  mv "$graph.tmp" "$graph"
  echo "$SPEC" >"$WORK/graph.spec"
fi
[ ! -f "$graph" ] || [ "$(cat "$WORK/graph.spec" 2>/dev/null)" = "$SPEC" ] ||
  die "$WORK holds a graph of another SPEC ($(cat "$WORK/graph.spec" 2>/dev/null)); use another WORK"

for p in $PS; do
  pdir=$WORK/p-multilevel-$p
  if has partition && [ ! -f "$pdir/meta.json" ]; then
    echo "== partition: multilevel, $p ranks, $p parts"
    GRAPH=$graph WORK=$WORK OUT=$OUT/partition-$p PS=$p PARTS=$p METHODS=multilevel SERIAL=0 KEEP=1 BIN=$BIN \
      scripts/bench-partition-scaling.sh
  fi
  has train || has predict || continue
  [ -f "$pdir/meta.json" ] || die "no partition $pdir (run the partition step)"
  for c in $CONFIGS; do
    case $c in
      fp32) bits=(--bits 32) ;;
      int2 | int2lp) bits=(--bits 2 --intra-bits 2) ;;
    esac
    lp=()
    [ "$c" != int2lp ] || lp=(--label-prop "$LP")
    m=$OUT/train-$p-$c.jsonl
    if has train && ! grep -q '"final"' "$m" 2>/dev/null; then
      echo "== train $c at $p ranks"
      rm -f "$m" "$OUT/train-$p-$c.time."*
      # shellcheck disable=SC2086
      TIMEV=$TIMEV $MPIRUN -np "$p" --bind-to none sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}; exec $TIMEV "$0.$r" "$@"' \
        "$OUT/train-$p-$c.time" "$BIN" train --partitions "$pdir" --threads "$THREADS" $MODEL_FLAGS $TRAIN_FLAGS "${bits[@]}" "${lp[@]}" \
        --epochs "$EPOCHS" --eval-every "$EPOCHS" --metrics "$m" 2>&1 | tee "$OUT/train-$p-$c.log"
    fi
    if has predict; then
      if [ ! -f "$PROFILE" ]; then
        echo "== bench profile (this machine) into $PROFILE"
        "$BIN" bench profile --cores "$(nproc)" --out "$PROFILE" >"$OUT/profile.log" 2>&1 || { cat "$OUT/profile.log" >&2; exit 1; }
      fi
      # shellcheck disable=SC2086
      "$BIN" predict --partitions "$pdir" --profile "$PROFILE" --network shm --ranks-per-node "$p" --threads "$THREADS" \
        $MODEL_FLAGS "${bits[@]}" --eval-every "$EPOCHS" --json >"$OUT/predict-$p-$c.json"
    fi
  done
done

# results.csv: measured (mean of epochs 2..EPOCHS, stages likewise) and predicted epoch per P and CONFIG.
python3 - "$OUT" "$PS" "$CONFIGS" <<'EOF'
import json, os, re, statistics, sys
out, ps, configs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
keys = ["epoch_s", "aggr_s", "comm_s", "quant_s", "dense_s", "sync_s"]
rows = ["ranks,config,epochs," + ",".join(keys) + ",plan_s,max_rss_mb,predicted_epoch_s"]
for p in ps:
    for c in configs:
        m = os.path.join(out, f"train-{p}-{c}.jsonl")
        if not os.path.exists(m):
            continue
        recs = [json.loads(l) for l in open(m) if l.strip()]
        ep = [r for r in recs if "epoch" in r and not r.get("header")]
        fin = [r for r in recs if r.get("final")]
        sel = [r for r in ep if r["epoch"] > 1] or ep
        med = [statistics.mean(r.get(k, 0) for r in sel) if sel else 0 for k in keys]
        kb = 0
        for f in os.listdir(out):
            if f.startswith(f"train-{p}-{c}.time."):
                for l in open(os.path.join(out, f)):
                    g = re.match(r"\s*Maximum resident set size \(kbytes\): (\d+)", l)
                    if g:
                        kb = max(kb, int(g.group(1)))
        pred = ""
        pf = os.path.join(out, f"predict-{p}-{c}.json")
        if os.path.exists(pf):
            lines = [json.loads(l) for l in open(pf) if l.strip()]
            if lines:
                pred = f"{lines[0].get('epoch_s', 0):.3f}"
        plan = f"{fin[0].get('plan_s', 0):.2f}" if fin else ""
        rows.append(f"{p},{c},{len(ep)}," + ",".join(f"{v:.3f}" for v in med) + f",{plan},{kb/1024:.0f},{pred}")
open(os.path.join(out, "results.csv"), "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
EOF
