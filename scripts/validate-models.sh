#!/usr/bin/env bash
# Validation of the performance model per model (docs/MODELS.md, "Performance
# model"): every model of the table trained on a products-like graph at one
# process and at `mpirun -np 2 --bind-to core`, one thread a rank, against
# `supergcn predict` on a fresh profile of the box (bench profile --cores 1
# for the one process, --cores 2 for the two ranks). Measured: the median
# training step (epoch_s of the epochs ≥ 3 not evaluated, --metrics);
# predicted: the training step (predict --eval-every 0).
#
#   scripts/validate-models.sh                 # measure, predict, write the table
#   SKIP_RUNS=1 OUT=dir scripts/validate-models.sh   # the table again from OUT's files
#
# Environment (defaults in brackets):
#   NODES [100000] products-like graph size;  EPOCHS [8];  MODELS [gcn sage gin sgc appnp gat]
#   OUT [out/validate-models] runs, profiles and validate-models.csv;  BIN [bin/supergcn]
#   GAT_FLAGS [--heads 4 --hidden 8] the GAT shape (train and predict; --hidden per head)
set -euo pipefail
BIN=${BIN:-bin/supergcn}
OUT=${OUT:-out/validate-models}
NODES=${NODES:-100000}
EPOCHS=${EPOCHS:-8}
MODELS=${MODELS:-gcn sage gin sgc appnp gat}
GAT_FLAGS=${GAT_FLAGS:---heads 4 --hidden 8}
mkdir -p "$OUT"
mflags() { if [ "$1" = gat ]; then echo "--model gat $GAT_FLAGS"; else echo "--model $1"; fi; }

if [ -z "${SKIP_RUNS:-}" ]; then
	"$BIN" gen --spec "products,nodes=$NODES" --out "$OUT/g.sgb"
	for p in 1 2; do
		"$BIN" partition --data "$OUT/g.sgb" --parts $p --method metis --out "$OUT/p$p"
	done
	"$BIN" bench profile --cores 1 --name dev1 --out "$OUT/prof-dev1.json"
	for m in $MODELS; do
		"$BIN" train --partitions "$OUT/p1" $(mflags "$m") --threads 1 --epochs "$EPOCHS" --eval-every 100 --metrics "$OUT/np1-$m.jsonl" >/dev/null
	done
	"$BIN" bench profile --cores 2 --name dev2 --out "$OUT/prof-dev2.json"
	for m in $MODELS; do
		mpirun --bind-to core -np 2 "$BIN" train --partitions "$OUT/p2" $(mflags "$m") --threads 1 --epochs "$EPOCHS" --eval-every 100 --metrics "$OUT/np2-$m.jsonl" >/dev/null
	done
fi

for p in 1 2; do
	for m in $MODELS; do
		"$BIN" predict --partitions "$OUT/p$p" --profile "$OUT/prof-dev$p.json" --network shm --threads 1 --eval-every 0 \
			$(mflags "$m") --json | sed "s/^/$p $m /"
	done
done > "$OUT/predictions.txt"

python3 - "$OUT" $MODELS <<'PY'
import json, statistics, sys
out, models = sys.argv[1], sys.argv[2:]
pred = {}
for line in open(f"{out}/predictions.txt"):
    p, m, js = line.split(" ", 2)
    pred[(int(p), m)] = json.loads(js)
rows = []
for p in (1, 2):
    for m in models:
        eps = [json.loads(l) for l in open(f"{out}/np{p}-{m}.jsonl")]
        eps = [e for e in eps if "epoch" in e and e["epoch"] >= 3 and not e.get("evaluated")]
        med = lambda k: statistics.median(e[k] for e in eps)
        pr = pred[(p, m)]
        rows.append((p, m, len(eps), med("epoch_s"), pr["train_s"], med("aggr_s"), pr["aggr_s"], med("dense_s"), pr["dense_s"]))
with open(f"{out}/validate-models.csv", "w") as f:
    f.write("ranks,threads,model,epochs,measured_s,predicted_s,ratio,measured_aggr_s,predicted_aggr_s,measured_dense_s,predicted_dense_s\n")
    for p, m, n, ms, ps, ma, pa, md, pd in rows:
        f.write(f"{p},1,{m},{n},{ms:.4f},{ps:.4f},{ps/ms:.3f},{ma:.4f},{pa:.4f},{md:.4f},{pd:.4f}\n")
print("| ranks × threads | model | measured s | predicted s | predicted / measured | aggr s measured / predicted | dense s measured / predicted |")
print("|---|---|---|---|---|---|---|")
for p, m, n, ms, ps, ma, pa, md, pd in rows:
    print(f"| {p} × 1 | {m} | {ms:.3f} | {ps:.3f} | {ps/ms:.2f} | {ma:.3f} / {pa:.3f} | {md:.3f} / {pd:.3f} |")
PY
