#!/usr/bin/env bash
# Trains with seeds 1..N and prints the mean ± std of the test accuracy (last epoch, and at the best validation epoch).
#   scripts/seeds.sh N [launcher...] -- [supergcn train flags...]
# e.g. scripts/seeds.sh 10 -- --data internal/testdataset/testdata/cora --feat-norm row
#      scripts/seeds.sh 10 mpirun -np 4 -- --data internal/testdataset/testdata/cora --feat-norm row --bits 2
set -euo pipefail
n=${1:?usage: scripts/seeds.sh N [launcher...] -- [train flags...]}; shift
launcher=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do launcher+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
bin=${SUPERGCN_BIN:-bin/supergcn}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for s in $(seq 1 "$n"); do
  "${launcher[@]}" "$bin" train --quiet --seed "$s" --metrics "$tmp/$s.jsonl" "$@" >/dev/null
  tail -n 1 "$tmp/$s.jsonl"
done | awk '
  { for (i = 1; i <= NF; i++) ; 
    match($0, /"test_acc":[0-9.eE+-]+/); best = substr($0, RSTART + 11, RLENGTH - 11)
    match($0, /"last_test_acc":[0-9.eE+-]+/); last = substr($0, RSTART + 16, RLENGTH - 16)
    n++; sb += best; sb2 += best * best; sl += last; sl2 += last * last
    printf "seed %2d: test at best val %.4f, last epoch %.4f\n", n, best, last }
  END {
    mb = sb / n; ml = sl / n
    sdb = sqrt((sb2 / n - mb * mb) > 0 ? sb2 / n - mb * mb : 0); sdl = sqrt((sl2 / n - ml * ml) > 0 ? sl2 / n - ml * ml : 0)
    printf "mean of %d seeds: last epoch %.2f ± %.2f %%, at best val %.2f ± %.2f %%\n", n, 100 * ml, 100 * sdl, 100 * mb, 100 * sdb }'
