#!/usr/bin/env bash
# Acceptance check: peak RSS per rank of the distributed partition falls
# with P. Generates a NODES-node graph (~NODES·DEGREE arcs, FEAT features),
# partitions it into PARTS parts once with 1-process METIS and once with
# `mpirun -np NP supergcn partition --method parmetis` (each rank reading only
# its share), measures every process with /usr/bin/time -v, prints both and
# fails unless the largest per-rank peak RSS is at most RATIO × the serial one.
#
#   scripts/test-dist-partition-rss.sh                     # 1 M nodes, ~20 M arcs, 64 features, P=4, 8 parts
#   NODES=200000 scripts/test-dist-partition-rss.sh        # smaller
#
# Env: BIN (default bin/supergcn, built when missing), OUT (results; a temp
# dir by default; the graph and partitions go to a temp dir removed at the end), NODES (1000000), DEGREE (20), FEAT (64), NP (4), PARTS (8),
# RATIO (0.45), METHOD (parmetis; ldg for the no-global-partitioner path).
# Takes ~5 min on 2 cores (PT-Scotch under 4 oversubscribed ranks), ~1 min on 16.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin/supergcn}
NODES=${NODES:-1000000}
DEGREE=${DEGREE:-20}
FEAT=${FEAT:-64}
NP=${NP:-4}
PARTS=${PARTS:-8}
RATIO=${RATIO:-0.45}
METHOD=${METHOD:-parmetis}
if [ ! -x "$BIN" ]; then
  TAGS=$(pkg-config --exists openblas 2>/dev/null && echo openblas || true)
  go build -tags "$TAGS" -o "$BIN" ./cmd/supergcn
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
# Peak RSS per process: GNU time, or scripts/peak-rss.py where it is missing.
if [ -x /usr/bin/time ]; then TIMEV="/usr/bin/time -v -o"; else TIMEV="python3 $PWD/scripts/peak-rss.py"; fi
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/dist-rss.XXXXXX")}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dist-rss-work.XXXXXX") # graph and partitions, removed at the end
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

g="$WORK/g.sgb"
"$BIN" gen --spec "nodes=$NODES,degree=$DEGREE,feat=$FEAT,classes=16" --out "$g" >"$OUT/gen.log"

rss() { sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): \([0-9]*\)$/\1/p' "$1"; }
wall() { sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): \(.*\)$/\1/p' "$1"; }

$TIMEV "$OUT/serial.time" "$BIN" partition --method metis --data "$g" --parts "$PARTS" --out "$WORK/p-serial" >"$OUT/serial.log" 2>&1 ||
  { cat "$OUT/serial.log" >&2; exit 1; }
# Each rank writes its own time file: RANK from Open MPI, MPICH/Hydra or Slurm.
TIMEV=$TIMEV mpirun -np "$NP" sh -c 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-0}}}; exec $TIMEV "$0.$r" "$@"' \
  "$OUT/dist.time" "$BIN" partition --method "$METHOD" --data "$g" --parts "$PARTS" --out "$WORK/p-dist" >"$OUT/dist.log" 2>&1 ||
  { cat "$OUT/dist.log" >&2; exit 1; }

serial=$(rss "$OUT/serial.time")
max=0
echo "graph: $(grep -o '[0-9]* nodes, [0-9]* edges' "$OUT/gen.log" | head -1), $FEAT features; $PARTS parts"
printf '%-22s %14s %12s\n' process "peak RSS (MB)" wall
printf '%-22s %14d %12s\n' "metis, 1 process" $((serial / 1024)) "$(wall "$OUT/serial.time")"
for r in $(seq 0 $((NP - 1))); do
  k=$(rss "$OUT/dist.time.$r")
  [ -n "$k" ] || { echo "test-dist-partition-rss: no RSS for rank $r" >&2; exit 1; }
  printf '%-22s %14d %12s\n' "$METHOD, rank $r of $NP" $((k / 1024)) "$(wall "$OUT/dist.time.$r")"
  [ "$k" -gt "$max" ] && max=$k
done
ratio=$(awk -v a="$max" -v b="$serial" 'BEGIN{print a/b}')
printf 'max per-rank / serial peak RSS: %.3f (limit %s)\n' "$ratio" "$RATIO"
if ! awk -v r="$ratio" -v l="$RATIO" 'BEGIN{exit !(r <= l)}'; then
  echo "test-dist-partition-rss: FAIL: max per-rank peak RSS $((max / 1024)) MB > $RATIO × serial $((serial / 1024)) MB" >&2
  exit 1
fi
echo "test-dist-partition-rss: ok"
