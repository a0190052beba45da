#!/usr/bin/env bash
# The helper built with -tags cuda, run where the NVIDIA driver library is installed but no GPU
# works (CI: Debian's libcuda1 without a device). It must start (gorgonia.org/cu exits the
# process when cuInit fails; helper/backend/cuda/initguard.go interposes cuInit), say why
# CUDA is unusable, finish an analysis on the CPU with --backend auto, and with --backend
# cuda fail with the driver's reason and leave no bundle. On a machine with a GPU it only
# checks that `version` names the GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
H=$tmp/hubscope-helper-cuda
fail() { echo "cuda-smoke: $*" >&2; exit 1; }
# Linking needs the driver library (Debian: libcuda1, which nvidia-cuda-dev pulls in). Where
# the distribution's CUDA headers come without it, the CUDA helper cannot be linked at all:
# say so loudly rather than fail the whole test run (cuda-vet still compiles the package).
printf 'int cuInit(unsigned int);\nint main(void){return cuInit(0);}\n' > "$tmp/link.c"
if ! ${CC:-gcc} -o "$tmp/link" "$tmp/link.c" -lcuda 2> "$tmp/link.err"; then
    echo "cuda-smoke: SKIPPED — the linker finds no libcuda.so here ($(head -1 "$tmp/link.err")); install the NVIDIA driver's libcuda (Debian: libcuda1) to build the CUDA helper"
    exit 0
fi
CGO_ENABLED=1 go build -tags cuda -o "$H" ./cmd/hubscope-helper

"$H" version > "$tmp/version.txt" 2>&1 || { cat "$tmp/version.txt"; fail "version exited with an error"; }
cat "$tmp/version.txt"
if grep -q "compute capability" "$tmp/version.txt"; then
    echo "cuda-smoke: a GPU works here; the no-GPU checks do not apply"
    exit 0
fi
grep -q "no usable CUDA device" "$tmp/version.txt" || fail "version does not say why CUDA is unusable"

"$H" synth --out "$tmp/p.nii.gz" --voxel-mm 8 > /dev/null 2>&1 || fail "synth failed"
"$H" run --backend auto --metrics basic --out "$tmp/auto" "$tmp/p.nii.gz" > "$tmp/auto.log" 2>&1 ||
    { tail -20 "$tmp/auto.log"; fail "run --backend auto failed without a GPU"; }
grep -q '"backend": "cpu"' "$tmp/auto/metrics.json" || fail "auto did not fall back to the CPU backend"
grep -q "using the CPU backend (.*no usable CUDA device" "$tmp/auto.log" || fail "auto did not say why it uses the CPU"

if "$H" run --backend cuda --metrics basic --out "$tmp/cuda" "$tmp/p.nii.gz" > "$tmp/cuda.log" 2>&1; then
    fail "run --backend cuda succeeded without a GPU"
fi
grep -q "no usable CUDA device" "$tmp/cuda.log" || { cat "$tmp/cuda.log"; fail "--backend cuda did not give the driver's reason"; }
[ ! -e "$tmp/cuda" ] || fail "--backend cuda left a bundle behind"
echo "cuda-smoke: ok (starts without a GPU, falls back to the CPU on auto, refuses --backend cuda in words)"
