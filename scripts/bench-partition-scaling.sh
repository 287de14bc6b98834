#!/usr/bin/env bash
# Distributed partitioning benchmark: P = 1, 2, 4, 8, 16 ranks on the
# products-scale generated graph. For each method (multilevel, ParMETIS
# through PT-Scotch, and ldg, the streaming method that needs no global
# partitioner) and each P it runs
#   mpirun -np P supergcn partition --method M --data g.sgb --parts PARTS --out ...
# under /usr/bin/time -v (or scripts/peak-rss.py) per rank, and once the 1-process METIS partition as
# the reference; it writes results.csv (method, ranks, wall seconds,
# partitioner seconds, max per-rank peak RSS, edge cut, imbalances, and
# the hybrid exchange's rows per layer from supergcn stats), results.md
# (the same as a table) and the PNG plots (supergcn plot
# --partition-scaling) into OUT.
#
#   BIN=bin/supergcn OUT=/tmp/ps scripts/bench-partition-scaling.sh
#   SPEC=nodes=20000,degree=10,feat=8 PS="1 2" scripts/bench-partition-scaling.sh   # tiny check
#   # the four partitioners at 16, 32 and 64 ranks into 64 parts:
#   PS="16 32 64" PARTS=64 METHODS="multilevel parmetis ldg" OUT=/tmp/ps scripts/bench-partition-scaling.sh
#   # in pieces of < 10 min, sharing one generated graph while the machine stays up:
#   GRAPH=/tmp/products.sgb METHODS=ldg OUT=$OUT/a scripts/bench-partition-scaling.sh
#   GRAPH=/tmp/products.sgb METHODS=parmetis PS="16 8 4" SERIAL=0 OUT=$OUT/b scripts/bench-partition-scaling.sh
#
# Env: BIN (bin/supergcn), OUT (a temp dir), SPEC (graph spec for supergcn gen;
# products), PS ("1 2 4 8 16"), METHODS ("multilevel parmetis ldg"), PARTS (16),
# SERIAL (1: also time the 1-process METIS partition; 0 skips it),
# HYBRID (1: count the hybrid exchange's rows with supergcn stats; 0 skips it),
# GRAPH (the .sgb to partition: generated there from SPEC when missing, kept
# for later runs; default WORK/g.sgb), WORK (graph and partition directories,
# outside OUT so that only results come back; a temp dir, removed at the end
# unless it holds GRAPH), KEEP (0: each partition directory is removed once
# measured; 1 keeps them as WORK/p-METHOD-P, to train on: set GRAPH or WORK).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin/supergcn}
SPEC=${SPEC:-products}
PS=${PS:-1 2 4 8 16}
METHODS=${METHODS:-multilevel parmetis ldg}
PARTS=${PARTS:-16}
SERIAL=${SERIAL:-1}
HYBRID=${HYBRID:-1}
KEEP=${KEEP:-0}
[[ "$KEEP" =~ ^[01]$ ]] || { echo "bench-partition-scaling: KEEP=$KEEP is not 0 or 1" >&2; exit 2; }
[ -x "$BIN" ] || { echo "bench-partition-scaling: $BIN is not an executable (set BIN)" >&2; exit 1; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
# Peak RSS per process: GNU time, or scripts/peak-rss.py where it is missing.
if [ -x /usr/bin/time ]; then TIMEV="/usr/bin/time -v -o"; else TIMEV="python3 $PWD/scripts/peak-rss.py"; fi
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/partition-scaling.XXXXXX")}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

WORK=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/partition-scaling-work.XXXXXX")}
mkdir -p "$WORK"
g=${GRAPH:-$WORK/g.sgb}
[ -n "${GRAPH:-}" ] || [ "$KEEP" = 1 ] || trap 'rm -rf "$WORK"' EXIT
if [ ! -e "$g" ]; then
  echo "generating $SPEC into $g ..."
  "$BIN" gen --spec "$SPEC" --out "$g" | tee "$OUT/gen.log"
fi

rss() { sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): \([0-9]*\)$/\1/p' "$1"; }
meta() { sed -n "s/^  \"$1\": \([-0-9.e+]*\),\{0,1\}$/\1/p" "$2"; }
csv="$OUT/results.csv"
echo "method,ranks,parts,seconds,partition_seconds,max_rss_mb,edge_cut_fraction,node_imbalance,edge_imbalance,hybrid_rows" >"$csv"

# hybrid DIR: the hybrid exchange's rows per layer, one part per rank (-1 when skipped).
hybrid() {
  if [ "$HYBRID" = 1 ]; then
    "$BIN" stats "$1" --json | sed -n '/"rows": {/,/}/s/^[[:space:]]*"hybrid": \([0-9]*\).*$/\1/p'
  else
    echo -1
  fi
}

record() { # method ranks dir seconds maxrss_kb
  local m="$3/meta.json"
  printf '%s,%d,%d,%.2f,%.2f,%.1f,%.4f,%.3f,%.3f,%d\n' "$1" "$2" "$PARTS" "$4" "$(meta partition_seconds "$m")" \
    "$(awk -v k="$5" 'BEGIN{print k/1024}')" "$(meta cut_fraction "$m")" "$(meta node_imbalance "$m")" "$(meta edge_imbalance "$m")" \
    "$(hybrid "$3")" >>"$csv"
  [ "$KEEP" = 1 ] || rm -rf "$3"
}

if [ "$SERIAL" = 1 ]; then
  d="$WORK/p-metis"
  t0=$(date +%s.%N)
  $TIMEV "$OUT/metis.time" "$BIN" partition --method metis --data "$g" --parts "$PARTS" --out "$d" >"$OUT/metis.log" 2>&1 ||
    { cat "$OUT/metis.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  record metis-serial 1 "$d" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$(rss "$OUT/metis.time")"
  tail -1 "$csv"
fi
for m in $METHODS; do
  for p in $PS; do
    d="$WORK/p-$m-$p"
    rm -f "$OUT/$m-$p.time."*
    t0=$(date +%s.%N)
    TIMEV=$TIMEV mpirun -np "$p" sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}; exec $TIMEV "$0.$r" "$@"' \
      "$OUT/$m-$p.time" "$BIN" partition --method "$m" --data "$g" --parts "$PARTS" --out "$d" >"$OUT/$m-$p.log" 2>&1 ||
      { cat "$OUT/$m-$p.log" >&2; exit 1; }
    t1=$(date +%s.%N)
    max=0
    for f in "$OUT/$m-$p.time."*; do
      k=$(rss "$f")
      [ "$k" -gt "$max" ] && max=$k
    done
    record "$m" "$p" "$d" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$max"
    tail -1 "$csv"
  done
done

{
  echo "| method | ranks | parts | wall s | partitioner s | max per-rank peak RSS (MB) | edge cut | node imb. | edge imb. | hybrid rows/layer |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$csv" | awk -F, '{printf "| %s | %d | %d | %.1f | %.1f | %.0f | %.2f%% | %.3f | %.3f | %d |\n", $1, $2, $3, $4, $5, $6, 100*$7, $8, $9, $10}'
} >"$OUT/results.md"
cat "$OUT/results.md"
"$BIN" plot --partition-scaling "$csv" --out "$OUT"
