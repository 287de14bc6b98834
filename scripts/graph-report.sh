#!/usr/bin/env bash
# Structure of real and generated graphs side by side (docs/GRAPHS.md): for
# every input, its size and degree distribution (supergcn convert / gen), then
# METIS into each part count of PARTS: the cut fraction of the arcs and the
# hybrid exchange's rows per layer per node (supergcn stats).
#
#   scripts/graph-report.sh                                   # dblp-2010, wave, Cora, products at 100k nodes
#   INPUTS="spec:products,nodes=100000 spec:sbm-products,nodes=100000" PARTS="16 64" scripts/graph-report.sh
#
# Env: INPUTS (space-separated; data:PATH reads a dataset, spec:SPEC generates one; default dblp-2010,
# wave and Cora from SUPERGCN_DATASETS [../shared/datasets], and spec:products,nodes=100000),
# PARTS ["16 64 256"], BIN [bin/supergcn], WORK (a temporary directory, removed unless KEEP=1).
# Prints a markdown table, one row per input (cut fraction of the arcs and hybrid rows per node for each part
# count); every command it runs goes to WORK/commands.log.
set -euo pipefail
cd "$(dirname "$0")/.."
DATASETS=${SUPERGCN_DATASETS:-../shared/datasets}
INPUTS=${INPUTS:-data:$DATASETS/dblp-2010/edges.txt.gz data:$DATASETS/wave/wave.graph.bz2 data:$DATASETS/cora spec:products,nodes=100000}
PARTS=${PARTS:-16 64 256}
BIN=${BIN:-bin/supergcn}
[ -x "$BIN" ] || { echo "graph-report: $BIN not found (go build -tags openblas -o bin/supergcn ./cmd/supergcn)" >&2; exit 2; }
if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/graph-report.XXXXXX")
  [ "${KEEP:-}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
run() { echo "+ $*" >>"$WORK/commands.log"; "$@"; }
meta() { sed -n "s/^  \"$1\": \([-0-9.e+]*\),\{0,1\}$/\1/p" "$2"; }

hdr="| graph | nodes | arcs | degrees |" sep="|---|---|---|---|"
for p in $PARTS; do hdr="$hdr $p parts: cut, rows/node |" sep="$sep---|"; done
echo "$hdr"
echo "$sep"
i=0
for in in $INPUTS; do
  i=$((i + 1))
  g=$WORK/g$i.sgb
  case $in in
    data:*) path=${in#data:}; name=$(basename "$path"); name=${name%%.*}
      [ "$name" != edges ] || name=$(basename "$(dirname "$path")")
      [ -e "$path" ] || { echo "graph-report: $path not found (set SUPERGCN_DATASETS)" >&2; exit 2; }
      run "$BIN" convert --data "$path" --out "$g" >"$WORK/g$i.log" ;;
    spec:*) name=${in#spec:}
      run "$BIN" gen --spec "$name" --out "$g" >"$WORK/g$i.log" ;;
    *) echo "graph-report: $in is neither data:PATH nor spec:SPEC" >&2; exit 2 ;;
  esac
  nodes=$(sed -n 's/^[a-z]*: .*: \([0-9]*\) nodes, .*/\1/p' "$WORK/g$i.log")
  arcs=$(sed -n 's/^[a-z]*: .*nodes, \([0-9]*\) edges.*/\1/p' "$WORK/g$i.log")
  deg=$(sed -n 's/^[a-z]*: degrees: \(.*\)/\1/p' "$WORK/g$i.log")
  row="| $name | $nodes | $arcs | $deg |"
  for p in $PARTS; do
    d=$WORK/g$i-p$p
    run "$BIN" partition --data "$g" --parts "$p" --method metis --out "$d" >"$d.log" 2>&1 ||
      { echo "graph-report: partitioning $in into $p parts failed:" >&2; cat "$d.log" >&2; exit 1; }
    hyb=$(run "$BIN" stats "$d" --json | awk '/"rows": \{/ { r = 1 } r && /"hybrid":/ { gsub(/[^0-9]/, ""); print; exit }')
    row="$row $(printf '%.1f%%, %.3f' "$(echo "100 * $(meta cut_fraction "$d/meta.json")" | bc -l)" "$(echo "$hyb / $nodes" | bc -l)") |"
    [ "${KEEP:-}" = 1 ] || rm -rf "$d"
  done
  echo "$row"
done
