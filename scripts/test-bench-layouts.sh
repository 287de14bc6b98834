#!/usr/bin/env bash
# Runs scripts/bench-layouts.sh on a tiny graph in shared memory (2 emulated
# nodes of 2 cores, seconds): a first call measures one layout; a second with
# RESUME=1 and both layouts runs only the missing one and keeps the first
# call's lines; a bad RESUME is refused with a one-line error. Then
# scripts/bench-pairs.sh: one set runs both orders of the pair on one
# layout, the second order on the first's graph and partition.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found"; exit 0; }
[ -x bin/supergcn ] || { echo "test-bench-layouts: bin/supergcn missing (make build)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "test-bench-layouts: FAIL: $*" >&2; exit 1; }
lay() { env NODES=2 C=2 SPEC=nodes=2000,degree=8,classes=4,feat=8 EPOCHS=2 MODELS=gcn CONFIGS="hyb32 hyb2" RATES= \
	WORK="$T/w" "$@" scripts/bench-layouts.sh >"$T/out" 2>"$T/err"; }
runs=$T/w/layouts-2x2-runs.csv

lay RANKS=1 || { cat "$T/err" >&2; fail "first call"; }
[ "$(tail -n +2 "$runs" | wc -l)" = 2 ] || fail "first call: want 2 runs in $runs, got: $(cat "$runs")"
first=$(tail -n +2 "$runs")

lay RANKS="2 1" RESUME=1 || { cat "$T/err" >&2; fail "resumed call"; }
grep -q "RESUME=1: 2 run(s) already in" "$T/err" || fail "resumed call did not report the 2 runs it skipped: $(cat "$T/err")"
[ "$(tail -n +2 "$runs" | wc -l)" = 4 ] || fail "resumed call: want 4 runs, got: $(cat "$runs")"
[ "$(tail -n +2 "$runs" | head -n 2)" = "$first" ] || fail "resumed call changed the first call's lines"
[ "$(awk -F, 'NR > 1 && $4 == 4' "$runs" | wc -l)" = 2 ] || fail "resumed call: want the 2 runs of 4 ranks, got: $(cat "$runs")"
[ "$(awk -F, 'NR > 1' "$T/w/layouts-2x2.csv" | wc -l)" = 4 ] || fail "layouts-2x2.csv lacks a run"

if lay RESUME=yes; then fail "RESUME=yes accepted"; fi
[ "$(wc -l <"$T/err")" = 1 ] && grep -q "RESUME=yes is not 0 or 1" "$T/err" || fail "RESUME=yes: $(cat "$T/err")"
pairs() { env NODES=2 C=2 RANKS=1 SPEC=nodes=2000,degree=8,classes=4,feat=8 EPOCHS=2 RATES= LINKS_SHM=1 \
	WORK="$T/p" "$@" scripts/bench-pairs.sh >"$T/out" 2>"$T/err"; }
pairs SETS=1 || { cat "$T/err" >&2; fail "bench-pairs"; }
[ "$(tail -n +2 "$T/p/pairs.csv" | wc -l)" = 4 ] || fail "bench-pairs: want 4 runs, got: $(cat "$T/p/pairs.csv")"
[ "$(awk -F, 'NR > 1 { print $2, $3 }' "$T/p/pairs.csv" | sort -u | tr '\n' ' ')" = "A hyb32 B hyb2 " ] ||
	fail "bench-pairs: want order A to run hyb32 first and B hyb2: $(cat "$T/p/pairs.csv")"
[ -L "$T/p/s1B/graph.sgb" ] && [ -L "$T/p/s1B/p2" ] || fail "bench-pairs: order B made its own graph or partition"
grep -q "^| 1 A | gcn | shm | 2 × 2 | hyb32 | [0-9.]* |$" "$T/out" || fail "bench-pairs: no ratio line: $(cat "$T/out")"
if pairs SETS=0; then fail "SETS=0 accepted"; fi
[ "$(wc -l <"$T/err")" = 1 ] && grep -q "SETS=0 is not a count" "$T/err" || fail "SETS=0: $(cat "$T/err")"
echo "test-bench-layouts: ok"
