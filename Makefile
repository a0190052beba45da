# HubScope: the two set-up commands are `make demo` and `make test` (see README.md).
# Each installs the system packages it needs (scripts/setup-deps.sh; idempotent, quiet
# when everything is present).
SHELL := /bin/bash
export PATH := /usr/local/go/bin:$(PATH)
GO ?= go
BIN := bin
OUT ?= out

.PHONY: demo test check helper gui deps-demo deps-test deps-gui vet lint fmt-check cuda-vet wasm-vet bench clean

# Runs the whole pipeline on the built-in phantom and writes the bundle to $(OUT)/demo.
demo: deps-demo helper
	$(BIN)/hubscope-helper run --demo --out $(OUT)/demo --overwrite

# The pinned BIDS validator that scripts/setup-deps.sh's bids profile puts in the cache (the
# synthetic cohort's BIDS input must pass it: helper/synth TestCohortPassesBIDSValidator).
BIDS_VALIDATOR ?= $(or $(HUBSCOPE_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/hubscope)/bin/bids-validator

# Runs every check CI runs: formatting, vet (also of the CUDA build and of the browser build),
# the race-checked test suite with the Python cross-checks required (HUBSCOPE_STRICT=1), the
# pure-Go fallback kernels and gzip reader, the helper's command-line smoke test, 10 s of fuzzing per reader of
# untrusted bytes (scripts/fuzz.sh), the -tags cuda helper
# started without a GPU (it must fall back to the CPU), the desktop app's
# real-window smoke test under Xvfb and the browser build's smoke test in headless Chromium.
test: deps-test fmt-check vet lint cuda-vet wasm-vet
	HUBSCOPE_STRICT=1 HUBSCOPE_BIDS_VALIDATOR=$(BIDS_VALIDATOR) $(GO) test -race -count=1 -timeout 30m ./...
	HUBSCOPE_STRICT=1 $(GO) test -count=1 -tags purego ./helper/backend/cpu/... ./helper/fc/... ./helper/nifti/...
	$(GO) build -o $(BIN)/hubscope-helper ./cmd/hubscope-helper
	scripts/cli-smoke.sh $(BIN)/hubscope-helper
	scripts/slurm-smoke.sh $(BIN)/hubscope-helper
	scripts/fuzz.sh
	scripts/cuda-smoke.sh
	scripts/gui-smoke.sh
	scripts/web-smoke.sh

# The quick check for contributors: formatting, vet and the Go tests, without the race detector
# and without the CUDA, GUI and browser smoke tests. It installs only what the desktop app needs
# to compile (the gui profile); Python cross-checks run when Debian's python3 packages are
# present and are skipped otherwise.
check: deps-gui fmt-check vet
	$(GO) test -count=1 ./...

helper:
	$(GO) build -o $(BIN)/hubscope-helper ./cmd/hubscope-helper

gui: deps-gui
	$(GO) build -o $(BIN)/hubscope ./cmd/hubscope

web:
	scripts/build-web.sh

deps-demo:
	@scripts/setup-deps.sh demo

deps-test:
	@scripts/setup-deps.sh test gui cuda bids

deps-gui:
	@scripts/setup-deps.sh gui

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# staticcheck, pinned (the Go proxy's honnef.co/go/tools v0.8.2, built by go run on first use).
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) ./...

# The CUDA backend must compile and vet without a GPU (headers from nvidia-cuda-dev).
cuda-vet:
	CGO_ENABLED=1 $(GO) vet -tags cuda ./helper/backend/cuda/... ./kernels/... ./helper/group/... ./helper/pipeline/...

# The app and its IPC client also build for the browser (GOOS=js GOARCH=wasm); their tests
# that start a helper or a server are desktop-only (//go:build !js), the rest vet there too.
wasm-vet:
	GOOS=js GOARCH=wasm $(GO) build -o /dev/null ./cmd/hubscope
	GOOS=js GOARCH=wasm $(GO) vet ./app/... ./ipc/...

bench: helper
	$(BIN)/hubscope-helper bench

clean:
	rm -rf $(BIN) $(OUT)
