# supergcn — see README.md. `make run` and `make test` install what is missing first.
GO      ?= go
BIN     := bin/supergcn
# OpenBLAS backs the dense products when its pkg-config file is present.
TAGS    ?= $(shell pkg-config --exists openblas 2>/dev/null && echo openblas)
# Version and commit for `supergcn --version` and the metrics header.
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
GOFLAGS_BUILD := -tags '$(TAGS)' -ldflags '$(LDFLAGS)'
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1

APT_PKGS := libopenmpi-dev openmpi-bin libmetis-dev libptscotch-dev libopenblas-dev qemu-user-static binutils-aarch64-linux-gnu pkg-config bzip2 gcc \
            slurm-wlm munge python3 gcc-aarch64-linux-gnu iproute2 util-linux

.PHONY: deps deps-bench build build-arm64 run test fuzz bench bench-cluster lint fmt clean
deps:
	@scripts/deps.sh $(APT_PKGS)

deps-bench: deps
	@scripts/deps.sh python3-torch

build:
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN) ./cmd/supergcn

# bin/supergcn-arm64: cgo cross-compile against Debian's arm64 MPI, METIS,
# PT-Scotch and OpenBLAS unpacked into build/arm64-sysroot (nothing arm64 is installed).
build-arm64: deps
	LDFLAGS='$(LDFLAGS)' scripts/build-arm64.sh

run: deps build
	$(BIN) info
	$(BIN) train

test: deps
	scripts/test.sh

# Every fuzz target for FUZZTIME each (default 2m; make test runs them 10s).
FUZZTIME ?= 2m
fuzz: deps
	FUZZTIME=$(FUZZTIME) scripts/fuzz-short.sh

bench: deps-bench build
	scripts/bench.sh

# The network matrix on an emulated cluster (root; NP, NODES, RATES, SPEC, ... as in the script).
bench-cluster: deps build
	scripts/bench-cluster.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(GOFLAGS_BUILD) ./...

clean:
	rm -rf bin
