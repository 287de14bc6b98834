# supergcn — see README.md and docs/INSTALL.md. `make run` and `make test` install what is missing first
# (Debian/Ubuntu, apt-get); `make build` installs nothing and takes a site's libraries:
#   make build MPI_CFLAGS=... MPI_LIBS=... | MPICC=mpiicc | MPI=mpich   METIS_DIR=... SCOTCH_DIR=...
#              BLAS=openblas|gonum OPENBLAS_DIR=...   TAGS=...   (scripts/buildenv.sh)
GO      ?= go
BIN     := bin/supergcn
export MPI_CFLAGS MPI_LIBS MPICC MPI METIS_DIR SCOTCH_DIR BLAS OPENBLAS_DIR TAGS
# Version and commit for `supergcn --version` and the metrics header.
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# The build environment (tags, cgo flags) from the variables above.
BUILDENV = eval "$$(scripts/buildenv.sh)"
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1

# What building and running need.
RUN_PKGS  := libopenmpi-dev openmpi-bin libmetis-dev libptscotch-dev libopenblas-dev pkg-config gcc
# What the whole test suite needs besides: arm64 emulation and cross tools, a one-node Slurm, MPICH
# (the MPICH build test), network namespaces (the emulated cluster). Without root they are skipped.
TEST_PKGS := qemu-user-static binutils-aarch64-linux-gnu gcc-aarch64-linux-gnu slurm-wlm munge python3 \
             iproute2 util-linux bzip2 libmpich-dev mpich python3-torch python3-numpy

.PHONY: deps deps-test deps-bench build build-arm64 run test fuzz bench bench-cluster lint fmt clean
# Where the packages cannot be installed but a site's libraries are named or found (docs/INSTALL.md), go on with those.
deps:
	@scripts/deps.sh $(RUN_PKGS) || { scripts/buildenv.sh >/dev/null && \
	  echo "deps: going on with the MPI and BLAS scripts/buildenv.sh finds"; }

# Optional: what cannot be installed (not root, no sudo) is named and its tests skip.
deps-test: deps
	@scripts/deps.sh --optional $(TEST_PKGS)

deps-bench: deps
	@scripts/deps.sh python3-torch

build:
	@$(BUILDENV) && echo "build: tags '$$TAGS'" && \
	  $(GO) build -tags "$$TAGS" -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/supergcn

# bin/supergcn-arm64: cgo cross-compile against Debian's arm64 MPI, METIS,
# PT-Scotch and OpenBLAS unpacked into build/arm64-sysroot (nothing arm64 is installed).
build-arm64: deps-test
	LDFLAGS='$(LDFLAGS)' scripts/build-arm64.sh

run: deps build
	$(BIN) info
	$(BIN) train

test: deps-test
	scripts/test.sh

# Every fuzz target for FUZZTIME each (default 2m; make test runs 20000 inputs each).
FUZZTIME ?= 2m
fuzz: deps
	FUZZTIME=$(FUZZTIME) scripts/fuzz-short.sh

bench: deps-bench build
	scripts/bench.sh

# The network matrix on an emulated cluster (root; NP, NODES, RATES, SPEC, ... as in the script).
bench-cluster: deps-test build
	scripts/bench-cluster.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(BUILDENV) && $(GO) vet -tags "$$TAGS" ./...

clean:
	rm -rf bin
