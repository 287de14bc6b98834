#!/usr/bin/env bash
# The whole test suite, as `make test` runs it (after `make deps-test`).
# Parts whose packages are missing and cannot be installed (not root, no
# sudo), or that need root, are skipped, each saying so (SKIP).
# The build follows scripts/buildenv.sh's variables (docs/INSTALL.md).
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/buildenv.sh)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

step() { printf '\n=== %s\n' "$*"; }

step "lint (gofmt, go vet)"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then echo "gofmt needed:"; echo "$bad"; exit 1; fi
go vet -tags "$TAGS" ./...
# The build tag parmetis (a site's ParMETIS instead of PT-Scotch's layer) type-checked against a stand-in header:
# Debian ships no ParMETIS to link.
CGO_CFLAGS="-I$PWD/partition/metis/testdata/parmetis-stub $CGO_CFLAGS" go vet -tags "${TAGS:+$TAGS,}parmetis" ./partition/metis/ ./cmd/supergcn/

step "build"
ldflags="-X main.version=$(git describe --tags --always --dirty 2>/dev/null || echo dev) -X main.commit=$(git rev-parse HEAD 2>/dev/null)$(git diff --quiet HEAD 2>/dev/null || echo -dirty)"
go build -tags "$TAGS" -ldflags "$ldflags" -o bin/supergcn ./cmd/supergcn
bin/supergcn --version
export SUPERGCN_BIN=$PWD/bin/supergcn
bin/supergcn info

step "layering: exchange and train link no cgo; CGO_ENABLED=0 builds all but the MPI binding and its users"
cgo_deps=$(go list -tags "$TAGS" -deps -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./exchange ./train || true)
if [ -n "$cgo_deps" ]; then echo "cgo packages under exchange/train:"; echo "$cgo_deps"; exit 1; fi
nocgo=$(CGO_ENABLED=0 go build ./... 2>&1 || true)
failed=$(printf '%s\n' "$nocgo" | sed -n 's/^# //p' | grep -v -x 'github.com/supergcn/supergcn/mpi' || true)
if [ -n "$failed" ] || ! printf '%s\n' "$nocgo" | grep -q 'package_mpi_is_a_cgo_binding'; then
  echo "CGO_ENABLED=0 go build ./... failed outside package mpi:"; echo "$nocgo"; exit 1
fi
echo "ok: no cgo under exchange/train; without cgo only package mpi (and so comm/mpicomm, cmd/supergcn) is refused"

step "layering: every import goes down docs/DESIGN.md's layers"
scripts/test-layering.sh

step "a clean tree: no binaries or caches tracked, every docs/data file cited by a doc"
scripts/test-tree.sh

step "unit and end-to-end tests (amd64, every kernel path available here)"
go test -tags "$TAGS" -timeout 20m -count=1 ./...

step "race detector over the concurrent packages (short and focused: -race is slow)"
scripts/race.sh

step "pure-Go twins (noasm)"
go test -tags noasm -timeout 10m -count=1 ./aggr/... ./quant/... ./internal/rowk/

step "numeric packages cross-compiled for arm64, under qemu (no cgo)"
if command -v qemu-aarch64-static >/dev/null; then
  GOARCH=arm64 CGO_ENABLED=0 go test -count=1 -exec qemu-aarch64-static ./nn/ ./dense/ ./vcover/ ./labelprop/ ./exchange/ ./graph/ ./comm/ ./partition/ ./internal/...
else
  echo "SKIP: qemu-aarch64-static not installed (apt-get install qemu-user-static)"
fi

for s in test-arm64.sh test-arm64-train.sh fuzz-short.sh test-jobscripts.sh test-bench-layouts.sh test-slurm.sh test-site-build.sh test-docs.sh; do   # (the MPI tests run inside go test, under mpirun)
  if [ -x "scripts/$s" ]; then
    step "$s"
    "scripts/$s"
  fi
done
step "all tests passed"
