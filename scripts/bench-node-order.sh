#!/usr/bin/env bash
# Local node order (train --node-order): the aggregation kernel under each order (supergcn bench order) and
# the GCN 2×128 and SAGE 3×256 LayerNorm epochs with and without the reordering, one process, T threads, on one
# generated graph. Writes to $OUT: info.txt, order.txt (+ order.jsonl), metrics_<model>_<order>.jsonl,
# train_<model>_<order>.txt, epochs.csv (medians of epochs 2..EPOCHS) and summary.md.
#
#   BIN      supergcn binary (default bin/supergcn)      OUT    output directory (default out/bench-node-order)
#   SPEC     `supergcn gen` spec (default products)      DATA   graph file (default build/bench-node-order/SPEC.sgb;
#   THREADS  threads (default: all cores)                       generated when absent, kept for the next run)
#   EPOCHS   epochs per training run (default 5)         ORDERS orders to train with (default given,cluster)
#   BENCH_ORDERS orders for bench order (default all)    WIDTHS widths for bench order (default 47,100,256)
#   REPS     repetitions of bench order (default 5)      PY     python3 (default python3)
#   STEPS    what to run, comma separated (default info,order,gcn,sage): info | order (bench order) | gcn | sage
#   (SPEC products is the ogbn-products-like preset, docs/GRAPHS.md; SPEC=sbm-products is the stochastic block
#   model of earlier runs; a cached DATA of another spec is generated again)
# The 16-core box (products), each under 10 min with the same OUT: STEPS=info,order then STEPS=gcn then STEPS=sage
# (the summary merges what OUT holds; DATA survives while the machine stays warm).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/supergcn}
OUT=${OUT:-out/bench-node-order}
SPEC=${SPEC:-products}
THREADS=${THREADS:-$(nproc)}
EPOCHS=${EPOCHS:-5}
ORDERS=${ORDERS:-given,cluster}
BENCH_ORDERS=${BENCH_ORDERS:-given,degree,rcm,cluster}
WIDTHS=${WIDTHS:-47,100,256}
REPS=${REPS:-5}
PY=${PY:-python3}
STEPS=${STEPS:-info,order,gcn,sage}
DATA_GIVEN=${DATA:+1}
DATA=${DATA:-build/bench-node-order/$(echo "$SPEC" | tr -c 'A-Za-z0-9=.\n' '_').sgb}
mkdir -p "$OUT" "$(dirname "$DATA")"
has() { [[ ",$STEPS," == *",$1,"* ]]; }
log() { echo "[bench-node-order $(date -u +%H:%M:%S)] $*"; }

if has info; then
  { "$BIN" info --no-mpi; echo "threads: $THREADS; graph: $SPEC; $(nproc) cores"; lscpu 2>/dev/null | grep -Ei 'model name|cache' || true; } \
    | tee "$OUT/info.txt"
fi
if has order; then
  log "bench order --spec $SPEC --widths $WIDTHS --threads $THREADS"
  "$BIN" bench order --spec "$SPEC" --orders "$BENCH_ORDERS" --widths "$WIDTHS" --threads "$THREADS" --reps "$REPS" | tee "$OUT/order.txt"
fi
if has gcn || has sage; then
  # a cached graph of another spec (DATA.spec; a preset name's meaning can change) is generated again
  if [ ! -f "$DATA" ] || { [ -z "$DATA_GIVEN" ] && [ "$(cat "$DATA.spec" 2>/dev/null)" != "$SPEC" ]; }; then
    log "generating $SPEC -> $DATA"
    "$BIN" gen --spec "$SPEC" --out "$DATA" | tee "$OUT/gen.txt"
    [ -n "$DATA_GIVEN" ] || echo "$SPEC" >"$DATA.spec"
  fi
fi
run_train() { # model layers hidden norm order
  log "supergcn $1 $2×$3 norm $4, node order $5"
  rm -f "$OUT/metrics_$1_$5.jsonl"
  "$BIN" train --data "$DATA" --model "$1" --layers "$2" --hidden "$3" --norm "$4" --epochs "$EPOCHS" \
    --threads "$THREADS" --node-order "$5" --metrics "$OUT/metrics_$1_$5.jsonl" 2>&1 | tee "$OUT/train_$1_$5.txt"
}
IFS=, read -r -a orders <<< "$ORDERS"
for o in "${orders[@]}"; do
  if has gcn; then run_train gcn 2 128 none "$o"; fi
  if has sage; then run_train sage 3 256 layer "$o"; fi
done

# Medians of epochs 2..EPOCHS (all epochs when there is only one) of every metrics file OUT holds.
"$PY" - "$OUT" <<'EOF'
import glob, json, os, re, statistics, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "metrics_*_*.jsonl"))):
    model, order = re.match(r"metrics_([^_]+)_(.+)\.jsonl", os.path.basename(path)).groups()
    eps = [json.loads(l) for l in open(path) if l.strip()]
    eps = [e for e in eps if not e.get("header") and not e.get("final")]
    if not eps:
        continue
    use = eps[1:] if len(eps) > 1 else eps
    med = lambda k: statistics.median(e.get(k, 0.0) for e in use)
    rows.append(dict(model=model, order=order, epochs=len(eps), epoch_s=med("epoch_s"), aggr_s=med("aggr_s"),
                     dense_s=med("dense_s"), eval_s=med("eval_s"), loss=eps[-1]["loss"]))
order_line = lambda r: (r["model"], r["order"] != "given", r["order"])
rows.sort(key=order_line)
with open(os.path.join(out, "epochs.csv"), "w") as f:
    f.write("model,order,epochs,epoch_s,aggr_s,dense_s,eval_s,last_loss\n")
    for r in rows:
        f.write("%(model)s,%(order)s,%(epochs)d,%(epoch_s).3f,%(aggr_s).3f,%(dense_s).3f,%(eval_s).3f,%(loss).6f\n" % r)
given = {r["model"]: r for r in rows if r["order"] == "given"}
with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("| model | node order | epoch s | aggr s | dense s | eval s | epoch speed-up vs given | last loss |\n|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        g = given.get(r["model"])
        sp = "%.2f×" % (g["epoch_s"] / r["epoch_s"]) if g and r["epoch_s"] > 0 else "—"
        f.write("| %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %.6f |\n" % (r["model"], r["order"], r["epoch_s"], r["aggr_s"],
                r["dense_s"], r["eval_s"], sp, r["loss"]))
    f.write("\nMedians of epochs 2.. (epoch = training step + evaluation pass).\n")
    o = os.path.join(out, "order.txt")
    if os.path.exists(o):
        f.write("\nbench order (mean aggregation, ms; _x = given / this order):\n\n```\n" + open(o).read() + "```\n")
print(open(os.path.join(out, "summary.md")).read())
EOF
