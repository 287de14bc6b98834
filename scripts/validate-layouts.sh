#!/usr/bin/env bash
# Validation of `supergcn predict --layouts` against a layout matrix measured
# by scripts/bench-layouts.sh: for every row (model, exchange, link, ranks ×
# threads per node) the measured and the predicted epoch, their ratio, and
# per link and exchange whether the recommended layout is the measured best
# (or within 10 % of it). The goal is every row within ±25 %.
#
#   PROFILE=docs/data/profile-xeon32.json \
#   VOLUMES=docs/data/volumes-products-ml32-r4.json,docs/data/volumes-products-ml32-r8.json,docs/data/volumes-products-ml32-r16.json,docs/data/volumes-products-ml32-r32.json \
#   NODES=4 C=8 scripts/validate-layouts.sh docs/data/layouts-products-4x8-xeon32.csv
#
# Environment (defaults in brackets):
#   PROFILE (required) the measuring machine's profile (supergcn bench profile --out)
#   VOLUMES (required) predict --save-volumes files of the partition the matrix trained on, one per rank count
#     (NODES × every ranks-per-node of the matrix), comma-separated
#   NODES, C (required) the emulated nodes and their cores, as bench-layouts.sh ran
#   NODES_PER_HOST [NODES] nodes sharing one machine: an emulated cluster runs them all on one box
#   the model of each row as scripts/bench-cluster.sh trains it: gcn 2×128, sage 3×256 LayerNorm
#   BIN [bin/supergcn]
# Prints a markdown table on stdout; OUT [unset]: also the CSV of the rows there.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/supergcn}
PROFILE=${PROFILE:?validate-layouts: set PROFILE}
VOLUMES=${VOLUMES:?validate-layouts: set VOLUMES to the volume files, comma-separated}
NODES=${NODES:?validate-layouts: set NODES} C=${C:?validate-layouts: set C}
CSV=${1:?usage: validate-layouts.sh LAYOUTS.csv}
[ -f "$CSV" ] || { echo "validate-layouts: $CSV: no such file" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# config of bench-cluster → predict flags
flags() {
	case $1 in
	hyb32) echo "--bits 32 --exchange flat" ;;
	hyb2) echo "--bits 2 --exchange flat" ;;
	hyb2tl) echo "--bits 2 --exchange auto" ;; # two-level wherever a node runs several ranks
	*) echo "validate-layouts: $CSV: config $1 has no predict flags here" >&2; exit 2 ;;
	esac
}
# bench-cluster's model → predict flags
model_flags() {
	case $1 in
	gcn) echo "--model gcn --layers 2 --hidden 128" ;;
	sage) echo "--model sage --layers 3 --hidden 256 --norm layer" ;;
	*) echo "validate-layouts: $CSV: model $1 has no predict flags here" >&2; exit 2 ;;
	esac
}
# One prediction per (model, config, link) of the matrix.
tail -n +2 "$CSV" | cut -d, -f2-4 | sort -u | while IFS=, read -r model config link; do
	if [ "$link" = shm ]; then
		net=(--network shm --nodes 1 --nodes-per-host 1 --cores-per-node $((NODES * C)))
	else
		net=(--network "$link" --nodes "$NODES" --nodes-per-host "${NODES_PER_HOST:-$NODES}" --cores-per-node "$C")
	fi
	# shellcheck disable=SC2046
	"$BIN" predict --volumes "$VOLUMES" --profile "$PROFILE" --layouts --json "${net[@]}" $(model_flags "$model") $(flags "$config") |
		sed "s/^{/{\"config\":\"$config\",\"link\":\"$link\",/" >>"$T/pred.jsonl"
done
python3 - "$CSV" "$T/pred.jsonl" "$NODES" "${OUT:-}" <<'PY'
import csv, json, sys
meas_path, pred_path, nodes, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
pred = {}
for line in open(pred_path):
    r = json.loads(line)
    if r.get("epoch_s") is None:
        continue
    # shm predictions are one node of NODES × C cores: R ranks a node there are R/NODES here
    rpn = r["ranks_per_node"] // nodes if r["link"] == "shm" else r["ranks_per_node"]
    pred[(r["model"], r["config"], r["link"], rpn)] = r["epoch_s"]
rows, worst = [], 0.0
for m in csv.DictReader(open(meas_path)):
    key = (m["model"], m["config"], m["link"], int(m["ranks_per_node"]))
    if key not in pred:
        sys.exit(f"validate-layouts: {meas_path}: no prediction for {key}")
    meas, p = float(m["epoch_s"]), pred[key]
    rows.append(key + (int(m["threads"]), meas, p, p / meas))
    worst = max(worst, abs(p / meas - 1))
names = {"hyb32": "hybrid fp32", "hyb2": "hybrid int2", "hyb2tl": "hybrid int2, two-level"}
print("| model, exchange, link | ranks × threads per node | measured s | predicted s | predicted / measured |")
print("|---|---|---|---|---|")
for model, config, link, rpn, thr, meas, p, ratio in rows:
    print(f"| {model}, {names.get(config, config)}, {link} | {rpn} × {thr} | {meas:.2f} | {p:.2f} | {ratio:.2f} |")
print()
groups = {}
for r in rows:
    groups.setdefault(r[:3], []).append(r)
for (model, config, link), g in groups.items():
    best = min(g, key=lambda r: r[5])
    rec = min(g, key=lambda r: r[6])
    print(f"- {model}, {names.get(config, config)}, {link}: recommended {rec[3]} × {rec[4]} ({rec[5]:.2f} s measured), "
          f"measured best {best[3]} × {best[4]} ({best[5]:.2f} s): {rec[5] / best[5]:.2f}×")
print(f"\nlargest deviation: {100 * worst:.0f} %")
if out:
    with open(out, "w") as f:
        f.write("model,config,link,ranks_per_node,threads,measured_s,predicted_s,ratio\n")
        for r in rows:
            f.write(",".join(str(x) for x in r[:5]) + f",{r[5]:.6g},{r[6]:.6g},{r[7]:.4f}\n")
PY
