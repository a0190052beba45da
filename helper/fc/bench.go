package fc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hubscope/hubscope/helper/progress"
)

// BenchSeed seeds BenchData for the benchmark workloads (BENCHMARKS.md: random normal, seeded).
const BenchSeed uint64 = 20261122

// BenchData is an N×L matrix of standard normal float32 values from PCG(seed, N·L).
func BenchData(n, l int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, uint64(n)*uint64(l)))
	x := make([]float32, n*l)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// BenchResult is the outcome of Bench: wall times of the timed span (x in host memory → CSR
// in host memory, Prepare included) and the arithmetic rate of the block passes.
type BenchResult struct {
	Seconds []float64 // one per repetition
	Median  float64
	Report  *Report // of the last repetition
	// GFLOPS is 2·L·N(N−1)/2 multiply-adds per block pass over the median time (Pearson and
	// Spearman; 0 for Kendall, whose work is popcounts).
	GFLOPS float64
}

// Bench times fc.Build of cfg on BenchData(n, l, BenchSeed) with backend b: one warm-up, then
// repeat timed runs (median reported), as BENCHMARKS.md asks. The C1 workload is
// Bench(ctx, cpu, 20000, 200, Config{Mode: Density, Density: 0.01}, 3).
func Bench(ctx context.Context, b Backend, n, l int, cfg Config, repeat int, rep progress.Reporter) (*BenchResult, error) {
	if repeat < 1 {
		repeat = 1
	}
	x := BenchData(n, l, BenchSeed)
	r := &BenchResult{}
	for i := -1; i < repeat; i++ {
		t0 := time.Now()
		nw, rpt, err := Build(ctx, b, x, n, l, cfg, rep)
		if err != nil {
			return nil, fmt.Errorf("fc: benchmark N=%d L=%d: %w", n, l, err)
		}
		if i >= 0 {
			r.Seconds = append(r.Seconds, time.Since(t0).Seconds())
			r.Report = rpt
		}
		_ = nw
	}
	s := slices.Clone(r.Seconds)
	slices.Sort(s)
	r.Median = s[len(s)/2]
	if cfg.Measure != Kendall {
		passes := 0
		for _, p := range r.Report.Passes {
			if p.Blocks > 0 {
				passes++
			}
		}
		r.GFLOPS = float64(passes) * 2 * float64(l) * float64(n) * float64(n-1) / 2 / r.Median / 1e9
	}
	return r, nil
}
