#!/usr/bin/env bash
# Inter-node volume of the flat vs the two-level exchange:
# `supergcn stats PDIR --ranks-per-node K --json` on METIS partitions of
# dblp-2010 (16 synthetic features) and of a products-scale graph
# (`supergcn gen --spec products`, the ogbn-products-like preset; GRAPHS may also name
# sbm-products, the stochastic block model of earlier reports), for every part count
# in PARTS and ranks per node in PER_NODE. One layer, one direction.
#
#   scripts/node-volume-report.sh                                   # both graphs, 16 and 64 parts, 4 and 8 ranks/node
#   GRAPHS=dblp-2010 scripts/node-volume-report.sh                  # dblp only (a few seconds)
#   WORK=out/node-volume GRAPHS=products PARTS=16 scripts/node-volume-report.sh     # device: products-scale, one part count a call
#
# Env: SUPERGCN_DATASETS [../shared/datasets] (dblp-2010/edges.txt.gz), GRAPHS ["dblp-2010 products"],
# PARTS ["16 64"], PER_NODE ["4 8"], WIDTH [128], BITS [2] (inter-node bytes at intBITS, block params),
# BIN [bin/supergcn], WORK (partitions, JSON, node-volume.md; reused when present; default a temporary directory, removed).
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS=${SUPERGCN_DATASETS:-../shared/datasets}
GRAPHS=${GRAPHS:-dblp-2010 products}
PARTS=${PARTS:-16 64}
PER_NODE=${PER_NODE:-4 8}
WIDTH=${WIDTH:-128}
BITS=${BITS:-2}
BIN=${BIN:-bin/supergcn}
[ -x "$BIN" ] || { echo "node-volume-report: $BIN not found (go build -tags openblas -o bin/supergcn ./cmd/supergcn)" >&2; exit 2; }
if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/node-volume.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"

# jget FILE KEY: a number from the stats JSON (two-space indent); KEY is
# top-level ("nodes") or object.key ("flat.inter_rows").
jget() {
  awk -v want="$2" '
    /^  "[a-z_0-9]+": \{/ { obj = $1; gsub(/[":]/, "", obj); next }
    /^  [^ ]/ { obj = "" }
    { line = $0; sub(/,$/, "", line); n = split(line, f, /": /); if (n != 2) next
      key = f[1]; sub(/^ *"/, "", key)
      k = (obj != "" && line ~ /^    "/) ? obj "." key : key
      if (line ~ /^  "/ || line ~ /^    "/) if (k == want) { print f[2]; exit } }' "$1"
}

run() { echo "+ $*" >>"$WORK/commands.log"; "$@"; }

rows=()
for g in $GRAPHS; do
  case $g in
    dblp-2010)
      path=$DATASETS/dblp-2010/edges.txt.gz
      [ -e "$path" ] || { echo "node-volume-report: $path not found (set SUPERGCN_DATASETS)" >&2; exit 2; }
      input=(--data "$path" --synthetic-features 16) ;;
    products|sbm-products)
      # a cached graph without $g.spec is from before the preset changed meaning: generated again
      if [ ! -f "$WORK/$g.sgb" ] || [ "$(cat "$WORK/$g.spec" 2>/dev/null)" != "$g" ]; then
        t0=$(date +%s)
        run "$BIN" gen --spec "$g" --out "$WORK/$g.sgb" >"$WORK/gen-$g.log" 2>&1
        echo "$g" >"$WORK/$g.spec"
        echo "gen $g: $(( $(date +%s) - t0 ))s" >&2
      fi
      input=(--data "$WORK/$g.sgb") ;;
    *) echo "node-volume-report: unknown graph $g (dblp-2010, products or sbm-products)" >&2; exit 2 ;;
  esac
  for parts in $PARTS; do
    dir=$WORK/$g-$parts
    if [ ! -f "$dir/meta.json" ]; then
      t0=$(date +%s)
      run "$BIN" partition "${input[@]}" --parts "$parts" --method metis --out "$dir" >"$dir.log" 2>&1 ||
        { echo "node-volume-report: partition $g $parts failed:" >&2; tail -5 "$dir.log" >&2; exit 1; }
      echo "partition $g into $parts: $(( $(date +%s) - t0 ))s" >&2
    fi
    for k in $PER_NODE; do
      j=$WORK/$g-$parts-k$k.json
      run "$BIN" stats "$dir" --ranks-per-node "$k" --width "$WIDTH" --bits "$BITS" --json >"$j"
      rows+=("$(awk -v g="$g" -v p="$parts" -v k="$k" -v n="$(jget "$j" nodes)" \
        -v fr="$(jget "$j" flat.inter_rows)" -v tr="$(jget "$j" two_level.inter_rows)" \
        -v fb="$(jget "$j" flat.inter_bytes)" -v tb="$(jget "$j" two_level.inter_bytes)" \
        -v fm="$(jget "$j" flat.inter_messages)" -v tm="$(jget "$j" two_level.inter_messages)" \
        -v fi="$(jget "$j" flat.intra_rows)" -v ti="$(jget "$j" two_level.intra_rows)" \
        -v pm="$(jget "$j" two_level_paired.inter_messages)" -v pi="$(jget "$j" two_level_paired.intra_rows)" \
        -v fe="$(jget "$j" flat.messages_per_epoch)" -v te="$(jget "$j" two_level.messages_per_epoch)" -v pe="$(jget "$j" two_level_paired.messages_per_epoch)" 'BEGIN {
          printf "| %s | %d | %d | %d | %d | %d | %.2f | %.2f / %.2f | %d / %d / %d | %d / %d / %d | %d / %d / %d |", g, p, k, n, fr, tr, (tr > 0 ? fr / tr : 0),
            fb / 1048576, tb / 1048576, fm, tm, pm, fi, ti, pi, fe, te, pe }')")
    done
  done
done

{
  echo "machine: $(uname -srm), $(nproc) cores ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)); binary $BIN"
  echo "one layer, one direction; inter-node bytes at int$BITS (block params), width $WIDTH; ranks r on node r/K"
  echo
  echo "| graph | parts | ranks/node | nodes | inter rows flat | inter rows two-level | flat/two-level | inter MiB flat / two-level | inter msgs flat / two-level / paired | intra rows flat / two-level / paired | msgs/epoch (2 layers) flat / two-level / paired |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "commands:"
  sed 's|'"$WORK"'/|$WORK/|g' "$WORK/commands.log"
} | tee "$WORK/node-volume.md"
