#!/usr/bin/env bash
# GPU verification of the CUDA backend, run on a GPU machine from the repository root.
#
# Build here (no GPU needed), then carry .gpu/ to the GPU machine:
#   scripts/gpu-check.sh build          # .gpu/cuda.test, .gpu/hubscope-helper-cuda, .gpu/torch_fc.py, .gpu/data/
# On the GPU machine (Go is not needed there; python3 with torch, numpy, scipy is):
#   scripts/gpu-check.sh [all|test|sanitize|backend|bench|peer|helper|w3]   # logs under $OUT (default ./gpu-out)
#
# test:     nvidia-smi; the conformance suite (fctest) and the backend's own tests (random,
#           tie-heavy int16-like, real scans from .gpu/data) with HUBSCOPE_REQUIRE_GPU=1 and
#           HUBSCOPE_STRICT=1, so nothing skips silently; then the same scans through the whole
#           pipeline on both backends (helper/pipeline TestBackendsGiveSameBundles).
# sanitize: compute-sanitizer memcheck and racecheck on a small case.
# backend:  the backend alone on W1, W2, W4, W5 (prepare + histogram + edge pass, medians of 3).
# bench:    BENCHMARKS.md W1, W1 at fixed r, W2, W4, W5 through fc.Build (median of 3 after a
#           warm-up; HUBSCOPE_BENCH_RUNS changes the count, BENCH filters the workloads).
# peer:     the torch peer (shared/peers/torch_fc.py) on the same workloads, same machine.
# helper:   `hubscope-helper bench --workloads w1,w2,w4,w5` built with -tags cuda: ours and the
#           torch peer alternating in the same call (medians of 3 after a warm-up).
# ceilings: torch GEMM rates on this GPU in the same call (fp32 SIMT and plain TF32, 8192³,
#           medians of 5), the ceilings the construction passes' TFLOP/s are compared with.
# w8:       W8, the group mean Fisher z of 197 subjects × 58,523 × 200 at r̄ > 0.5 (BenchmarkGroup,
#           3×FP16 tensor cores (the default), from the plain planes, with the atanhf fold, fp32
#           SIMT and 3×TF32; HUBSCOPE_GROUP_UNITS picks), then the torch peer (--subjects 197) in the same call.
# w3:       W3 (Pearson N = 10⁶, L = 128, density 1 %) once after a warm-up, under
#           /usr/bin/time -v for the peak host RSS (GOMEMLIMIT keeps the warm-up's network
#           from doubling the heap).
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T=.gpu/cuda.test

if [ "$what" = build ]; then
    set -e
    mkdir -p .gpu/data
    go test -c -tags cuda -ldflags="-s -w" -o "$T" ./helper/backend/cuda
    go test -c -tags cuda -ldflags="-s -w" -o .gpu/pipeline.test ./helper/pipeline
    CGO_ENABLED=1 go build -tags cuda -ldflags="-s -w" -o .gpu/hubscope-helper-cuda ./cmd/hubscope-helper
    cp /work/shared/peers/torch_fc.py .gpu/
    for f in haxby2001_slice_bold.nii.gz haxby2001_slice_mask.nii.gz haxby2001_run001_bold_25mm.nii.gz \
             haxby2001_mask_25mm_brain.nii.gz nipy_functional.nii.gz; do
        cp /work/shared/data/$f .gpu/data/
    done
    du -sh .gpu
    exit 0
fi

export HUBSCOPE_REQUIRE_GPU=1 HUBSCOPE_STRICT=1 HUBSCOPE_DATA=$PWD/.gpu/data
export HUBSCOPE_PYTHON=${HUBSCOPE_PYTHON:-python3}
SAN=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}

run_tests() {
    nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
    head -15 "$OUT/nvidia-smi.txt"
    timeout 300 "$T" -test.v -test.timeout 290s \
        -test.run 'TestAvailable|TestConformance|TestConformanceTF32x3|TestManyTilesAgainstReference|TestAgainstScipy|TestSinkErrorAndReuse|TestRealScans|TestBadSeries|TestSplitBlocks|TestKendallUnitsAgree|TestCorrelationUnitsAgree|TestRowEmission|TestRowPathBuild|TestRowSelection|TestGroup|TestInjectedOutOfMemory|TestGraphAccelerator' \
        > "$OUT/tests.log" 2>&1
    echo "tests exit $?"
    # CPU and CUDA backends on the same scans: the same bundles up to the tolerance
    timeout 400 .gpu/pipeline.test -test.v -test.timeout 390s -test.run 'TestBackendsGiveSameBundles|TestGroupBackendsGiveSameBundles' > "$OUT/bundles.log" 2>&1
    echo "bundle comparison exit $?"
    grep -E '^\s+--- (PASS|FAIL)|common edges|differs|on the CPU' "$OUT/bundles.log" | head -30
    grep -E '^(--- FAIL|FAIL|ok|PASS)|^    .*(deviation|Available|N=)|backend_test.go|realscan_test.go|backend_test.go:4[56][0-9]' "$OUT/tests.log" | head -60
    grep -c -- '--- PASS' "$OUT/tests.log" | sed 's/^/subtests passed: /'
    grep -c -- '--- FAIL' "$OUT/tests.log" | sed 's/^/subtests failed: /'
}

run_sanitize() {
    # One run per test: go test -run splits its pattern at every slash, so alternatives with
    # subtest paths cannot share one pattern. racecheck is slower: one selection case (a
    # held-list retry and a compaction) instead of eight.
    for tool in memcheck racecheck; do
        sel='TestRowSelection/pearson/rows300/stage100'
        [ $tool = racecheck ] && sel='TestRowSelection/pearson/rows300/stage100/absfalse/hold0.2'
        : > "$OUT/sanitizer-$tool.log"
        for pat in TestSinkErrorAndReuse TestManyTilesAgainstReference/Kendall TestRowEmission/pearson/rows300/stage100 "$sel" TestCorrelationUnitsAgree TestGroupFisherZ/pearson/simt TestGroupFisherZ/spearman/tf32x3 TestGroupFisherZ/pearson/f16x3 TestGroupFisherZ/spearman/f16x3-plain; do
            timeout 150 "$SAN" --tool $tool --error-exitcode 9 "$T" -test.v -test.run "^${pat}" >> "$OUT/sanitizer-$tool.log" 2>&1
            echo "compute-sanitizer $tool $pat: exit $? ($(grep -c -- '--- PASS' "$OUT/sanitizer-$tool.log") passes so far)"
        done
        grep -E 'ERROR SUMMARY' "$OUT/sanitizer-$tool.log" | sort | uniq -c
    done
}

run_bench() {
    timeout ${BENCH_TIMEOUT:-400} "$T" -test.run "^$" -test.bench "BenchmarkWorkloads/${BENCH:-W[1245]}" -test.benchtime 1x -test.timeout 590s \
        >> "$OUT/bench.log" 2>&1
    echo "bench exit $?"
    grep -E '^\{|Benchmark|FAIL' "$OUT/bench.log" | grep -v '"runs"' || true
    grep '^{' "$OUT/bench.log" | python3 -c '
import sys, json
for line in sys.stdin:
    r = json.loads(line)
    if r.get("runs") is None: continue
    print("%-10s ours %.3f s  edges %d  density %.5f  %s  %s %s" % (r["workload"], r["seconds"], r["edges"], r["density"],
          " ".join("%s=%.3f" % (p["Stage"], p["Seconds"]) for p in r["passes"]), "backend-only:", " ".join("%s=%.4g" % kv for kv in sorted(r["backend_only"].items()))))
' | sort -u
}

run_backend() {
    timeout ${BENCH_TIMEOUT:-300} "$T" -test.run "^$" -test.bench "BenchmarkBackend/${BENCH:-.}" -test.benchtime 1x -test.timeout 590s \
        > "$OUT/backend.log" 2>&1
    echo "backend bench exit $?"
    grep '^{' "$OUT/backend.log" | python3 -c '
import sys, json
for line in sys.stdin:
    r = json.loads(line)
    print("%-4s %-8s backend two-pass %.4f s: %s" % (r["workload"], r["measure"], r["two_pass_s"],
          " ".join("%s=%.4g" % kv for kv in sorted(r["backend_only"].items()))))
'
}

run_peer() {
    : > "$OUT/peer.log"
    for args in "--n 60000 --l 200 --density 0.01" "--n 60000 --l 200 --r 0.165" \
                "--n 200000 --l 128 --density 0.01" "--n 100000 --l 128 --density 0.001 --measure kendall" \
                "--n 200000 --l 128 --density 0.01 --measure spearman"; do
        timeout 200 python3 .gpu/torch_fc.py $args >> "$OUT/peer.log" 2>&1 || echo "peer $args failed" >> "$OUT/peer.log"
    done
    cat "$OUT/peer.log"
}

run_helper() {
    timeout ${BENCH_TIMEOUT:-400} .gpu/hubscope-helper-cuda bench --workloads ${WORKLOADS:-w1,w2,w4,w5} --peers .gpu \
        --python "$HUBSCOPE_PYTHON" --repeat 3 --json "$OUT/helper-bench.json" > "$OUT/helper-bench.log" 2>&1
    echo "helper bench exit $?"
    grep -vE '^\s*$' "$OUT/helper-bench.log" | grep -vi 'progress' | tail -20
}

run_ceilings() {
    python3 - > "$OUT/ceilings.log" 2>&1 <<'PY'
import torch
n = 8192
a = torch.randn(n, n, device="cuda"); b = torch.randn(n, n, device="cuda")
for name, tf32 in (("fp32", False), ("tf32", True)):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    for _ in range(3): a @ b
    ts = []
    for _ in range(5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); a @ b; e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e) / 1e3)
    ts.sort()
    print("ceiling %s GEMM %d^3: %.1f TFLOP/s (%s)" % (name, n, 2 * n**3 / ts[2] / 1e12, torch.cuda.get_device_name()))
PY
    cat "$OUT/ceilings.log"
}

run_w3() {
    GOMEMLIMIT=${GOMEMLIMIT:-44GiB} HUBSCOPE_BENCH_RUNS=1 BENCH=W3 BENCH_TIMEOUT=${BENCH_TIMEOUT:-300} \
        /usr/bin/time -v -o "$OUT/w3-time.txt" bash -c "$(declare -f run_bench); T=$T OUT=$OUT run_bench"
    grep -E 'Maximum resident|Elapsed' "$OUT/w3-time.txt"
}

run_w8() {
    HUBSCOPE_BENCH_RUNS=${HUBSCOPE_BENCH_RUNS:-3} timeout 300 "$T" -test.run '^$' -test.bench 'BenchmarkGroup' -test.benchtime 1x \
        -test.timeout 295s > "$OUT/w8.log" 2>&1
    echo "w8 exit $?"
    grep -E '^\{|FAIL|panic' "$OUT/w8.log"
    timeout 200 python3 .gpu/torch_fc.py --subjects 197 --n 58523 --l 200 --r 0.5 > "$OUT/w8-peer.log" 2>&1
    echo "w8 peer exit $?"
    tail -1 "$OUT/w8-peer.log"
}

case $what in
test) run_tests ;;
sanitize) run_sanitize ;;
bench) run_bench ;;
backend) run_backend ;;
peer) run_peer ;;
helper) run_helper ;;
w3) run_w3 ;;
w8) run_w8 ;;
ceilings) run_ceilings ;;
all) run_tests; run_sanitize; run_backend; run_bench; run_peer ;;
*) echo "usage: $0 [build|all|test|sanitize|backend|bench|peer|helper|w3|w8|ceilings]" >&2; exit 2 ;;
esac
