#!/usr/bin/env bash
# The cgo arm64 build (scripts/build-arm64.sh: Debian's arm64 Open MPI, METIS,
# PT-Scotch, OpenBLAS) runs one training under qemu: `info` must name the
# arm64 kernels, METIS must partition, and the loss after 20 epochs must
# match the amd64 binary's to 1e-3 (different SIMD kernels and FMA order).
set -euo pipefail
cd "$(dirname "$0")/.."
# Skipped (exit 0), saying so, without qemu or the cross compiler, or without
# root the first time (the sysroot's packages need dpkg --add-architecture).
S=$PWD/build/arm64-sysroot
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
skip() { echo "test-arm64-train: SKIP: $*"; exit 0; }
[ -n "$qemu" ] || skip "qemu-aarch64-static not installed (apt-get install qemu-user-static)"
command -v aarch64-linux-gnu-gcc >/dev/null || skip "aarch64-linux-gnu-gcc not installed (apt-get install gcc-aarch64-linux-gnu)"
if [ ! -f "$S/.complete" ] && [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
	skip "building the arm64 sysroot needs root once (dpkg --add-architecture arm64)"
fi
scripts/build-arm64.sh
arm() { "$qemu" -L "$S" -E "LD_LIBRARY_PATH=$(scripts/build-arm64.sh --libpath)" bin/supergcn-arm64 "$@"; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
info=$(arm info --no-mpi)
grep -q "on linux/arm64" <<<"$info" || { echo "test-arm64-train: info: $info" >&2; exit 1; }
grep -q "METIS 5" <<<"$info" || { echo "test-arm64-train: no METIS in: $info" >&2; exit 1; }
echo "$info" | sed 's/^/test-arm64-train: /'
SPEC=nodes=4000,degree=8,classes=4,feat=16,seed=2
arm partition --synthetic "$SPEC" --parts 2 --method metis --out "$T/p2" | tail -n 1
args=(train --synthetic "$SPEC" --epochs 20 --threads 2 --mpi off --quiet)
arm "${args[@]}" --metrics "$T/arm.jsonl"
TAGS=${TAGS-$(pkg-config --exists openblas 2>/dev/null && echo openblas || true)}
go build -tags "$TAGS" -o "$T/supergcn" ./cmd/supergcn
"$T/supergcn" "${args[@]}" --metrics "$T/amd.jsonl" >/dev/null
last() { grep '"epoch":20,' "$1" | sed 's/.*"loss":\([^,]*\),.*/\1/'; }
a=$(last "$T/arm.jsonl") b=$(last "$T/amd.jsonl")
awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; if (d > 1e-3 * b) { print "test-arm64-train: loss after 20 epochs " a " on arm64, " b " on amd64"; exit 1 } }'
echo "test-arm64-train: arm64 (qemu) loss after 20 epochs $a, amd64 $b"
