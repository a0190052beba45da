package fc

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// naive is a deliberately simple backend for testing the driver on its own: every pair is
// computed directly from the prepared rows, in float32 (Pearson, Spearman) or exactly
// (Kendall), with no tiling.
type naive struct {
	n, l     int
	u        []float32
	pos, neg []uint64
	cnt      []int64
	w        int
	m        Measure
}

func (b *naive) Name() string   { return "naive" }
func (b *naive) Device() string { return "test" }
func (b *naive) BlockRows() int { return 5 }
func (b *naive) Close() error   { return nil }

func (b *naive) Prepare(_ context.Context, x []float32, n, l int, m Measure) error {
	if err := CheckSeries(x, n, l); err != nil {
		return err
	}
	b.n, b.l, b.m = n, l, m
	b.u = make([]float32, n*l)
	switch m {
	case Pearson:
		NormalizeRows(b.u, x, n, l)
	case Spearman:
		RankRows(b.u, x, n, l)
	case Kendall:
		b.w = (SignPairs(l) + 63) / 64
		b.pos, b.neg, b.cnt = make([]uint64, n*b.w), make([]uint64, n*b.w), make([]int64, n)
		for i := 0; i < n; i++ {
			b.cnt[i] = SignBitPlanes(b.pos[i*b.w:(i+1)*b.w], b.neg[i*b.w:(i+1)*b.w], x[i*l:(i+1)*l])
		}
	}
	return nil
}

func (b *naive) value(i, j int) float32 {
	if b.m == Kendall {
		w := b.w
		return KendallTau(SignDot(b.pos[i*w:(i+1)*w], b.neg[i*w:(i+1)*w], b.pos[j*w:(j+1)*w], b.neg[j*w:(j+1)*w]), b.cnt[i], b.cnt[j])
	}
	var s float32
	for t := 0; t < b.l; t++ {
		s += b.u[i*b.l+t] * b.u[j*b.l+t]
	}
	return s
}

func (b *naive) Run(ctx context.Context, blocks []Block, op Op, sink func(*BlockResult) error) error {
	for _, blk := range blocks {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &BlockResult{Block: blk}
		if op.Kind == OpHistogram {
			r.Hist = make([]uint64, op.Bins)
		}
		rowTop := map[int][]Edge{}
		colTop := map[int][]Edge{}
		for i := blk.I0; i < blk.I1; i++ {
			for j := max(blk.J0, i+1); j < blk.J1; j++ {
				v := op.Value(b.value(i, j))
				e := Edge{uint32(i), uint32(j), v}
				switch op.Kind {
				case OpEdges:
					if op.Keep(v) {
						r.Edges = append(r.Edges, e)
					}
				case OpHistogram:
					r.Hist[op.BinOf(v)]++
				case OpTopK:
					rowTop[i] = insertTop(rowTop[i], e, op.K, func(e Edge) uint32 { return e.J })
					colTop[j] = insertTop(colTop[j], e, op.K, func(e Edge) uint32 { return e.I })
				}
			}
		}
		seen := map[[2]uint32]bool{}
		for _, m := range []map[int][]Edge{rowTop, colTop} {
			for _, es := range m {
				for _, e := range es {
					if !seen[[2]uint32{e.I, e.J}] {
						seen[[2]uint32{e.I, e.J}] = true
						r.Edges = append(r.Edges, e)
					}
				}
			}
		}
		if err := sink(r); err != nil {
			return err
		}
	}
	return nil
}

// insertTop keeps the k best edges by (value desc, partner asc) in a sorted slice.
func insertTop(es []Edge, e Edge, k int, partner func(Edge) uint32) []Edge {
	es = append(es, e)
	for i := len(es) - 1; i > 0; i-- {
		a, b := es[i], es[i-1]
		if a.W > b.W || (a.W == b.W && partner(a) < partner(b)) {
			es[i], es[i-1] = b, a
		}
	}
	if len(es) > k {
		es = es[:k]
	}
	return es
}

func randomSeries(n, l int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	x := make([]float32, n*l)
	for i := range x {
		x[i] = float32(rng.NormFloat64() + 0.5*float64(i/l%3)*math.Sin(float64(i%l)))
	}
	return x
}

// TestDensityFallback forces the sampled lower bound above the k-th largest value: the
// two-pass method must notice the boundary in bin 0 and repeat the histogram over the full
// range, the single-pass method must notice it has fewer than k candidates; both must still
// return exactly the network of the full-range histogram method. Without the override the
// methods must agree too.
func TestDensityFallback(t *testing.T) {
	n, l := 120, 30
	x := randomSeries(n, l, 4)
	base := Config{Mode: Density, Density: 0.1, Bins: 1 << 12, DensityMethod: DensityHistogram}
	want, _, err := Build(context.Background(), &naive{}, x, n, l, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want.Edges() != int64(math.Round(0.1*float64(n*(n-1)/2))) {
		t.Fatalf("%d edges", want.Edges())
	}
	for _, force := range []bool{false, true} {
		for _, method := range []DensityMethod{DensityAuto, DensityTwoPass, DensitySinglePass} {
			if force {
				sampleOverride = func(sampleBounds) sampleBounds { return sampleBounds{tight: 0.9, wide: 0.9, wideOK: true} }
			}
			cfg := base
			cfg.DensityMethod = method
			got, rpt, err := Build(context.Background(), &naive{}, x, n, l, cfg, nil)
			sampleOverride = nil
			if err != nil {
				t.Fatal(err)
			}
			if force && len(rpt.Notes) == 0 {
				t.Fatalf("method %d: fallback not reported", method)
			}
			if got.Edges() != want.Edges() {
				t.Fatalf("method %d (forced fallback %v): %d edges, histogram method %d", method, force, got.Edges(), want.Edges())
			}
			for i := range want.Indices {
				if got.Indices[i] != want.Indices[i] || got.Weights[i] != want.Weights[i] {
					t.Fatalf("method %d (forced fallback %v): network differs at edge %d", method, force, i)
				}
			}
		}
	}
}

// TestDensityTies: with Kendall on 3-level data many pairs share a value; the selection must
// take exactly k, the smaller (i, j) winning among equal values.
func TestDensityTies(t *testing.T) {
	n, l := 60, 6
	rng := rand.New(rand.NewPCG(9, 9))
	x := make([]float32, n*l)
	for i := 0; i < n; i++ {
		for {
			for q := 0; q < l; q++ {
				x[i*l+q] = float32(rng.IntN(3))
			}
			if CheckSeries(x[i*l:(i+1)*l], 1, l) == nil {
				break
			}
		}
	}
	be := &naive{}
	for _, d := range []float64{0.01, 0.1, 0.37} {
		nw, rpt, err := Build(context.Background(), be, x, n, l, Config{Measure: Kendall, Mode: Density, Density: d, Bins: 64}, nil)
		if err != nil {
			t.Fatal(err)
		}
		k := int64(math.Round(d * float64(n*(n-1)/2)))
		if nw.Edges() != k {
			t.Fatalf("density %g: %d edges, want %d", d, nw.Edges(), k)
		}
		cut := float32(rpt.Threshold)
		// every pair above the cut is in; at the cut, the kept ones are the first in (i, j) order
		var atCut, keptAtCut int64
		inNet := map[[2]int]bool{}
		for i := 0; i < n; i++ {
			cols, _ := nw.Row(i)
			for _, j := range cols {
				inNet[[2]int{i, int(j)}] = true
			}
		}
		lastKept := true
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				v := be.value(i, j)
				in := inNet[[2]int{i, j}]
				switch {
				case v > cut && !in, v < cut && in:
					t.Fatalf("density %g: pair (%d,%d) τ=%v cut %v in=%v", d, i, j, v, cut, in)
				case v == cut:
					atCut++
					if in {
						keptAtCut++
						if !lastKept {
							t.Fatalf("density %g: tie at %v kept (%d,%d) after dropping a smaller pair", d, cut, i, j)
						}
					}
					lastKept = in
				}
			}
		}
		if atCut <= keptAtCut && d > 0.05 {
			t.Logf("density %g: no tie straddles the cut (%d at cut)", d, atCut)
		}
	}
}

// noting is the naive backend with a note of its own during every Run (fc.Noter), as the
// CUDA backend says when device memory ran out and blocks went in halves.
type noting struct {
	naive
	note func(string)
	set  int // SetNote calls with a function
}

func (b *noting) SetNote(f func(string)) {
	if f != nil {
		b.set++
	}
	b.note = f
}

func (b *noting) Run(ctx context.Context, blocks []Block, op Op, sink func(*BlockResult) error) error {
	if b.note != nil {
		b.note("test backend: a change of plan")
	}
	return b.naive.Run(ctx, blocks, op, sink)
}

// TestBackendNotesReachTheReport checks the Noter plumbing: Build hands the backend its note
// function, the backend's line lands in Report.Notes, and Build takes the function back.
func TestBackendNotesReachTheReport(t *testing.T) {
	b := &noting{}
	x := randomSeries(12, 40, 3)
	_, rpt, err := Build(context.Background(), b, x, 12, 40, Config{Measure: Pearson, Mode: Strength, Threshold: 0.1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range rpt.Notes {
		found = found || n == "test backend: a change of plan"
	}
	if !found || b.set != 1 || b.note != nil {
		t.Errorf("notes %q, SetNote with a function %d times (want 1), note kept after Build: %v", rpt.Notes, b.set, b.note != nil)
	}
}

// checking is the naive backend as a SeriesChecker: it records whether Prepare saw the
// series (naive.Prepare checks them itself with CheckSeries).
type checking struct {
	naive
	checks   bool
	prepared int
}

func (b *checking) ChecksSeries() bool { return b.checks }

func (b *checking) Prepare(ctx context.Context, x []float32, n, l int, m Measure) error {
	b.prepared++
	return b.naive.Prepare(ctx, x, n, l, m)
}

// TestSeriesCheckerSkipsTheHostScan: Build leaves the row check to a backend that says it
// checks them (the bad row reaches Prepare, whose error wraps the same SeriesError), keeps
// checking the shape itself, and scans the rows first for any other backend.
func TestSeriesCheckerSkipsTheHostScan(t *testing.T) {
	x := randomSeries(12, 40, 5)
	for q := range 40 {
		x[3*40+q] = 1.5
	}
	cfg := Config{Measure: Pearson, Mode: Strength, Threshold: 0.1}
	for _, checks := range []bool{true, false} {
		b := &checking{checks: checks}
		_, _, err := Build(context.Background(), b, x, 12, 40, cfg, nil)
		var se *SeriesError
		if !errors.As(err, &se) || se.ZeroVariance != 1 || se.Rows[0] != 3 {
			t.Fatalf("ChecksSeries %v: error %v, want a SeriesError naming row 3", checks, err)
		}
		if err.Error() != se.Error() { // one line, the same either way: not wrapped in "preparing …"
			t.Errorf("ChecksSeries %v: error %q, want %q", checks, err, se)
		}
		if want := map[bool]int{true: 1, false: 0}[checks]; b.prepared != want {
			t.Errorf("ChecksSeries %v: Prepare called %d times, want %d", checks, b.prepared, want)
		}
		b.prepared = 0
		if _, _, err := Build(context.Background(), b, x[:12*40-1], 12, 40, cfg, nil); err == nil || b.prepared != 0 {
			t.Errorf("ChecksSeries %v: a short matrix gave error %v after %d Prepare calls", checks, err, b.prepared)
		}
	}
}
