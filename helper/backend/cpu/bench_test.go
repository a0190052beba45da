package cpu

import (
	"context"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/fc"
)

// BenchmarkC1 is BENCHMARKS.md's C1: Pearson, N = 20,000, L = 200, density 1 %, exact, two
// passes (sampled histogram range, then emit), on fc.BenchData (seed fc.BenchSeed). Prepare
// is inside the timed span, as for the peer.
func BenchmarkC1(b *testing.B) {
	benchBuild(b, 20000, 200, fc.Config{Mode: fc.Density, Density: 0.01, DensityMethod: fc.DensityTwoPass})
}

// BenchmarkC1Auto is C1 with the default method (one emit pass above a sampled bound, exact
// selection on the host).
func BenchmarkC1Auto(b *testing.B) {
	benchBuild(b, 20000, 200, fc.Config{Mode: fc.Density, Density: 0.01})
}

// BenchmarkC1Histogram is C1 with Zhao et al.'s full-range histogram (no sampled narrowing).
func BenchmarkC1Histogram(b *testing.B) {
	benchBuild(b, 20000, 200, fc.Config{Mode: fc.Density, Density: 0.01, DensityMethod: fc.DensityHistogram})
}

// BenchmarkC1Strength is C1's product with one fixed-threshold pass (the peer's --r 0.164).
func BenchmarkC1Strength(b *testing.B) {
	benchBuild(b, 20000, 200, fc.Config{Mode: fc.Strength, Threshold: 0.164})
}

func BenchmarkKendall(b *testing.B) {
	benchBuild(b, 5000, 128, fc.Config{Measure: fc.Kendall, Mode: fc.Density, Density: 0.01})
}

func benchBuild(b *testing.B, n, l int, cfg fc.Config) {
	x := fc.BenchData(n, l, fc.BenchSeed)
	be := New(Options{})
	defer be.Close()
	b.ResetTimer()
	var rpt *fc.Report
	for i := 0; i < b.N; i++ {
		var err error
		if _, rpt, err = fc.Build(context.Background(), be, x, n, l, cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	for _, p := range rpt.Passes {
		b.Logf("%-10s %4d blocks %8.3f s", p.Stage, p.Blocks, p.Seconds)
	}
	b.Logf("edges %d, threshold %.6f, device %s", rpt.Edges, rpt.Threshold, be.Device())
}

// BenchmarkPeak reports the FMA ceiling of all workers and of one.
func BenchmarkPeak(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.ReportMetric(PeakGFLOPS(0, time.Second), "GFLOP/s")
		b.ReportMetric(PeakGFLOPS(1, time.Second), "GFLOP/s-1core")
	}
}

// BenchmarkKernel is the micro-kernel alone on L1-resident panels (L = 200), one core.
func BenchmarkKernel(b *testing.B) {
	const l = 200
	a := make([]float32, l*mr)
	p := make([]float32, l*nr)
	var c [mr * nr]float32
	for i := 0; i < b.N; i++ {
		kernel(l, a, p, &c)
	}
	b.ReportMetric(float64(b.N)*2*mr*nr*l/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkN100k is the memory workload (BENCHMARKS.md): N = 100,000, L = 200, density 0.1 %.
// Measure peak RSS with /usr/bin/time -v on the test binary.
func BenchmarkN100k(b *testing.B) {
	benchBuild(b, 100000, 200, fc.Config{Mode: fc.Density, Density: 0.001})
}

// BenchmarkC1FDR is C1's data under Benjamini–Hochberg at q = 0.05 on |r|.
func BenchmarkC1FDR(b *testing.B) {
	benchBuild(b, 20000, 200, fc.Config{Mode: fc.Significance, Correction: fc.FDR, Alpha: 0.05, Abs: true})
}

// BenchmarkC1KNN is C1's data with each node's 10 strongest links.
func BenchmarkC1KNN(b *testing.B) {
	benchBuild(b, 20000, 200, fc.Config{Mode: fc.NearestNeighbours, K: 10})
}
