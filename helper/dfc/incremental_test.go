package dfc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/network"
)

// countingSliding is the CPU backend with its fc.Sliding calls counted.
type countingSliding struct {
	*cpu.Backend
	chunks []fc.SlidingJob
}

func (c *countingSliding) SlidingEdges(ctx context.Context, job fc.SlidingJob, out [][]fc.Edge) error {
	c.chunks = append(c.chunks, job)
	return c.Backend.SlidingEdges(ctx, job, out)
}

// pearson64 is r of rows i and j of the window [s0, s0+w) in float64.
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

// sameUpToThreshold compares two windows' networks: the same edges except pairs whose
// float64 r lies within 1e-6 of θ, weights within 1e-6. It returns whether the edge sets are
// identical.
func sameUpToThreshold(t *testing.T, what string, got, want *network.Network, x []float32, tt, s0, w int, theta float64, abs bool) bool {
	t.Helper()
	edges := func(nw *network.Network) map[[2]int]float32 {
		m := map[[2]int]float32{}
		for i := 0; i < nw.N; i++ {
			cols, ws := nw.Row(i)
			for p, j := range cols {
				m[[2]int{i, int(j)}] = ws[p]
			}
		}
		return m
	}
	g, h := edges(got), edges(want)
	identical := len(g) == len(h)
	for _, pair := range []struct{ a, b map[[2]int]float32 }{{g, h}, {h, g}} {
		for p, wa := range pair.a {
			wb, ok := pair.b[p]
			r := pearson64(x, tt, p[0], p[1], s0, w)
			if abs {
				r = math.Abs(r)
			}
			if !ok {
				identical = false
				if math.Abs(r-theta) > 1e-6 {
					t.Fatalf("%s: pair %v (r = %.9f) in one network only", what, p, r)
				}
				continue
			}
			if math.Abs(float64(wa)-float64(wb)) > 1e-6 || math.Abs(float64(wa)-r) > 1e-6 {
				t.Fatalf("%s: pair %v weights %.9f, %.9f; r = %.9f", what, p, wa, wb, r)
			}
		}
	}
	return identical
}

// The incremental path gives every window the per-window path's network (fc.Build on the
// window's own series), measures and degrees — the last window included, with steps that do
// and do not divide T − w, rows constant in some windows, a chunk budget that forces
// re-chunking — and goes through the backend's fc.Sliding.
func TestIncrementalEqualsPerWindow(t *testing.T) {
	const n, T, w = 200, 101, 48
	x := randomSeries(n, T, 5)
	for q := 20; q < 75; q++ {
		x[3*T+q] = 2 // constant in the windows inside volumes 20–74
	}
	defer func(b int) { chunkEdgeBudget = b }(chunkEdgeBudget)
	for _, c := range []struct {
		step   int
		theta  float64
		abs    bool
		budget int
	}{{1, 0.3, false, 1 << 30}, {3, 0.25, true, 1 << 30}, {1, 0.3, false, 3000}} {
		chunkEdgeBudget = c.budget
		be := &countingSliding{Backend: cpu.New(cpu.Options{Workers: 2})}
		cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: c.theta, Abs: c.abs}
		var got []*network.Network
		res, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: c.step, FC: cfg}, nil, func(win *Window) error {
			if err := win.Network.Validate(); err != nil {
				return err
			}
			got = append(got, cloneNetwork(win.Network))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(be.chunks) == 0 {
			t.Fatalf("step %d: the incremental path was not taken", c.step)
		}
		var want []*network.Network
		ref, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: c.step, FC: cfg, PerWindow: true}, nil, func(win *Window) error {
			want = append(want, cloneNetwork(win.Network))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		k := (T-w)/c.step + 1
		if len(got) != k || len(res.Windows) != k || len(want) != k {
			t.Fatalf("step %d: %d networks, %d windows; want %d", c.step, len(got), len(res.Windows), k)
		}
		edges, constant, same := int64(0), 0, 0
		for kk := range got {
			gw, rw := res.Windows[kk], ref.Windows[kk]
			if gw.Index != kk || gw.Start != kk*c.step {
				t.Fatalf("window %d: index %d, start %d", kk, gw.Index, gw.Start)
			}
			if sameUpToThreshold(t, "window", got[kk], want[kk], x, T, kk*c.step, w, c.theta, c.abs) {
				same++
				gm, rm := gw.Measures, rw.Measures
				gm.Modularity, rm.Modularity = nil, nil
				if gm != rm {
					t.Fatalf("window %d: measures %+v, per window %+v", kk, gm, rm)
				}
				for v := range gw.Degree {
					if gw.Degree[v] != rw.Degree[v] {
						t.Fatalf("window %d: degree of node %d %d, per window %d", kk, v, gw.Degree[v], rw.Degree[v])
					}
				}
			}
			edges += gw.Measures.Edges
			constant += gw.Measures.Constant
		}
		if edges < int64(50*k) || constant == 0 || same < k/2 {
			t.Fatalf("step %d: %d edges, %d constant rows, %d of %d windows with the same edges: the comparison proves little", c.step, edges, constant, same, k)
		}
		if c.budget < 1<<30 && len(be.chunks) < 3 {
			t.Errorf("a budget of %d edges gave only %d chunks", c.budget, len(be.chunks))
		}
		if len(res.Notes) == 0 {
			t.Error("no note about the constant series")
		}
	}
}

// Steps large against the window, Spearman, densities above MaxIncrementalDensity, FDR, k-NN
// and censoring keep the per-window path.
func TestIncrementalCutover(t *testing.T) {
	pearson := fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.3}
	for _, c := range []struct {
		opt  Options
		want bool
	}{
		{Options{Window: 150, Step: 1, FC: pearson}, true},
		{Options{Window: 160, Step: 10, FC: pearson}, true},
		{Options{Window: 150, Step: 10, FC: pearson}, false},
		{Options{Window: 150, Step: 1, FC: pearson, PerWindow: true}, false},
		{Options{Window: 150, Step: 1, FC: fc.Config{Measure: fc.Spearman, Mode: fc.Strength, Threshold: 0.3}}, false},
		{Options{Window: 150, Step: 1, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.1}}, true},
		{Options{Window: 150, Step: 1, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.3}}, false},
		{Options{Window: 150, Step: 1, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Significance, Correction: fc.Bonferroni, Alpha: 0.05}}, true},
		{Options{Window: 150, Step: 1, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Significance, Correction: fc.FDR, Alpha: 0.05}}, false},
		{Options{Window: 150, Step: 1, FC: fc.Config{Measure: fc.Pearson, Mode: fc.NearestNeighbours, K: 5}}, false},
		{Options{Window: 150, Step: 1, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: -0.1}}, false},
		{Options{Window: 150, Step: 1, FC: pearson, Axis: 300}, false},
	} {
		if got := incremental(c.opt); got != c.want {
			t.Errorf("incremental(%+v) = %v, want %v", c.opt, got, c.want)
		}
	}
}

// edgesToCSR sorts any edge order into valid CSR rows (a 60-neighbour hub takes the long-row
// sort), and windowMeanClustering and largestComponent equal graph.MeanClustering and
// fc.Components on it, bit for bit.
func TestWindowCSRAndMeasures(t *testing.T) {
	const n = 300
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[[2]uint32]bool{}
	var edges []fc.Edge
	add := func(i, j uint32) {
		if i > j {
			i, j = j, i
		}
		if i != j && !seen[[2]uint32{i, j}] {
			seen[[2]uint32{i, j}] = true
			edges = append(edges, fc.Edge{I: i, J: j, W: float32(i) + float32(j)/1000})
		}
	}
	for q := 0; q < 900; q++ {
		a := uint32(rng.IntN(60)) // a dense corner: many triangles
		add(a, uint32(rng.IntN(60)))
		add(uint32(rng.IntN(n)), uint32(rng.IntN(n)))
	}
	for j := uint32(100); j < 160; j++ {
		add(5, j) // the hub
	}
	rng.Shuffle(len(edges), func(a, b int) { edges[a], edges[b] = edges[b], edges[a] })
	nw := edgesToCSR(edges, n)
	if err := nw.Validate(); err != nil {
		t.Fatal(err)
	}
	if nw.Edges() != int64(len(edges)) {
		t.Fatalf("%d edges in the CSR, %d given", nw.Edges(), len(edges))
	}
	for i := 0; i < n; i++ {
		cols, ws := nw.Row(i)
		for p, j := range cols {
			if !seen[[2]uint32{uint32(i), j}] || ws[p] != float32(i)+float32(j)/1000 {
				t.Fatalf("row %d: (%d, %g) was not given", i, j, ws[p])
			}
		}
	}
	want, err := graph.MeanClustering(context.Background(), graph.FromNetwork(nw))
	if err != nil {
		t.Fatal(err)
	}
	if got := windowMeanClustering(nw, Degrees(nw)); got != want || want == 0 {
		t.Fatalf("C_p %v, graph.MeanClustering %v", got, want)
	}
	if _, largest := fc.Components(nw); largestComponent(nw) != largest {
		t.Fatalf("largest component %d, fc.Components %d", largestComponent(nw), largest)
	}
	// The same through one scratch reused across windows, as emitChunk's workers do: a
	// second, different window first, so that stale counts or marks would show.
	sc := &windowScratch{}
	other := edges[:len(edges)/3]
	nw2, deg2 := sc.csr(other, n)
	if !slices.Equal(deg2, Degrees(nw2)) {
		t.Fatal("degrees from the edges differ from Degrees of the CSR")
	}
	_ = sc.meanClustering(nw2, deg2)
	_ = sc.largestComponent(other, n)
	nw3, deg3 := sc.csr(edges, n)
	sameNetwork(t, "reused scratch", nw3, nw)
	if !slices.Equal(deg3, Degrees(nw)) {
		t.Fatal("degrees through a reused scratch differ from Degrees")
	}
	if got := sc.meanClustering(nw3, deg3); got != want {
		t.Fatalf("C_p through a reused scratch %v, graph.MeanClustering %v", got, want)
	}
	if _, largest := fc.Components(nw); sc.largestComponent(edges, n) != largest {
		t.Fatalf("largest component through a reused scratch %d, fc.Components %d", sc.largestComponent(edges, n), largest)
	}
}

// A non-finite value sends Run to the per-window path, whose error names the window.
func TestIncrementalNonFinite(t *testing.T) {
	const n, T = 50, 60
	x := randomSeries(n, T, 9)
	x[7*T+45] = float32(math.NaN())
	be := cpu.New(cpu.Options{})
	defer be.Close()
	_, err := Run(context.Background(), be, x, n, T, Options{Window: 32, Step: 1, FC: fc.Config{Mode: fc.Strength, Threshold: 0.3}}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "window 14") {
		t.Fatalf("NaN at volume 45: %v, want an error naming window 14", err)
	}
}

// failingSliding is the CPU backend whose sliding windows fail as a device out of memory would.
type failingSliding struct{ *cpu.Backend }

func (failingSliding) PrepareSliding(context.Context, []float32, int, int) error {
	return errors.New("out of memory for the sliding-window series")
}

// A backend whose sliding windows fail before the first window leaves them to the per-window
// path: the same networks, and a note saying so.
func TestIncrementalUnavailable(t *testing.T) {
	const n, T, w = 80, 60, 32
	x := randomSeries(n, T, 4)
	opt := Options{Window: w, Step: 1, FC: fc.Config{Mode: fc.Strength, Threshold: 0.3}}
	be := failingSliding{cpu.New(cpu.Options{})}
	var got []*network.Network
	res, err := Run(context.Background(), be, x, n, T, opt, nil, func(win *Window) error {
		got = append(got, cloneNetwork(win.Network))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	opt.PerWindow = true
	k := 0
	if _, err := Run(context.Background(), be.Backend, x, n, T, opt, nil, func(win *Window) error {
		sameNetwork(t, "window", got[k], win.Network)
		k++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if k != T-w+1 || len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "out of memory") {
		t.Fatalf("%d windows compared, notes %q", k, res.Notes)
	}
}

// sameJob compares two chunks' windows and cuts.
func sameJob(a, b fc.SlidingJob) bool {
	return a.Window == b.Window && a.Step == b.Step && a.First == b.First && a.Count == b.Count &&
		a.Threshold == b.Threshold && slices.Equal(a.Thresholds, b.Thresholds) && a.Abs == b.Abs
}

// overlapSliding is countingSliding declaring fc.SlidingOverlap, as a GPU backend does: Run
// then builds each chunk's windows while the next chunk runs.
type overlapSliding struct{ countingSliding }

func (*overlapSliding) SlidingOverlaps() bool { return true }

// With an overlapping backend and two chunks, the second is computed while the first's
// windows are built, and the networks, measures and degrees equal those of the same two
// chunks run one after the other; an error from each stops Run with it once the chunk in
// flight has returned.
func TestIncrementalOverlap(t *testing.T) {
	const n, T, w = 160, 131, 48 // 84 windows: two chunks of 42
	x := randomSeries(n, T, 9)
	cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.3}
	type run struct {
		nws []*network.Network
		res *Result
	}
	collect := func(be fc.Backend, opt Options) run {
		var r run
		res, err := Run(context.Background(), be, x, n, T, opt, nil, func(win *Window) error {
			r.nws = append(r.nws, cloneNetwork(win.Network))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		r.res = res
		return r
	}
	ov := &overlapSliding{countingSliding{Backend: cpu.New(cpu.Options{Workers: 2})}}
	got := collect(ov, Options{Window: w, Step: 1, FC: cfg, ChunkWindows: 42})
	seq := &countingSliding{Backend: cpu.New(cpu.Options{Workers: 2})}
	want := collect(seq, Options{Window: w, Step: 1, FC: cfg, ChunkWindows: 42})
	if len(ov.chunks) != 2 || ov.chunks[0].Count != 42 || ov.chunks[1].First != 42 || !slices.EqualFunc(ov.chunks, seq.chunks, sameJob) {
		t.Fatalf("chunks overlapped %+v, sequential %+v", ov.chunks, seq.chunks)
	}
	if len(got.nws) != 84 || len(want.nws) != 84 {
		t.Fatalf("%d and %d windows, want 84", len(got.nws), len(want.nws))
	}
	edges := int64(0)
	for k := range got.nws {
		sameNetwork(t, fmt.Sprintf("window %d", k), got.nws[k], want.nws[k])
		gw, rw := got.res.Windows[k], want.res.Windows[k]
		if gw.Index != k || gw.Measures != rw.Measures || !slices.Equal(gw.Degree, rw.Degree) {
			t.Fatalf("window %d: %+v, sequential %+v", k, gw.Measures, rw.Measures)
		}
		edges += gw.Measures.Edges
	}
	if edges < 50*84 {
		t.Fatalf("%d edges: the comparison proves little", edges)
	}

	stop := errors.New("stop")
	ov.chunks = nil
	seen := 0
	_, err := Run(context.Background(), ov, x, n, T, Options{Window: w, Step: 1, FC: cfg, ChunkWindows: 42}, nil, func(win *Window) error {
		seen++
		if win.Index == 20 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 21 || len(ov.chunks) != 2 {
		t.Fatalf("error %v after %d windows, %d chunks", err, seen, len(ov.chunks))
	}
}

// The density and Bonferroni modes on the incremental path (every window cut at its own
// value, cuts.go) give every window the per-window path's network: exactly its k edges for
// density, the same pairs except those within 1e-6 of the window's cut, weights within 1e-6
// of float64, the same measures where the edges are the same — with steps that do and do not
// divide T − w, a row constant in some windows, |r| and r, a sample of fewer nodes than N, and
// windows whose sampled bound was too high (built from their own series, with a note).
func TestIncrementalCutsEqualPerWindow(t *testing.T) {
	const T, w = 101, 48
	defer func() { densityBoundHook = nil }()
	for _, c := range []struct {
		n      int
		step   int
		cfg    fc.Config
		forced bool // windows k ≡ 0 (mod 7) get a bound no pair passes
		race   bool // also under -race (the chunks' concurrency, the fallback)
	}{
		{200, 1, fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.05}, false, false},
		{200, 3, fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.1, Abs: true}, false, false},
		{200, 2, fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.02}, true, true},
		{700, 3, fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.01, Abs: true}, false, false},
		{200, 2, fc.Config{Measure: fc.Pearson, Mode: fc.Significance, Correction: fc.Bonferroni, Alpha: 0.05, Abs: true}, false, true},
		{200, 1, fc.Config{Measure: fc.Pearson, Mode: fc.Significance, Correction: fc.Bonferroni, Alpha: 0.01}, false, false},
	} {
		if raceEnabled && !c.race {
			continue
		}
		name := fmt.Sprintf("N=%d/step=%d/%s/abs=%v/forced=%v", c.n, c.step, c.cfg.Mode, c.cfg.Abs, c.forced)
		x := randomSeries(c.n, T, 5)
		if c.cfg.Mode == fc.Significance {
			// r ≈ 0.7 in the first half (Bonferroni's cut at N = 200, w = 48 is r ≈ 0.6)
			common := fc.BenchData(1, T, 11)
			for i := 0; i < c.n/2; i++ {
				for q := 0; q < T; q++ {
					x[i*T+q] += 1.2 * common[q]
				}
			}
		}
		for q := 20; q < 75; q++ {
			x[3*T+q] = 2 // constant in the windows inside volumes 20–74
		}
		densityBoundHook = nil
		if c.forced {
			densityBoundHook = func(k int, bound float64) float64 {
				if k%7 == 0 {
					return 0.999
				}
				return bound
			}
		}
		be := &countingSliding{Backend: cpu.New(cpu.Options{Workers: 2})}
		var got []*network.Network
		res, err := Run(context.Background(), be, x, c.n, T, Options{Window: w, Step: c.step, FC: c.cfg}, nil, func(win *Window) error {
			if err := win.Network.Validate(); err != nil {
				return err
			}
			got = append(got, cloneNetwork(win.Network))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(be.chunks) == 0 || be.chunks[0].Thresholds == nil {
			t.Fatalf("%s: the incremental path was not taken with per-window thresholds", name)
		}
		var want []*network.Network
		ref, err := Run(context.Background(), be, x, c.n, T, Options{Window: w, Step: c.step, FC: c.cfg, PerWindow: true}, nil, func(win *Window) error {
			want = append(want, cloneNetwork(win.Network))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		k := (T-w)/c.step + 1
		if len(got) != k || len(want) != k {
			t.Fatalf("%s: %d and %d windows, want %d", name, len(got), len(want), k)
		}
		edges, same, constant := int64(0), 0, 0
		for kk := range got {
			gm, rm := res.Windows[kk].Measures, ref.Windows[kk].Measures
			if c.cfg.Mode == fc.Density {
				nv := c.n - rm.Constant
				if want := int64(math.Round(c.cfg.Density * float64(nv*(nv-1)/2))); gm.Edges != want || rm.Edges != want {
					t.Fatalf("%s window %d: %d and %d edges, want exactly %d", name, kk, gm.Edges, rm.Edges, want)
				}
			}
			if math.Abs(gm.Threshold-rm.Threshold) > 1e-6 {
				t.Fatalf("%s window %d: threshold %.9f, per window %.9f", name, kk, gm.Threshold, rm.Threshold)
			}
			if sameUpToThreshold(t, fmt.Sprintf("%s window %d", name, kk), got[kk], want[kk], x, T, kk*c.step, w, rm.Threshold, c.cfg.Abs) {
				same++
				gm.Modularity, rm.Modularity = nil, nil
				gm.Threshold, rm.Threshold = 0, 0 // float32 values of the k-th pair: within 1e-6 above
				if gm != rm || !slices.Equal(res.Windows[kk].Degree, ref.Windows[kk].Degree) {
					t.Fatalf("%s window %d: measures %+v, per window %+v", name, kk, gm, rm)
				}
			}
			edges += gm.Edges
			constant += gm.Constant
		}
		if edges < int64(50*k) || constant == 0 || same < k/2 {
			t.Fatalf("%s: %d edges, %d constant rows, %d of %d windows with the same edges: the comparison proves little", name, edges, constant, same, k)
		}
		t.Logf("%s: %d windows, %d edges, %d windows with the per-window path's exact edges", name, k, edges, same)
		own := 0
		for _, note := range res.Notes {
			if strings.Contains(note, "built from its own series") {
				own++
			}
		}
		if want := (k + 6) / 7; c.forced && own != want || !c.forced && own != 0 {
			t.Fatalf("%s: %d windows built from their own series (notes %q)", name, own, res.Notes)
		}
	}
}

// selectStrongest keeps the k first by (value desc, i, j), ties at the k-th value included.
func TestSelectStrongest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 200; trial++ {
		m := 1 + rng.IntN(300)
		edges := make([]fc.Edge, m)
		for p := range edges {
			edges[p] = fc.Edge{I: uint32(rng.IntN(50)), J: uint32(50 + p), W: float32(rng.IntN(12)) / 8}
		}
		k := int64(rng.IntN(m + 1))
		want := slices.Clone(edges)
		slices.SortFunc(want, func(a, b fc.Edge) int {
			if a.W != b.W {
				if a.W > b.W {
					return -1
				}
				return 1
			}
			if a.I != b.I {
				return int(a.I) - int(b.I)
			}
			return int(a.J) - int(b.J)
		})
		want = want[:k]
		var keys []float32
		var ties []fc.Edge
		got, v := selectStrongest(slices.Clone(edges), k, &keys, &ties)
		if k > 0 && v != want[k-1].W || k == 0 && !math.IsInf(float64(v), 1) {
			t.Fatalf("trial %d: k-th value %g, want %g", trial, v, want[max(k-1, 0)].W)
		}
		key := func(e fc.Edge) [2]uint32 { return [2]uint32{e.I, e.J} }
		g := map[[2]uint32]bool{}
		for _, e := range got {
			g[key(e)] = true
		}
		if len(got) != int(k) || len(g) != int(k) {
			t.Fatalf("trial %d: %d kept, want %d", trial, len(got), k)
		}
		for _, e := range want {
			if !g[key(e)] {
				t.Fatalf("trial %d: %+v not kept", trial, e)
			}
		}
	}
}

// A density run whose candidates leave fewer than MinHostDensityChunk windows a chunk takes
// the per-window path when the sweep would run on the host's cores (the same networks as
// PerWindow, no sliding call), and the incremental path on a backend that sweeps elsewhere
// (fc.SlidingOverlap) or with room for the windows.
func TestIncrementalDensityCutover(t *testing.T) {
	const n, T, w = 200, 101, 48
	x := randomSeries(n, T, 5)
	defer func(b int) { chunkEdgeBudget = b }(chunkEdgeBudget)
	// The density's budget grows with the cores: two, as on the VM.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	// k = 995 edges a window: about 1,492 candidates.
	cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.05}
	collect := func(be fc.Backend, per bool) []*network.Network {
		var out []*network.Network
		if _, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: 1, FC: cfg, PerWindow: per}, nil, func(win *Window) error {
			out = append(out, cloneNetwork(win.Network))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		budget  int
		overlap bool
		want    bool // incremental
	}{{3000, false, false}, {3000, true, true}, {1 << 30, false, true}} {
		chunkEdgeBudget = c.budget
		counting := &countingSliding{Backend: cpu.New(cpu.Options{Workers: 2})}
		var be fc.Backend = counting
		if c.overlap {
			ov := &overlapSliding{countingSliding{Backend: counting.Backend}}
			be, counting = ov, &ov.countingSliding
		}
		got := collect(be, false)
		if inc := len(counting.chunks) > 0; inc != c.want {
			t.Fatalf("budget %d, overlap %v: incremental %v, want %v", c.budget, c.overlap, inc, c.want)
		}
		if !c.want {
			for k, want := range collect(counting.Backend, true) {
				sameNetwork(t, fmt.Sprintf("window %d", k), got[k], want)
			}
		}
	}
}

// csrSliding is overlapSliding with fc.SlidingCSR done on the host from its own edges, as a
// device hands the networks back: each window's CSR, degrees and per-node triangles (counted
// by brute force over the rows, not by windowScratch.meanClustering). rowsFrom > 0 makes the
// chunk starting at window rowsFrom fail with fc.ErrSlidingRows.
type csrSliding struct {
	overlapSliding
	n         int
	csrChunks int
	rowsFrom  int
}

func (c *csrSliding) SlidingCSR(ctx context.Context, job fc.SlidingJob, out []fc.WindowCSR) error {
	if c.rowsFrom > 0 && job.First == c.rowsFrom {
		return fc.ErrSlidingRows
	}
	c.csrChunks++
	edges := make([][]fc.Edge, job.Count)
	if err := c.Backend.SlidingEdges(ctx, job, edges); err != nil {
		return err
	}
	for k, e := range edges {
		nw := edgesToCSR(e, c.n)
		deg := Degrees(nw)
		wc := fc.WindowCSR{Indptr: nw.Indptr, Indices: nw.Indices, Weights: nw.Weights, Degree: make([]uint32, nw.N), Triangles: make([]uint32, nw.N)}
		for i, d := range deg {
			wc.Degree[i] = uint32(d)
		}
		bruteTriangles(nw.Indptr, nw.Indices, wc.Triangles)
		out[k] = wc
	}
	return nil
}

// With a backend that returns each window's CSR, degrees and triangles (fc.SlidingCSR), Run
// gives the networks, measures and degrees of the edges' path exactly; a chunk refused with
// fc.ErrSlidingRows takes its edges instead, as do the later chunks.
func TestIncrementalWindowCSR(t *testing.T) {
	const n, T, w = 160, 131, 48 // 84 windows: three chunks of 28
	x := randomSeries(n, T, 11)
	cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.25}
	collect := func(be fc.Backend) ([]*network.Network, *Result) {
		var nws []*network.Network
		res, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: 1, FC: cfg, ChunkWindows: 28}, nil, func(win *Window) error {
			nws = append(nws, cloneNetwork(win.Network))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return nws, res
	}
	wantNws, want := collect(&countingSliding{Backend: cpu.New(cpu.Options{Workers: 2})})
	for _, rowsFrom := range []int{0, 28} {
		be := &csrSliding{overlapSliding: overlapSliding{countingSliding{Backend: cpu.New(cpu.Options{Workers: 2})}}, rowsFrom: rowsFrom}
		be.n = n
		gotNws, got := collect(be)
		if wantChunks := map[int]int{0: 3, 28: 1}[rowsFrom]; be.csrChunks != wantChunks {
			t.Fatalf("refusing from window %d: %d chunks as CSR, want %d", rowsFrom, be.csrChunks, wantChunks)
		}
		if len(gotNws) != 84 || len(got.Windows) != 84 {
			t.Fatalf("%d windows, want 84", len(gotNws))
		}
		var tri float64
		for k := range gotNws {
			sameNetwork(t, fmt.Sprintf("window %d", k), gotNws[k], wantNws[k])
			gw, rw := got.Windows[k], want.Windows[k]
			if gw.Measures != rw.Measures || !slices.Equal(gw.Degree, rw.Degree) {
				t.Fatalf("window %d: %+v, from the edges %+v", k, gw.Measures, rw.Measures)
			}
			tri += gw.Measures.Clustering
		}
		if tri == 0 || got.Windows[0].Measures.LargestComponentShare <= 0.1 {
			t.Fatalf("C_p sum %v, largest component %v: the comparison proves little", tri, got.Windows[0].Measures.LargestComponentShare)
		}
	}
}

// bruteTriangles counts every node's triangles of a strict-upper-triangle CSR network by
// testing each pair of a row's columns for an edge (not windowScratch.meanClustering's walk).
func bruteTriangles(indptr []uint64, indices []uint32, tri []uint32) {
	clear(tri)
	row := func(i int) []uint32 { return indices[indptr[i]:indptr[i+1]] }
	for i := range tri {
		ri := row(i)
		for q, j := range ri {
			rj := row(int(j))
			for _, kk := range ri[q+1:] {
				if slices.Contains(rj, kk) {
					tri[i]++
					tri[j]++
					tri[kk]++
				}
			}
		}
	}
}

// triSliding is overlapSliding with fc.WindowTriangles counted on the host (bruteTriangles).
type triSliding struct {
	overlapSliding
	calls atomic.Int64 // Run counts windows on several goroutines
}

func (c *triSliding) WindowTriangles(_ context.Context, indptr []uint64, indices []uint32, tri []uint32) error {
	c.calls.Add(1)
	bruteTriangles(indptr, indices, tri)
	return nil
}

// A density run whose windows' triangles a device counts (fc.WindowTriangles) gives the
// measures and degrees of the run that counts them on the host.
func TestIncrementalWindowTriangles(t *testing.T) {
	const n, T, w = 140, 100, 40
	x := randomSeries(n, T, 12)
	defer func(m int) { minDeviceTriangles = m }(minDeviceTriangles)
	minDeviceTriangles = 0
	opt := Options{Window: w, Step: 1, FC: fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.08}}
	want, err := Run(context.Background(), &overlapSliding{countingSliding{Backend: cpu.New(cpu.Options{Workers: 2})}}, x, n, T, opt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	be := &triSliding{overlapSliding: overlapSliding{countingSliding{Backend: cpu.New(cpu.Options{Workers: 2})}}}
	got, err := Run(context.Background(), be, x, n, T, opt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if int(be.calls.Load()) != len(want.Windows) || len(got.Windows) != len(want.Windows) || len(got.Windows) != T-w+1 {
		t.Fatalf("%d device counts, %d and %d windows", be.calls.Load(), len(got.Windows), len(want.Windows))
	}
	for k := range got.Windows {
		gw, rw := got.Windows[k], want.Windows[k]
		if gw.Measures != rw.Measures || !slices.Equal(gw.Degree, rw.Degree) || gw.Measures.Clustering == 0 {
			t.Fatalf("window %d: %+v, counted on the host %+v", k, gw.Measures, rw.Measures)
		}
	}
}
