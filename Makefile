# HubScope: the two set-up commands are `make demo` and `make test` (see README.md).
# Each installs the system packages it needs (scripts/setup-deps.sh; idempotent, quiet
# when everything is present).
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
BIN := bin
OUT ?= out

.PHONY: demo test helper gui deps-demo deps-test vet fmt-check cuda-vet bench clean

# Runs the whole pipeline on the built-in phantom and writes the bundle to $(OUT)/demo.
demo: deps-demo helper
	$(BIN)/hubscope-helper run --demo --out $(OUT)/demo --overwrite

# Runs every check CI runs: formatting, vet (also of the CUDA build), the race-checked
# test suite with the Python cross-checks required (HUBSCOPE_STRICT=1), and the pure-Go
# fallback kernels.
test: deps-test fmt-check vet cuda-vet
	HUBSCOPE_STRICT=1 $(GO) test -race -count=1 -timeout 30m ./...
	HUBSCOPE_STRICT=1 $(GO) test -count=1 -tags purego ./helper/backend/cpu/... ./helper/fc/...
	$(GO) build -o $(BIN)/hubscope-helper ./cmd/hubscope-helper
	scripts/cli-smoke.sh $(BIN)/hubscope-helper

helper:
	$(GO) build -o $(BIN)/hubscope-helper ./cmd/hubscope-helper

gui: deps-gui
	$(GO) build -o $(BIN)/hubscope ./cmd/hubscope

deps-demo:
	@scripts/setup-deps.sh demo

deps-test:
	@scripts/setup-deps.sh test gui cuda

deps-gui:
	@scripts/setup-deps.sh gui

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# The CUDA backend must compile and vet without a GPU (headers from nvidia-cuda-dev).
cuda-vet:
	CGO_ENABLED=1 $(GO) vet -tags cuda ./helper/backend/cuda/... ./kernels/...

bench: helper
	$(BIN)/hubscope-helper bench

clean:
	rm -rf $(BIN) $(OUT)
