#!/usr/bin/env bash
# Validation of the performance model (supergcn predict) against the
# emulated-cluster measurements of scripts/bench-cluster.sh: for every row
# of the CSVs, the predicted and the measured epoch time (training step +
# evaluation pass) and their ratio; the goal is within ±25 %.
#
#   PROFILE=out/model/box.json PDIR=out/bench-cluster/p16 scripts/validate-model.sh
#   PROFILE=… PDIR=… scripts/validate-model.sh docs/data/bench-cluster-np16-prescott-gcn.csv
#   PROFILE=new.json VOLUMES=docs/data/volumes-products-p16.json scripts/validate-model.sh   # predict only
#
# Predict-only mode (VOLUMES set): the partition's volumes come from a
# `predict --save-volumes` file instead of planning PDIR, so the table is
# recomputed from the saved CSVs and a (new) profile on any machine, in
# seconds. docs/data/volumes-products-p16.json holds the 16-part products
# partition the CSVs trained on, with two-level volumes for 4, 8 and 16
# ranks per node.
#
# Environment (defaults in brackets):
#   PROFILE (required) machine profile of the box that measured the CSVs (supergcn bench profile --out)
#   PDIR [out/bench-cluster/p16] the partition the CSVs trained on (bench-cluster.sh regenerates it the same way)
#   FLAT_INTRA [default]: "bits" when the rows were measured by a binary that quantised the flat exchange's
#     rows between ranks of one node at --bits too (before the locality-aware flat exchange)
#   VOLUMES [unset] a predict --save-volumes file of that partition: predict only (PDIR is not read)
#   EVAL_CACHE [false] whether the measuring binary reused the first layer's evaluation aggregate (predict
#     --eval-cache; every CSV in docs/data before 2026-11-23 01:00 predates it: false)
#   HOST_RANKS [each row's ranks] ranks busy on the measuring box (--ranks-per-host): an emulated cluster runs all on one box
#   CORES [the profile's cores_per_node] cores of the measuring box; an emulated node has CORES/NODES
#   RANKS_PER_NODE [4] the emulated nodes' ranks whose two-level volumes are planned once (other layouts: planned per row)
#   OUT [out/validate] where validate.csv, validate.md and the planned volumes go
#   BIN [bin/supergcn]
# Columns: measured (max over ranks, as train reports them) and predicted components; pred_sync is predict's
#   sync_max_s, the least busy rank's waiting (the trainer's sync_s is the maximum over ranks).
# Arguments: the CSVs [docs/data/bench-cluster-np16-prescott-gcn.csv docs/data/bench-cluster-np16-prescott-gcn-intn.csv
#   docs/data/bench-cluster-np16-prescott-sage.csv]; rows whose rank count differs from PDIR's parts are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/supergcn}
PROFILE=${PROFILE:?validate-model: set PROFILE to a profile JSON (supergcn bench profile --out FILE)}
PDIR=${PDIR:-out/bench-cluster/p16}
OUT=${OUT:-out/validate}
if [ $# -eq 0 ]; then
  set -- docs/data/bench-cluster-np16-prescott-gcn.csv docs/data/bench-cluster-np16-prescott-gcn-intn.csv docs/data/bench-cluster-np16-prescott-sage.csv
fi
# jkey KEY: the numeric value of "KEY": in the JSON line on stdin.
jkey() { awk -v k="\"$1\":" '{ i = index($0, k); if (!i) { print "nan"; exit } v = substr($0, i + length(k)); sub(/[,}].*/, "", v); gsub(/"/, "", v); print v }'; }
CORES=${CORES:-$(tr -d ' \n' <"$PROFILE" | sed 's/.*"cores_per_node":\([0-9]*\).*/\1/')}
[ -n "$CORES" ] || { echo "validate-model: no cores_per_node in $PROFILE" >&2; exit 2; }
mkdir -p "$OUT"
if [ -n "${VOLUMES:-}" ]; then
  [ -f "$VOLUMES" ] || { echo "validate-model: VOLUMES=$VOLUMES: no such file" >&2; exit 2; }
  vol=$VOLUMES
  parts=$(head -c 300 "$VOLUMES" | tr -d ' \n' | sed 's/.*"parts":\([0-9]*\).*/\1/')
else
  parts=$(tr -d ' \n' <"$PDIR/meta.json" | sed 's/.*"parts":\([0-9]*\).*/\1/')
  vol=$OUT/volumes-$(basename "$PDIR")-$parts.json
fi
case $parts in '' | *[!0-9]*) echo "validate-model: no partition part count (PDIR=$PDIR VOLUMES=${VOLUMES:-})" >&2; exit 2 ;; esac
if [ ! -f "$vol" ]; then
  echo "== planning $PDIR ($parts ranks) once: $vol" >&2
  "$BIN" predict --partitions "$PDIR" --save-volumes "$vol" --profile "$PROFILE" --network shm,1gbit \
    --ranks-per-node "${RANKS_PER_NODE:-4}" --exchange two-level >/dev/null
fi

csv=$OUT/validate.csv
echo "source,model,config,link,ranks,nodes,threads,measured_s,predicted_s,ratio,meas_train_bytes,pred_train_bytes,meas_aggr,pred_aggr,meas_dense,pred_dense,meas_quant,pred_quant,meas_comm,pred_comm,meas_eval,pred_eval,meas_sync,pred_sync,profile_copies,pred_aggr_local" >"$csv"
for f in "$@"; do
  src=$(basename "$f" .csv)
  # columns by name (bench-cluster.sh has added columns over time)
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { printf "%s", $c["model"]; n = split("config link ranks nodes threads epoch_s aggr_s comm_s quant_s dense_s eval_s comm_bytes sync_s", k, " ")
      for (i = 1; i <= n; i++) printf ",%s", (k[i] in c) ? $c[k[i]] : "nan"; printf "\n" }' "$f" |
  while IFS=, read -r model cfg link ranks nodes threads epoch aggr comm quant dns evl bytes sync; do
    [ "$ranks" = "$parts" ] || continue
    case $model in
      gcn) mflags="--model gcn --layers 2 --hidden 128" ;;
      sage) mflags="--model sage --layers 3 --hidden 256 --norm layer" ;;
      *) echo "validate-model: $f: unknown model $model" >&2; continue ;;
    esac
    # bench-cluster.sh's configs: post32, hyb32, hyb2/4/8, with a two-level suffix tl or tlp and intra bits (hyb2tl8)
    exch=flat intra=0 c=$cfg
    case $c in
      *tlp | *tlp[0-9]*) exch=two-level-paired intra=${c##*tlp} c=${c%tlp*} ;;
      *tl | *tl[0-9]*) exch=two-level intra=${c##*tl} c=${c%tl*} ;;
    esac
    case $c in
      post32) cflags="--aggr-mode post --bits 32" ;;
      hyb32 | hyb2 | hyb4 | hyb8) cflags="--aggr-mode hybrid --bits ${c#hyb}" ;;
      *) echo "validate-model: $f: unknown config $cfg" >&2; continue ;;
    esac
    # FLAT_INTRA=bits: the measuring binary quantised the flat exchange's rows
    # between ranks of one node at --bits too (binaries before the
    # locality-aware flat exchange); default: --intra-bits' default (fp32)
    if [ "$exch" = flat ] && [ "${FLAT_INTRA:-default}" = bits ]; then
      intra=${c#hyb}
      [ "$c" = post32 ] && intra=32
    fi
    cflags="$cflags --exchange $exch --intra-bits ${intra:-0}"
    if [ "$link" = shm ]; then
      nflags="--network shm --cores-per-node $CORES"
    else
      nflags="--network $link --ranks-per-node $(( ranks / nodes )) --cores-per-node $(( CORES / nodes ))"
    fi
    # shellcheck disable=SC2086
    j=$("$BIN" predict --volumes "$vol" --profile "$PROFILE" $mflags $cflags $nflags --threads "$threads" \
      --ranks-per-host "${HOST_RANKS:-$ranks}" --eval-cache="${EVAL_CACHE:-false}" --json)
    p=$(jkey epoch_s <<<"$j")
    echo "$src,$model,$cfg,$link,$ranks,$nodes,$threads,$epoch,$p,$(awk -v a="$p" -v b="$epoch" 'BEGIN { printf "%.3f", a / b }'),$bytes,$(jkey train_bytes <<<"$j"),$aggr,$(jkey aggr_s <<<"$j"),$dns,$(jkey dense_s <<<"$j"),$quant,$(jkey quant_s <<<"$j"),$comm,$(jkey comm_s <<<"$j"),$evl,$(jkey eval_s <<<"$j"),$sync,$(jkey sync_max_s <<<"$j"),$(jkey profile_copies <<<"$j"),$(jkey aggr_local_s <<<"$j")" >>"$csv"
  done
done

md=$OUT/validate.md
awk -F, -v prof="$PROFILE" 'NR == 1 { next }
  { n++; r = $10; ok = (r >= 0.75 && r <= 1.25); good += ok
    if (r > worst_hi || worst_hi == "") worst_hi = r; if (r < worst_lo || worst_lo == "") worst_lo = r
    rows[n] = sprintf("| %s | %s | %s | %s | %.2f | %.2f | %.2f%s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.3f |",
      $1, $2, $3, $4, $8, $9, r, ok ? "" : " ✗", $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $11 ? $12 / $11 : 0) }
  END {
    printf "Predicted vs measured epoch seconds (profile %s); components measured / predicted (measured: max over ranks; predicted: the critical rank)\n\n", prof
    print "| source | model | config | link | measured | predicted | ratio | aggr | dense | quant | comm | eval | bytes pred/meas |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= n; i++) print rows[i]
    printf "\n%d of %d rows within ±25 %%; ratios %.2f … %.2f\n", good, n, worst_lo, worst_hi }' "$csv" | tee "$md"
