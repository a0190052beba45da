package dfc

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/synth"
)

// BenchmarkLowRank factorises one w=150 window at GPU-DFC's ranks (w/4, w/3, w/2, w; its
// Table III used T/4 … T) and reports the exact block-wise MAE of the SVD and randomized
// factors, the compression ratio N/(2l) and the time of each factorisation:
//
//	go test -run - -bench LowRank -benchtime 1x ./helper/dfc/
//
// Data: random normal (C6's N=5,000 × 257, window 0) and the phantom on the MNI mask at 8 mm
// (3,735 voxels, 257 volumes), whose seven module signals give the spectrum structure.
func BenchmarkLowRank(b *testing.B) {
	const T, w = 257, 150
	mask, affine, err := synth.DemoMask()
	if err != nil {
		b.Fatal(err)
	}
	mask, affine = synth.ResampleMask(mask, affine, 8)
	p := synth.DefaultParams()
	p.Length = T
	ph, _, err := synth.Generate(mask, affine, p)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []struct {
		name string
		x    []float32
		n    int
	}{{"random", fc.BenchData(5000, T, fc.BenchSeed), 5000}, {"phantom", ph.Data, ph.N}} {
		win := make([]float32, d.n*w)
		for i := 0; i < d.n; i++ {
			copy(win[i*w:], d.x[i*T:i*T+w])
		}
		u, err := NormalizedWindow(win, d.n, w, fc.Pearson)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range []int{w / 4, w / 3, w / 2, w} {
			b.Run(fmt.Sprintf("%s/N=%d/l=%d", d.name, d.n, l), func(b *testing.B) {
				for range b.N {
					t0 := time.Now()
					f, _, err := SVDFactor(u, l)
					if err != nil {
						b.Fatal(err)
					}
					tSVD := time.Since(t0).Seconds()
					t0 = time.Now()
					q, r, err := RandomizedFactor(u, l, 1)
					if err != nil {
						b.Fatal(err)
					}
					tRnd := time.Since(t0).Seconds()
					ms, err := MAE(context.Background(), u, f, f)
					if err != nil {
						b.Fatal(err)
					}
					mr, err := MAE(context.Background(), u, q, r)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(ms, "mae-svd")
					b.ReportMetric(mr, "mae-rand")
					b.ReportMetric(CompressionRatio(d.n, l), "CR")
					b.ReportMetric(tSVD, "s-svd")
					b.ReportMetric(tRnd, "s-rand")
				}
			})
		}
	}
}

// BenchmarkRunC6 is C6 (N = 5,000, T = 257, w = 150, s = 1 on BenchData) through Run on the
// CPU backend, incremental and per window, at r > 0.3 and at the app's default density of 1 %
// (each window's exact k = 124,975 edges), reporting the process's CPU seconds per run
// (getrusage: comparable on a loaded machine, where wall time is not) and, for the density's
// incremental path, the candidates the sweep emitted per kept edge:
//
//	go test -run - -bench RunC6 -benchtime 1x ./helper/dfc/
func BenchmarkRunC6(b *testing.B) {
	const n, T = 5000, 257
	x := fc.BenchData(n, T, fc.BenchSeed)
	for _, mode := range []struct {
		name string
		cfg  fc.Config
	}{
		{"r>0.3", fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.3}},
		{"density=0.01", fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.01}},
	} {
		for _, per := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/per-window=%v", mode.name, per), func(b *testing.B) {
				be := &candidateCounter{Backend: cpu.New(cpu.Options{})}
				defer be.Close()
				opt := Options{Window: 150, Step: 1, PerWindow: per, FC: mode.cfg}
				c0 := cpuSeconds()
				var edges int64
				for range b.N {
					be.candidates = 0
					res, err := Run(context.Background(), be, x, n, T, opt, nil, nil)
					if err != nil {
						b.Fatal(err)
					}
					edges = 0
					for _, w := range res.Windows {
						edges += w.Measures.Edges
					}
				}
				b.ReportMetric((cpuSeconds()-c0)/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(edges), "edges")
				if !per {
					b.ReportMetric(float64(be.candidates)/float64(edges), "candidates/edge")
				}
			})
		}
	}
}

// BenchmarkRunW6Density is W6's N = 30,000 and w = 150 at the app's default density of 1 %
// (k = 4,498,500 edges a window) on the CPU backend over the first 16 windows of W6's series
// (T = 165, s = 1), reporting CPU seconds per run: per window, and incremental with the
// chunks the budget allows on this machine (on 2 cores 3 windows a chunk, so Run takes the
// per-window path: MinHostDensityChunk) and with all 16 windows in one chunk (a 1.6 GB
// budget; the re-basing then counts for 1/16 of the run, against 1/108 over W6's windows):
//
//	go test -run - -bench RunW6Density -benchtime 1x -timeout 30m ./helper/dfc/
func BenchmarkRunW6Density(b *testing.B) {
	const n, T = 30000, 165
	x := fc.BenchData(n, 257, fc.BenchSeed)
	for i := 0; i < n; i++ {
		copy(x[i*T:(i+1)*T], x[i*257:i*257+T])
	}
	x = x[:n*T]
	for _, v := range []struct {
		name   string
		per    bool
		budget int
	}{{"per-window", true, 0}, {"incremental", false, 0}, {"incremental-one-chunk", false, 16 * 7_000_000}} {
		b.Run(v.name, func(b *testing.B) {
			if v.budget > 0 {
				defer func(old int) { chunkEdgeBudget = old }(chunkEdgeBudget)
				chunkEdgeBudget = v.budget
			}
			be := &candidateCounter{Backend: cpu.New(cpu.Options{})}
			defer be.Close()
			opt := Options{Window: 150, Step: 1, PerWindow: v.per, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.01}}
			c0 := cpuSeconds()
			var edges int64
			for range b.N {
				be.candidates = 0
				res, err := Run(context.Background(), be, x, n, T, opt, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				edges = 0
				for _, w := range res.Windows {
					edges += w.Measures.Edges
				}
			}
			b.ReportMetric((cpuSeconds()-c0)/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(edges), "edges")
			b.ReportMetric(float64(be.candidates)/float64(edges), "candidates/edge")
		})
	}
}

// candidateCounter is the CPU backend counting the edges its sliding windows emit.
type candidateCounter struct {
	*cpu.Backend
	candidates int64
}

func (c *candidateCounter) SlidingEdges(ctx context.Context, job fc.SlidingJob, out [][]fc.Edge) error {
	err := c.Backend.SlidingEdges(ctx, job, out)
	if err == nil {
		for _, e := range out[:job.Count] {
			c.candidates += int64(len(e))
		}
	}
	return err
}

// cpuSeconds is the process's user + system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// BenchmarkWindowsHost is the host's share of W6 on the incremental path: 108 windows of
// 43,000 random edges over 30,000 nodes (W6's 4.67 M edges at r > 0.3), each window's CSR,
// degrees, C_p and largest component through emitChunk, reporting CPU seconds per run:
//
//	go test -run - -bench WindowsHost -benchtime 3x ./helper/dfc/
func BenchmarkWindowsHost(b *testing.B) {
	const n, k, e = 30000, 108, 43000
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][]fc.Edge, k)
	for c := range out {
		out[c] = make([]fc.Edge, e)
		for q := range out[c] {
			i := rng.IntN(n - 1)
			out[c][q] = fc.Edge{I: uint32(i), J: uint32(i + 1 + rng.IntN(n-1-i)), W: 0.35}
		}
	}
	plan, _ := NewPlan(257, 150, 1)
	opt := Options{Window: 150, Step: 1, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.3}}
	constant := make([]int, k)
	c0 := cpuSeconds()
	for range b.N {
		res := &Result{}
		if err := emitChunk(context.Background(), out, nil, nil, 0, n, 257, plan, nil, constant, nil, nil, opt, 0, nil, res, progress.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-c0)/float64(b.N), "cpu-s/op")
}
