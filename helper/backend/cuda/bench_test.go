//go:build cuda

package cuda

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/synth"
	"gorgonia.org/cu"
)

// workloads are BENCHMARKS.md's GPU construction workloads (W1–W5) and W1 with the
// torch peer's fixed threshold. Timed span: the N×L float32 matrix in host memory → CSR in
// host memory (fc.Build: Prepare, every pass, assembly); the context and module load are
// outside it, as the peer's CUDA initialisation is.
var workloads = []struct {
	name    string
	m       fc.Measure
	n, l    int
	density float64 // Density mode, else Strength at r
	r       float64
}{
	{"W1", fc.Pearson, 60_000, 200, 0.01, 0},
	{"W1-r0.165", fc.Pearson, 60_000, 200, 0, 0.165},
	{"W2", fc.Pearson, 200_000, 128, 0.01, 0},
	{"W4", fc.Kendall, 100_000, 128, 0.001, 0},
	{"W5", fc.Spearman, 200_000, 128, 0.01, 0},
	{"W3", fc.Pearson, 1_000_000, 128, 0.01, 0}, // ~5·10⁹ edges, 40 GB of CSR: run alone (gpu-check.sh w3)
}

var seriesCache sync.Map // "n×l" → []float32

// randomSeries is standard normal data, seeded (the density modes fix the output size
// whatever the structure).
func randomSeries(n, l int) []float32 {
	key := fmt.Sprintf("%d×%d", n, l)
	if x, ok := seriesCache.Load(key); ok {
		return x.([]float32)
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(l)))
	x := make([]float32, n*l)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	seriesCache.Store(key, x)
	return x
}

// BenchmarkWorkloads prints one JSON line per workload (median of b.N timed builds after a
// warm-up, pass timings, FLOP rate) for scripts/gpu-check.sh. Run with -benchtime=1x: each
// iteration times at least 3 builds.
func BenchmarkWorkloads(b *testing.B) {
	requireGPU(b)
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			be, err := New(Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			x := randomSeries(w.n, w.l)
			cfg := fc.Config{Measure: w.m, Mode: fc.Density, Density: w.density}
			if w.density == 0 {
				cfg = fc.Config{Measure: w.m, Mode: fc.Strength, Threshold: w.r}
			}
			ctx := context.Background()
			if _, _, err := fc.Build(ctx, be, x, w.n, w.l, cfg, nil); err != nil { // warm-up
				b.Fatal(err)
			}
			var times []float64
			var rpt *fc.Report
			b.ResetTimer()
			runs := 3
			if r, err := strconv.Atoi(os.Getenv("HUBSCOPE_BENCH_RUNS")); err == nil && r > 0 {
				runs = r
			}
			for i := 0; i < max(b.N, runs); i++ { // a median of 3 (HUBSCOPE_BENCH_RUNS) per iteration; run with -benchtime=1x
				t0 := time.Now()
				nw, r, err := fc.Build(ctx, be, x, w.n, w.l, cfg, nil)
				if err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0).Seconds())
				rpt = r
				_ = nw
			}
			b.StopTimer()
			own := backendOnly(b, be, x, w.n, w.l, w.m, rpt.Threshold, rpt.ThresholdInclusive)
			slices.Sort(times)
			median := times[len(times)/2]
			passes := 0
			for _, p := range rpt.Passes {
				if p.Blocks > 0 {
					passes++
				}
			}
			// N(N−1)/2 pairs × L multiply-adds × 2 flops per block pass (Kendall: the same count
			// of pair·time-point work, quoted for comparison, not floating-point operations).
			flops := float64(w.n) * float64(w.n-1) * float64(w.l) * float64(passes)
			b.ReportMetric(median, "s/median")
			b.ReportMetric(flops/median/1e12, "TFLOP/s")
			b.ReportMetric(float64(rpt.Edges), "edges")
			line, _ := json.Marshal(map[string]any{
				"ours": "hubscope-cuda", "workload": w.name, "measure": w.m.String(), "n": w.n, "l": w.l,
				"density_target": w.density, "r": w.r, "seconds": median, "runs": times,
				"edges": rpt.Edges, "density": rpt.Density, "threshold": rpt.Threshold,
				"block_rows": rpt.BlockRows, "passes": rpt.Passes, "notes": rpt.Notes,
				"tflops_nominal": flops / median / 1e12, "device": be.Device(), "backend_only": own,
			})
			fmt.Fprintln(os.Stdout, string(line))
		})
	}
}

// backendOnly times the backend's own share of a density build, without the driver's host
// work: Prepare, a histogram pass with 2²⁰ bins over [−1, 1] (as the torch peer's histc) and
// over [t − 0.05, 1] (as the driver's narrowed pass 1), and one edge pass at the build's
// threshold whose sink only counts (medians of 3). The two-pass figure is prepare + narrowed
// histogram + edges.
func backendOnly(b *testing.B, be fc.Backend, x []float32, n, l int, m fc.Measure, thr float64, inclusive bool) map[string]float64 {
	ctx := context.Background()
	blocks := fc.PlanBlocks(n, be.BlockRows())
	med := func(f func() error) float64 {
		var ts []float64
		for r := 0; r < 3; r++ {
			t0 := time.Now()
			if err := f(); err != nil {
				b.Fatal(err)
			}
			ts = append(ts, time.Since(t0).Seconds())
		}
		slices.Sort(ts)
		return ts[1]
	}
	var edges int
	out := map[string]float64{}
	out["prepare_s"] = med(func() error { return be.Prepare(ctx, x, n, l, m) })
	bk := be.(*backend)
	out["upload_s"], out["prep_kernels_s"] = bk.uploadTime.Seconds(), bk.kernelTime.Seconds()
	out["free_previous_s"], out["prepare_inside_s"] = bk.freeTime.Seconds(), bk.prepareTime.Seconds()
	out["histogram_s"] = med(func() error {
		return be.Run(ctx, blocks, fc.Op{Kind: fc.OpHistogram, Lo: -1, Hi: 1, Bins: 1 << 20}, func(*fc.BlockResult) error { return nil })
	})
	// The driver's density mode narrows pass 1 to the top of the distribution: most pairs
	// fall below Lo into bin 0.
	out["histogram_narrow_s"] = med(func() error {
		return be.Run(ctx, blocks, fc.Op{Kind: fc.OpHistogram, Lo: thr - 0.05, Hi: 1, Bins: 1 << 20}, func(*fc.BlockResult) error { return nil })
	})
	out["edges_s"] = med(func() error {
		edges = 0
		return be.Run(ctx, blocks, fc.Op{Kind: fc.OpEdges, Threshold: thr, Inclusive: inclusive}, func(r *fc.BlockResult) error {
			edges += len(r.Edges)
			return nil
		})
	})
	// N(N−1)/2 pairs × L multiply-adds × 2 flops (the useful work; 3×TF32 issues three
	// tensor-core products for each).
	out["edges_tflops"] = float64(n) * float64(n-1) * float64(l) / out["edges_s"] / 1e12
	out["edges"] = float64(edges)
	out["blocks"] = float64(len(blocks))
	return out
}

// backendWorkloads time the backend alone on the construction workloads (no fc driver): the
// thresholds are the exact-density cuts an fc.Build found on the same seeded data on an H200
// (2026-11-22), so the edge pass emits what the density build's emit pass does.
var backendWorkloads = []struct {
	name string
	m    fc.Measure
	n, l int
	thr  float64
}{
	{"W1", fc.Pearson, 60_000, 200, 0.16440947353839874},
	{"W2", fc.Pearson, 200_000, 128, 0.20544467866420746},
	{"W4", fc.Kendall, 100_000, 128, 0.1838090568780899},
	{"W5", fc.Spearman, 200_000, 128, 0.20568576455116272},
}

// BenchmarkBackend prints one JSON line per workload with the backend-only medians (see
// backendOnly). Run with -benchtime=1x.
func BenchmarkBackend(b *testing.B) {
	requireGPU(b)
	for _, w := range backendWorkloads {
		// Pearson/Spearman: the default fp32 SIMT product and the 3×TF32 tensor-core one.
		units := []string{"simt", "tc"}
		if w.m == fc.Kendall {
			units = []string{"default"}
		}
		for _, unit := range units {
			b.Run(w.name+"/"+unit, func(b *testing.B) {
				be, err := New(Options{TF32x3: unit == "tc"})
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				x := randomSeries(w.n, w.l)
				ctx := context.Background()
				if err := be.Prepare(ctx, x, w.n, w.l, w.m); err != nil { // warm-up
					b.Fatal(err)
				}
				var own map[string]float64
				for i := 0; i < b.N; i++ {
					own = backendOnly(b, be, x, w.n, w.l, w.m, w.thr, true)
				}
				total := own["prepare_s"] + own["histogram_narrow_s"] + own["edges_s"]
				b.ReportMetric(total, "s/density-build")
				line, _ := json.Marshal(map[string]any{"ours": "hubscope-cuda-backend", "workload": w.name + "/" + unit, "measure": w.m.String(),
					"n": w.n, "l": w.l, "threshold": w.thr, "backend_only": own, "two_pass_s": total, "device": be.Device()})
				fmt.Fprintln(os.Stdout, string(line))
			})
		}
	}
}

// BenchmarkGroup is BENCHMARKS.md's W8: the group-mean Fisher z network of 197 subjects ×
// 58,523 nodes × 200 time points at r̄ > 0.5 (the torch peer's `--subjects 197 --r 0.5`),
// from the subjects' series in host memory (N × S·L) to the CSR in host memory through
// fc.Build (Prepare's upload and normalisation included, as the peer's preparation is).
// HUBSCOPE_GROUP_SUBJECTS / HUBSCOPE_GROUP_N shrink it. The subjects are a phantom cohort
// with structure (synth.CohortMatrix), not noise, so the mean network has edges to emit. One JSON line per product unit
// (HUBSCOPE_GROUP_UNITS: a comma-separated subset of simt, tc, f16x3, f16x3-plain, f16x3-atanhf,
// f16x3-128, or uN for group_tile.cuh's 3×FP16 unit N; a suffix :sN uploads through pinned
// buffers of N MiB).
func BenchmarkGroup(b *testing.B) {
	requireGPU(b)
	s, n, l := 197, 58_523, 200
	if v, err := strconv.Atoi(os.Getenv("HUBSCOPE_GROUP_SUBJECTS")); err == nil && v > 1 {
		s = v
	}
	if v, err := strconv.Atoi(os.Getenv("HUBSCOPE_GROUP_N")); err == nil && v > 1 {
		n = v
	}
	runs := 3
	if r, err := strconv.Atoi(os.Getenv("HUBSCOPE_BENCH_RUNS")); err == nil && r > 0 {
		runs = r
	}
	// The phantom cohort of `synth --subjects` (graded modules, individual signals and noise)
	// on a 3 mm box of exactly n voxels: its mean network at r̄ > 0.5 holds about 0.12 % of the
	// pairs (helper/synth/graded.go), so the edge output is timed too; standard normal data
	// (the torch peer's, same sizes) keeps none.
	box := int(math.Ceil(math.Cbrt(float64(n))))
	mask := scan.Mask{Dims: [3]int{box, box, box}, In: make([]bool, box*box*box)}
	for f := range n {
		mask.In[f] = true
	}
	p := synth.DefaultCohortParams()
	p.Length = l
	x, _, err := synth.CohortMatrix(mask, [4][4]float64{{3, 0, 0, -90}, {0, 3, 0, -126}, {0, 0, 3, -72}, {0, 0, 0, 1}}, p, s, runtime.GOMAXPROCS(0))
	if err != nil {
		b.Fatal(err)
	}
	cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.5}
	ctx := context.Background()
	units := []string{"simt", "tc", "f16x3", "f16x3-plain", "f16x3-atanhf", "f16x3-128"}
	if u := os.Getenv("HUBSCOPE_GROUP_UNITS"); u != "" {
		units = strings.Split(u, ",")
	}
	defer func(small, large int) { stageBytes, largeStageBytes = small, large }(stageBytes, largeStageBytes)
	small, large := stageBytes, largeStageBytes
	for _, unit := range units {
		// unit:sN uploads through pinned buffers of N MiB (stageBytes and largeStageBytes).
		stageBytes, largeStageBytes = small, large
		if u, mib, ok := strings.Cut(unit, ":s"); ok {
			v, err := strconv.Atoi(mib)
			if err != nil || v < 1 {
				b.Fatalf("unit %q: want name:sN with N MiB", unit)
			}
			unit, stageBytes, largeStageBytes = u, v<<20, v<<20
		}
		b.Run(unit, func(b *testing.B) {
			o := Options{Subjects: s, TF32x3: unit == "tc", GroupProduct: map[string]GroupProduct{
				"simt": GroupSIMT, "f16x3-plain": GroupTensorCoresPlain, "f16x3-atanhf": GroupTensorCoresAtanh,
				"f16x3-128": GroupTensorCores128}[unit]}
			be, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			if f, err := strconv.Atoi(strings.TrimPrefix(unit, "u")); err == nil && strings.HasPrefix(unit, "u") {
				forceGroupUnit(b, be, f) // a 3×FP16 unit by number (group_tile.cuh)
			}
			if _, _, err := fc.Build(ctx, be, x, n, s*l, cfg, nil); err != nil { // warm-up
				b.Fatal(err)
			}
			// Device memory in use with the subjects resident and the edge buffers allocated.
			var inUse float64
			if err := be.(*backend).do(func() error {
				free, total, err := cu.MemInfo()
				inUse = float64(total-free) / (1 << 30)
				return err
			}); err != nil {
				b.Fatal(err)
			}
			var times []float64
			var rpt *fc.Report
			for i := 0; i < runs; i++ {
				t0 := time.Now()
				_, r, err := fc.Build(ctx, be, x, n, s*l, cfg, nil)
				if err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0).Seconds())
				rpt = r
			}
			bk := be.(*backend)
			prep := bk.prepareTime.Seconds()
			t0 := time.Now()
			edges := 0
			err = be.Run(ctx, fc.PlanBlocks(n, be.BlockRows()), fc.Op{Kind: fc.OpEdges, Threshold: 0.5}, func(r *fc.BlockResult) error {
				edges += len(r.Edges)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			pass := time.Since(t0).Seconds()
			slices.Sort(times)
			median := times[len(times)/2]
			// S subjects × N(N−1)/2 pairs × L multiply-adds × 2 flops.
			flops := float64(s) * float64(n) * float64(n-1) * float64(l)
			line, _ := json.Marshal(map[string]any{
				"ours": "hubscope-cuda-group", "workload": "W8/" + unit, "subjects": s, "n": n, "l": l, "r": 0.5,
				"seconds": median, "runs": times, "edges": rpt.Edges, "block_rows": rpt.BlockRows, "passes": rpt.Passes,
				"prepare_s": prep, "upload_s": bk.uploadTime.Seconds(), "edge_pass_s": pass, "edge_pass_edges": edges,
				"edge_pass_tflops": flops / pass / 1e12, "device_in_use_gib": inUse, "device": be.Device(),
				"group_unit": bk.groupUnit, "stage_mib": bk.stageSize >> 20,
			})
			fmt.Fprintln(os.Stdout, string(line))
		})
	}
}
