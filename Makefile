# supergcn — see README.md. `make run` and `make test` install what is missing first.
GO      ?= go
BIN     := bin/supergcn
# OpenBLAS backs the dense products when its pkg-config file is present.
TAGS    ?= $(shell pkg-config --exists openblas 2>/dev/null && echo openblas)
GOFLAGS_BUILD := -tags '$(TAGS)'
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1

APT_PKGS := libopenmpi-dev openmpi-bin libmetis-dev libptscotch-dev libopenblas-dev qemu-user-static binutils-aarch64-linux-gnu pkg-config bzip2 gcc

.PHONY: deps deps-bench build run test fuzz bench lint fmt clean
deps:
	@scripts/deps.sh $(APT_PKGS)

deps-bench: deps
	@scripts/deps.sh python3-torch

build:
	$(GO) build $(GOFLAGS_BUILD) -o $(BIN) ./cmd/supergcn

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

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(GOFLAGS_BUILD) ./...

clean:
	rm -rf bin
