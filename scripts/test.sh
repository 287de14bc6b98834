#!/usr/bin/env bash
# The whole test suite, as `make test` runs it (after `make deps`).
set -euo pipefail
cd "$(dirname "$0")/.."
TAGS=$(pkg-config --exists openblas 2>/dev/null && echo openblas || true)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

step() { printf '\n=== %s\n' "$*"; }

step "lint (gofmt, go vet)"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then echo "gofmt needed:"; echo "$bad"; exit 1; fi
go vet -tags "$TAGS" ./...

step "build"
go build -tags "$TAGS" -o bin/supergcn ./cmd/supergcn
export SUPERGCN_BIN=$PWD/bin/supergcn
bin/supergcn info

step "unit and end-to-end tests (amd64, every kernel path available here)"
go test -tags "$TAGS" -timeout 20m -count=1 ./...

step "race detector over the concurrent packages (short and focused: -race is slow)"
scripts/race.sh

step "pure-Go twins (noasm)"
go test -tags noasm -timeout 10m -count=1 ./aggr/... ./quant/...

if command -v qemu-aarch64-static >/dev/null; then
  step "numeric packages cross-compiled for arm64, under qemu (no cgo)"
  GOARCH=arm64 CGO_ENABLED=0 go test -count=1 -exec qemu-aarch64-static ./nn/ ./dense/ ./vcover/ ./labelprop/ ./exchange/ ./graph/ ./comm/ ./partition/
fi

for s in test-arm64.sh fuzz-short.sh; do   # (the MPI tests run inside go test, under mpirun)
  if [ -x "scripts/$s" ]; then
    step "$s"
    "scripts/$s"
  fi
done
step "all tests passed"
