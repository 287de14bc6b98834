#!/usr/bin/env bash
# Partition quality report: dblp-2010 (or GRAPH=path) into 8 and 64 parts with
# METIS (one process), ParMETIS (PT-Scotch, mpirun -np 2) and random, and a
# table of partitioner time, edge cut and imbalance read from each meta.json.
#
#   scripts/partition-report.sh                 # build bin/supergcn, run, print the table
#   GRAPH=path PARTS="4 16" WEIGHTS=degree NP=2 scripts/partition-report.sh
#
# Env: GRAPH (default $SUPERGCN_DATASETS/dblp-2010/edges.txt.gz, else
# ../shared/datasets/dblp-2010/edges.txt.gz), PARTS ("8 64"), WEIGHTS
# (degree; dblp has no training nodes, so degree+train would act as degree),
# NP (ParMETIS ranks, 2), METHODS ("metis parmetis random"), SUPERGCN (binary;
# built into bin/supergcn when unset), KEEP=1 keeps the partition directories.
set -euo pipefail
cd "$(dirname "$0")/.."

DATASETS=${SUPERGCN_DATASETS:-../shared/datasets}
GRAPH=${GRAPH:-$DATASETS/dblp-2010/edges.txt.gz}
PARTS=${PARTS:-8 64}
WEIGHTS=${WEIGHTS:-degree}
NP=${NP:-2}
METHODS=${METHODS:-metis parmetis random}
[ -e "$GRAPH" ] || { echo "partition-report: $GRAPH not found (set GRAPH or SUPERGCN_DATASETS)" >&2; exit 1; }

if [ -z "${SUPERGCN:-}" ]; then
  TAGS=$(pkg-config --exists openblas 2>/dev/null && echo openblas || true)
  go build -tags "$TAGS" -o bin/supergcn ./cmd/supergcn
  SUPERGCN=bin/supergcn
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1

OUT=$(mktemp -d "${TMPDIR:-/tmp}/partition-report.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$OUT"' EXIT

# meta KEY FILE: a top-level number from meta.json (MarshalIndent: two-space indent).
meta() { sed -n "s/^  \"$1\": \([-0-9.e+]*\),\{0,1\}$/\1/p" "$2"; }

rows=()
for parts in $PARTS; do
  for method in $METHODS; do
    dir="$OUT/$method-$parts"
    cmd=("$SUPERGCN" partition --data "$GRAPH" --parts "$parts" --method "$method" --weights "$WEIGHTS" --out "$dir")
    label=$method
    if [ "$method" = parmetis ]; then
      cmd=(mpirun -np "$NP" "${cmd[@]}")
      label="parmetis/$NP"
    fi
    t0=$(date +%s.%N)
    if ! "${cmd[@]}" >"$dir.log" 2>&1; then
      echo "partition-report: ${cmd[*]} failed:" >&2
      cat "$dir.log" >&2
      exit 1
    fi
    t1=$(date +%s.%N)
    m="$dir/meta.json"
    rows+=("$(printf '%-12s %5d %9.3f %9.2f %10d %7.2f%% %8.3f %8.3f %10d' "$label" "$parts" \
      "$(meta partition_seconds "$m")" "$(echo "$t1 - $t0" | bc -l)" "$(meta edge_cut "$m")" \
      "$(echo "100 * $(meta cut_fraction "$m")" | bc -l)" "$(meta node_imbalance "$m")" \
      "$(meta edge_imbalance "$m")" "$(meta total_halo_rows "$m")")")
  done
done

echo "graph: $GRAPH  ($(meta num_nodes "$OUT"/*-*/meta.json | head -1) nodes, $(meta num_edges "$OUT"/*-*/meta.json | head -1) arcs after symmetrize+dedup), weights $WEIGHTS"
echo "time = partitioner only (s); wall = whole command incl. load and write (s); cut = directed arcs between parts"
echo "imbalance = max/avg over parts of owned nodes and of in-edges (aggregation work); halo = rows received per exchange"
printf '%-12s %5s %9s %9s %10s %8s %8s %8s %10s\n' method parts time wall edge-cut cut% nodes edges halo
printf '%s\n' "${rows[@]}"
