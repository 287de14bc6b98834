#!/usr/bin/env bash
# Cora (public split), SEEDS seeds (default 10) per model: supergcn and the PyTorch baseline
# (bench/train_torch.py) on the same .sgb file, each model with its published settings
# (docs/MODELS.md); prints and writes OUT (default docs/data/accuracy-cora-models.csv):
#   model,impl,seeds,flags,last_mean,last_std,best_val_mean,best_val_std
# (test accuracy in %, at the last epoch and at the epoch of the best validation accuracy).
# MODELS="gin sgc appnp" picks the models (gcn-batch: gcn with --norm batch; gcn-batch-jk: and --jk cat); needs bin/supergcn (or SUPERGCN_BIN), python3 with torch.
# One process each, THREADS threads (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-10}
CORA=${CORA:-internal/testdataset/testdata/cora}
THREADS=${THREADS:-1}
MODELS=${MODELS:-gin sgc appnp}
OUT=${OUT:-docs/data/accuracy-cora-models.csv}
BIN=${SUPERGCN_BIN:-bin/supergcn}
PY=${PYTHON:-python3}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The published settings: Kipf & Welling (gcn); SGC, Wu et al.: K 2, lr 0.2, weight decay 5e-5,
# 100 epochs, no dropout; APPNP, Gasteiger et al. (PyG's citation benchmark): hidden 64,
# dropout 0.5, K 10, α 0.1, lr 0.01, weight decay 5e-4; GIN: hidden 64, dropout 0.5, lr 0.01,
# weight decay 5e-4; SAGE (mean, max, pool): Kipf & Welling's GCN settings; GAT, Veličković et al.: 8 heads × 8,
# dropout 0.6 (input, hidden, attention), lr 0.005, weight decay 5e-4 (GATv2, Brody et al., with GAT's settings).
# Weight decay on every parameter (torch's Adam on model.parameters()), except GCN's first-layer rule.
flags() {
  case $1 in
  gcn) echo "--model gcn --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --epochs 200" ;;
  gcn-batch) echo "--model gcn --norm batch --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --epochs 200" ;;
  gcn-batch-jk) echo "--model gcn --norm batch --jk cat --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --epochs 200" ;;
  sage) echo "--model sage --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --epochs 200" ;;
  sage-max) echo "--model sage-max --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --epochs 200" ;;
  sage-pool) echo "--model sage-pool --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --epochs 200" ;;
  gin) echo "--model gin --layers 2 --hidden 64 --dropout 0.5 --lr 0.01 --weight-decay 5e-4 --decay-all --epochs 200" ;;
  sgc) echo "--model sgc --layers 1 --k 2 --dropout 0 --lr 0.2 --weight-decay 5e-5 --decay-all --epochs 100" ;;
  gat) echo "--model gat --layers 2 --hidden 8 --heads 8 --out-heads 1 --dropout 0.6 --attn-dropout 0.6 --lr 0.005 --weight-decay 5e-4 --decay-all --epochs 200" ;;
  gatv2) echo "--model gatv2 --layers 2 --hidden 8 --heads 8 --out-heads 1 --dropout 0.6 --attn-dropout 0.6 --lr 0.005 --weight-decay 5e-4 --decay-all --epochs 200" ;;
  appnp) echo "--model appnp --layers 2 --hidden 64 --dropout 0.5 --k 10 --alpha 0.1 --lr 0.01 --weight-decay 5e-4 --decay-all --epochs 200" ;;
  *) echo "accuracy-cora-models: no settings for model $1" >&2; exit 2 ;;
  esac
}

"$BIN" convert --data "$CORA" --symmetrize --dedup --remove-self-loops --out "$tmp/cora.sgb" >/dev/null

# stats FILE: mean and std (population) of the two columns "last best" of FILE, in %.
stats() {
  awk '{ n++; l += $1; l2 += $1 * $1; b += $2; b2 += $2 * $2 }
    END { ml = l / n; mb = b / n; v = l2 / n - ml * ml; w = b2 / n - mb * mb
      printf "%.2f,%.2f,%.2f,%.2f", 100 * ml, 100 * sqrt(v > 0 ? v : 0), 100 * mb, 100 * sqrt(w > 0 ? w : 0) }' "$1"
}

echo "model,impl,seeds,flags,last_mean,last_std,best_val_mean,best_val_std" >"$tmp/out.csv"
for m in $MODELS; do
  f=$(flags "$m")
  : >"$tmp/sg.txt"; : >"$tmp/pt.txt"
  for s in $(seq 1 "$SEEDS"); do
    # shellcheck disable=SC2086
    "$BIN" train --data "$tmp/cora.sgb" --feat-norm row --threads "$THREADS" --seed "$s" --quiet \
      --metrics "$tmp/sg.jsonl" $f >/dev/null
    tail -n 1 "$tmp/sg.jsonl" | sed -E 's/.*"test_acc":([0-9.eE+-]+).*"last_test_acc":([0-9.eE+-]+).*/\2 \1/' >>"$tmp/sg.txt"
    # shellcheck disable=SC2086
    "$PY" bench/train_torch.py --data "$tmp/cora.sgb" --feat-norm row --threads "$THREADS" --seed "$s" $f \
      | awk '/^epoch / { v = $8; t = $10; if (n == 0 || v > best) { best = v; bt = t }; n++; last = t }
             END { print last, bt }' >>"$tmp/pt.txt"
  done
  for impl in supergcn pytorch; do
    src=$tmp/sg.txt; [ "$impl" = pytorch ] && src=$tmp/pt.txt
    line="$m,$impl,$SEEDS,$f,$(stats "$src")"
    echo "$line" | tee -a "$tmp/out.csv"
  done
done
cp "$tmp/out.csv" "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
echo "wrote $OUT"
