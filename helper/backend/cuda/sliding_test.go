//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/dfc"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/network"
)

// TestSlidingW6 runs W6 (N = 30,000, T = 257, w = 150, r > 0.3; steps 1 and 4, the latter
// leaving volumes that fill no window) through dfc.Run on the device, incremental and per
// window, and checks every window against float64: each pair kept by either path is
// recomputed in float64 from the series, and the incremental path must keep exactly those
// with r > 0.3 (pairs within 1e-6 of 0.3 excepted) with weights within 1e-6. Per-window
// measures must match wherever the two paths keep the same edges.
func TestSlidingW6(t *testing.T) {
	requireGPU(t)
	const n, T, w, theta = 30000, 257, 150, 0.3
	if testing.Short() {
		t.Skip("W6 size")
	}
	be := newTestBackend(t, Options{})
	defer be.Close()
	x := fc.BenchData(n, T, fc.BenchSeed)
	for _, step := range []int{1, 4} {
		cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: theta}
		type kept struct {
			nw *network.Network
			m  dfc.Measures
		}
		collect := func(per bool) []kept {
			var out []kept
			t0 := time.Now()
			defer func() {
				t.Logf("step %d, per window %v: %d windows in %.3f s (the callback's copies included)", step, per, len(out), time.Since(t0).Seconds())
			}()
			_, err := dfc.Run(context.Background(), be, x, n, T, dfc.Options{Window: w, Step: step, FC: cfg, PerWindow: per}, nil, func(win *dfc.Window) error {
				nw := win.Network
				out = append(out, kept{&network.Network{N: nw.N, Indptr: append([]uint64(nil), nw.Indptr...),
					Indices: append([]uint32(nil), nw.Indices...), Weights: append([]float32(nil), nw.Weights...)}, win.Measures})
				return nil
			})
			if err != nil {
				t.Fatalf("step %d, per window %v: %v", step, per, err)
			}
			return out
		}
		inc, ref := collect(false), collect(true)
		k := (T-w)/step + 1
		if len(inc) != k || len(ref) != k {
			t.Fatalf("step %d: %d and %d windows, want %d", step, len(inc), len(ref), k)
		}
		var mu sync.Mutex
		var bad []string
		near, edges, same := 0, int64(0), 0
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for kk := 0; kk < k; kk++ {
			edges += inc[kk].nw.Edges()
			wg.Add(1)
			sem <- struct{}{}
			go func(kk int) {
				defer func() { <-sem; wg.Done() }()
				got, want := pairs(inc[kk].nw), pairs(ref[kk].nw)
				s0 := kk * step
				nNear := 0
				check := func(p [2]uint32) string {
					r := pearson64(x, T, int(p[0]), int(p[1]), s0, w)
					wt, has := got[p]
					if (r > theta) != has {
						if math.Abs(r-theta) > 1e-6 {
							return "window " + itoa(kk) + ": pair kept against float64"
						}
						nNear++
						return ""
					}
					if has && math.Abs(float64(wt)-r) > 1e-6 {
						return "window " + itoa(kk) + ": weight off float64 by more than 1e-6"
					}
					return ""
				}
				var msgs []string
				for p := range got {
					if m := check(p); m != "" {
						msgs = append(msgs, m)
					}
				}
				for p := range want {
					if _, ok := got[p]; !ok {
						if m := check(p); m != "" {
							msgs = append(msgs, m)
						}
					}
				}
				identical := len(got) == len(want)
				if identical {
					for p := range want {
						if _, ok := got[p]; !ok {
							identical = false
							break
						}
					}
				}
				gm, rm := inc[kk].m, ref[kk].m
				gm.Modularity, rm.Modularity = nil, nil
				if identical && gm != rm {
					msgs = append(msgs, "window "+itoa(kk)+": measures differ with the same edges")
				}
				mu.Lock()
				bad = append(bad, msgs...)
				near += nNear
				if identical {
					same++
				}
				mu.Unlock()
			}(kk)
		}
		wg.Wait()
		if len(bad) > 0 {
			t.Fatalf("step %d: %d problems, first: %s", step, len(bad), bad[0])
		}
		t.Logf("step %d: %d windows, %d edges, %d windows with the per-window path's exact edges, %d pairs within 1e-6 of θ decided differently", step, k, edges, same, near)
		if edges < int64(k)*10000 {
			t.Fatalf("step %d: only %d edges", step, edges)
		}
	}
}

func itoa(i int) string { return fmt.Sprint(i) }

func pairs(nw *network.Network) map[[2]uint32]float32 {
	m := make(map[[2]uint32]float32, nw.Edges())
	for i := 0; i < nw.N; i++ {
		cols, ws := nw.Row(i)
		for p, j := range cols {
			m[[2]uint32{uint32(i), j}] = ws[p]
		}
	}
	return m
}

// pearson64 is r of rows i and j over the window [s0, s0+w) in float64.
func pearson64(x []float32, t, i, j, s0, w int) float64 {
	var mi, mj float64
	for q := s0; q < s0+w; q++ {
		mi += float64(x[i*t+q])
		mj += float64(x[j*t+q])
	}
	mi, mj = mi/float64(w), mj/float64(w)
	var sij, sii, sjj float64
	for q := s0; q < s0+w; q++ {
		a, b := float64(x[i*t+q])-mi, float64(x[j*t+q])-mj
		sij += a * b
		sii += a * a
		sjj += b * b
	}
	return sij / math.Sqrt(sii*sjj)
}

// BenchmarkSlidingW6 times W6's phases on the device: PrepareSliding (centring, upload), the
// chunk of 108 windows at r > 0.3 and at r > 1 (kernels alone: no edge to copy back), the
// same 108 windows as two chunks of 54 (each re-based: what splitting the chunks to overlap
// the host's windows with the device would cost), and dfc.Run end to end (what bench
// --workloads w6 times).
func BenchmarkSlidingW6(b *testing.B) {
	requireGPU(b)
	const n, T, w = 30000, 257, 150
	x := fc.BenchData(n, T, fc.BenchSeed)
	bk, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer bk.Close()
	be := bk.(*backend)
	ctx := context.Background()
	out := make([][]fc.Edge, 108)
	clear := func() {
		for c := range out {
			out[c] = out[c][:0]
		}
	}
	opt := dfc.Options{Window: w, Step: 1, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.3}}
	for _, phase := range []string{"prepare", "edges", "kernels", "halves", "run", "run-halves"} {
		b.Run(phase, func(b *testing.B) {
			if err := be.PrepareSliding(ctx, x, n, T); err != nil {
				b.Fatal(err)
			}
			for i := 0; i <= b.N; i++ { // one warm-up
				if i == 1 {
					b.ResetTimer()
				}
				var err error
				switch phase {
				case "prepare":
					err = be.PrepareSliding(ctx, x, n, T)
				case "edges", "kernels":
					clear()
					th := 0.3
					if phase == "kernels" {
						th = 1
					}
					err = be.SlidingEdges(ctx, fc.SlidingJob{Window: w, Step: 1, Count: 108, Threshold: th}, out)
				case "halves":
					clear()
					err = be.SlidingEdges(ctx, fc.SlidingJob{Window: w, Step: 1, Count: 54, Threshold: 0.3}, out)
					if err == nil {
						err = be.SlidingEdges(ctx, fc.SlidingJob{Window: w, Step: 1, First: 54, Count: 54, Threshold: 0.3}, out[54:])
					}
				case "run":
					_, err = dfc.Run(ctx, be, x, n, T, opt, nil, nil)
				case "run-halves":
					two := opt
					two.ChunkWindows = 54
					_, err = dfc.Run(ctx, be, x, n, T, two, nil, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSlidingDensityW6 runs W6's series (N = 30,000, T = 257, w = 150) at the app's default
// threshold, an exact density of 1 % (k = 4,498,500 edges in every window), through dfc.Run
// on the device, incremental (each window's candidates above its sampled bound, the k
// strongest selected on the host) and per window (fc.Build's density mode on the window's
// own series), at step 4: 27 windows, the last leaving 3 volumes that fill no window. Every
// window must have exactly k edges on both paths; a pair kept by one path only must have its
// float64 r within 1e-6 of the window's cut; shared pairs' weights agree within 1e-6 (and
// every 61st is checked against float64); where the edges are identical the measures are
// too. Then step 1 (108 windows) incremental alone, timed: the W6-size figure.
func TestSlidingDensityW6(t *testing.T) {
	requireGPU(t)
	const n, T, w, density = 30000, 257, 150, 0.01
	if testing.Short() {
		t.Skip("W6 size")
	}
	be := newTestBackend(t, Options{})
	defer be.Close()
	x := fc.BenchData(n, T, fc.BenchSeed)
	cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: density}
	want := int64(math.Round(density * float64(n) * float64(n-1) / 2))
	type kept struct {
		nw *network.Network
		m  dfc.Measures
	}
	collect := func(step int, per, keep bool) ([]kept, *dfc.Result) {
		var out []kept
		t0 := time.Now()
		res, err := dfc.Run(context.Background(), be, x, n, T, dfc.Options{Window: w, Step: step, FC: cfg, PerWindow: per}, nil, func(win *dfc.Window) error {
			if keep {
				nw := win.Network
				out = append(out, kept{&network.Network{N: nw.N, Indptr: append([]uint64(nil), nw.Indptr...),
					Indices: append([]uint32(nil), nw.Indices...), Weights: append([]float32(nil), nw.Weights...)}, win.Measures})
			}
			return nil
		})
		if err != nil {
			t.Fatalf("step %d, per window %v: %v", step, per, err)
		}
		t.Logf("step %d, per window %v: %d windows in %.3f s (callback copies included: %v); notes %q", step, per, len(res.Windows), time.Since(t0).Seconds(), keep, res.Notes)
		return out, res
	}
	const step = 4
	inc, _ := collect(step, false, true)
	ref, _ := collect(step, true, true)
	k := (T-w)/step + 1
	if len(inc) != k || len(ref) != k {
		t.Fatalf("%d and %d windows, want %d", len(inc), len(ref), k)
	}
	var mu sync.Mutex
	var bad []string
	near, same, checked := 0, 0, 0
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for kk := 0; kk < k; kk++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(kk int) {
			defer func() { <-sem; wg.Done() }()
			g, r := inc[kk], ref[kk]
			s0 := kk * step
			var msgs []string
			fail := func(format string, a ...any) {
				msgs = append(msgs, fmt.Sprintf("window %d: ", kk)+fmt.Sprintf(format, a...))
			}
			if g.nw.Edges() != want || r.nw.Edges() != want {
				fail("%d and %d edges, want exactly %d", g.nw.Edges(), r.nw.Edges(), want)
			}
			cut := r.m.Threshold
			if math.Abs(g.m.Threshold-cut) > 1e-6 {
				fail("cut %.9f, per window %.9f", g.m.Threshold, cut)
			}
			nNear, nCheck, shared := 0, 0, 0
			one := func(i int, j uint32) {
				rr := pearson64(x, T, i, int(j), s0, w)
				if math.Abs(rr-cut) > 1e-6 {
					fail("pair (%d,%d) r = %.9f kept by one path, cut %.9f", i, j, rr, cut)
				}
				nNear++
			}
			for i := 0; i < n; i++ {
				gc, gw := g.nw.Row(i)
				rc, rw := r.nw.Row(i)
				p, q := 0, 0
				for p < len(gc) || q < len(rc) {
					switch {
					case q == len(rc) || p < len(gc) && gc[p] < rc[q]:
						one(i, gc[p])
						p++
					case p == len(gc) || rc[q] < gc[p]:
						one(i, rc[q])
						q++
					default:
						if math.Abs(float64(gw[p])-float64(rw[q])) > 1e-6 {
							fail("pair (%d,%d) weights %.9f, per window %.9f", i, gc[p], gw[p], rw[q])
						}
						if shared%61 == 0 {
							if rr := pearson64(x, T, i, int(gc[p]), s0, w); math.Abs(float64(gw[p])-rr) > 1e-6 {
								fail("pair (%d,%d) weight %.9f, float64 %.9f", i, gc[p], gw[p], rr)
							}
							nCheck++
						}
						shared++
						p++
						q++
					}
				}
				if len(msgs) > 3 {
					break
				}
			}
			gm, rm := g.m, r.m
			gm.Threshold, rm.Threshold = 0, 0
			if nNear == 0 && gm != rm {
				fail("measures %+v, per window %+v with the same edges", g.m, r.m)
			}
			mu.Lock()
			bad = append(bad, msgs...)
			near += nNear
			checked += nCheck
			if nNear == 0 {
				same++
			}
			mu.Unlock()
		}(kk)
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("step %d: %d problems, first: %s", step, len(bad), bad[0])
	}
	t.Logf("step %d: %d windows of exactly %d edges, %d with the per-window path's exact edges, %d pairs within 1e-6 of the cut on one path only, %d weights checked against float64", step, k, want, same, near, checked)
	inc, ref = nil, nil
	runtime.GC()
	_, res := collect(1, false, false)
	if len(res.Windows) != T-w+1 {
		t.Fatalf("step 1: %d windows", len(res.Windows))
	}
	for _, win := range res.Windows {
		if win.Measures.Edges != want {
			t.Fatalf("step 1, window %d: %d edges, want %d", win.Index, win.Measures.Edges, want)
		}
	}
	// The device's share: the 108 windows' candidates at W6's sampled bounds (≈ 0.1865) in
	// chunks of 16, back on the host.
	sl := be.(fc.Sliding)
	t0 := time.Now()
	if err := sl.PrepareSliding(context.Background(), x, n, T); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	out := make([][]fc.Edge, 16)
	thetas := make([]float64, 16)
	for c := range thetas {
		thetas[c] = 0.1865
	}
	var cand int64
	for first := 0; first < T-w+1; first += 16 {
		count := min(16, T-w+1-first)
		if err := sl.SlidingEdges(context.Background(), fc.SlidingJob{Window: w, Step: 1, First: first, Count: count, Thresholds: thetas[:count]}, out[:count]); err != nil {
			t.Fatal(err)
		}
		for _, e := range out[:count] {
			cand += int64(len(e))
		}
	}
	t.Logf("device share, step 1: prepare %.3f s, 108 windows' %d candidates in chunks of 16 %.3f s", t1.Sub(t0).Seconds(), cand, time.Since(t1).Seconds())
}

// TestSlidingCSR checks SlidingCSR against SlidingEdges on the same chunks, window by window:
// the device's CSR must be the edges sorted by row and column with the same weights (bit for
// bit), its degrees and per-node triangles those counted on the host from the edges; a chunk
// whose rows pass maxSortRow must fail with fc.ErrSlidingRows. Steps 1 and 3, r and |r|.
func TestSlidingCSR(t *testing.T) {
	requireGPU(t)
	be := newTestBackend(t, Options{}).(*backend)
	defer be.Close()
	const n, T, w = 2500, 180, 60
	x := fc.BenchData(n, T, fc.BenchSeed)
	if err := be.PrepareSliding(context.Background(), x, n, T); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		step, first, count int
		theta              float64
		abs                bool
	}{{1, 0, 40, 0.25, false}, {3, 5, 30, 0.3, true}, {1, 100, 21, 0.4, false}} {
		job := fc.SlidingJob{Window: w, Step: tc.step, First: tc.first, Count: tc.count, Threshold: tc.theta, Abs: tc.abs}
		edges := make([][]fc.Edge, tc.count)
		if err := be.SlidingEdges(context.Background(), job, edges); err != nil {
			t.Fatal(err)
		}
		nets := make([]fc.WindowCSR, tc.count)
		if err := be.SlidingCSR(context.Background(), job, nets); err != nil {
			t.Fatal(err)
		}
		var total, triangles int
		for c := range nets {
			want := hostWindowCSR(edges[c], n)
			got := nets[c]
			what := fmt.Sprintf("step %d, window %d", tc.step, tc.first+c)
			if len(got.Indptr) != n+1 || len(got.Degree) != n || len(got.Triangles) != n {
				t.Fatalf("%s: %d row starts, %d degrees, %d triangle counts", what, len(got.Indptr), len(got.Degree), len(got.Triangles))
			}
			for i := 0; i <= n; i++ {
				if got.Indptr[i] != want.Indptr[i] {
					t.Fatalf("%s: row %d starts at %d, host %d", what, i, got.Indptr[i], want.Indptr[i])
				}
			}
			if len(got.Indices) != len(want.Indices) {
				t.Fatalf("%s: %d entries, host %d", what, len(got.Indices), len(want.Indices))
			}
			for p := range want.Indices {
				if got.Indices[p] != want.Indices[p] || math.Float32bits(got.Weights[p]) != math.Float32bits(want.Weights[p]) {
					t.Fatalf("%s: entry %d is (%d, %v), host (%d, %v)", what, p, got.Indices[p], got.Weights[p], want.Indices[p], want.Weights[p])
				}
			}
			for i := 0; i < n; i++ {
				if got.Degree[i] != want.Degree[i] || got.Triangles[i] != want.Triangles[i] {
					t.Fatalf("%s: node %d degree %d triangles %d, host %d and %d", what, i, got.Degree[i], got.Triangles[i], want.Degree[i], want.Triangles[i])
				}
				triangles += int(want.Triangles[i])
			}
			total += len(want.Indices)
		}
		t.Logf("step %d, θ %v: %d windows, %d edges, %d triangle corners", tc.step, tc.theta, tc.count, total, triangles)
		if total < tc.count*1000 || triangles == 0 {
			t.Fatalf("%d edges, %d triangle corners: the comparison proves little", total, triangles)
		}
	}
	// θ = 0 over 6,000 nodes: rows of thousands of entries, past maxSortRow.
	const wide = 6000
	y := fc.BenchData(wide, 80, fc.BenchSeed)
	if err := be.PrepareSliding(context.Background(), y, wide, 80); err != nil {
		t.Fatal(err)
	}
	nets := make([]fc.WindowCSR, 2)
	err := be.SlidingCSR(context.Background(), fc.SlidingJob{Window: 60, Step: 1, Count: 2, Abs: true}, nets)
	if !errors.Is(err, fc.ErrSlidingRows) || nets[0].Indptr != nil {
		t.Fatalf("rows past %d: %v", maxSortRow, err)
	}
}

// hostWindowCSR is a window's CSR, degrees and per-node triangles from its edges on the host.
func hostWindowCSR(edges []fc.Edge, n int) fc.WindowCSR {
	e := slices.Clone(edges)
	slices.SortFunc(e, func(a, b fc.Edge) int {
		if a.I != b.I {
			return int(a.I) - int(b.I)
		}
		return int(a.J) - int(b.J)
	})
	out := fc.WindowCSR{Indptr: make([]uint64, n+1), Degree: make([]uint32, n), Triangles: make([]uint32, n)}
	for _, ed := range e {
		out.Indptr[ed.I+1]++
		out.Degree[ed.I]++
		out.Degree[ed.J]++
		out.Indices = append(out.Indices, ed.J)
		out.Weights = append(out.Weights, ed.W)
	}
	for i := 0; i < n; i++ {
		out.Indptr[i+1] += out.Indptr[i]
	}
	row := func(i uint32) []uint32 { return out.Indices[out.Indptr[i]:out.Indptr[i+1]] }
	for i := 0; i < n; i++ {
		ri := row(uint32(i))
		for q, j := range ri {
			for _, k := range row(j) {
				if _, found := slices.BinarySearch(ri[q+1:], k); found {
					out.Triangles[i]++
					out.Triangles[j]++
					out.Triangles[k]++
				}
			}
		}
	}
	return out
}
