package fc_test

import (
	"context"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/fc/fctest"
)

// The host's incremental sliding windows against the per-window float64 reference.
func TestSlidingCPU(t *testing.T) {
	s := &fc.SlidingCPU{Workers: 3}
	defer s.Close()
	fctest.CheckSliding(t, s)
}

// BenchmarkSlidingCPU is C6's windows (T = 257, w = 150, s = 1, r > 0.3) at N = 2,000 on one
// worker: b.N chunks of all 108 windows.
func BenchmarkSlidingCPU(b *testing.B) {
	const n, t = 2000, 257
	s := &fc.SlidingCPU{Workers: 1}
	if err := s.PrepareSliding(context.Background(), fc.BenchData(n, t, fc.BenchSeed), n, t); err != nil {
		b.Fatal(err)
	}
	out := make([][]fc.Edge, 108)
	for i := 0; i < b.N; i++ {
		for c := range out {
			out[c] = out[c][:0]
		}
		if err := s.SlidingEdges(context.Background(), fc.SlidingJob{Window: 150, Step: 1, Count: 108, Threshold: 0.3}, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(n)*float64(n-1)/2*108), "ns/pair-window")
}
