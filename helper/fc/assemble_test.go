package fc

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/network"
)

// referenceCSR builds the network of the given edges the obvious way: one comparison sort of
// all edges by (i, j), then rows in order. It shares no code with the assembler.
func referenceCSR(n int, es []Edge) *network.Network {
	es = slices.Clone(es)
	slices.SortFunc(es, func(x, y Edge) int {
		if x.I != y.I {
			return int(x.I) - int(y.I)
		}
		return int(x.J) - int(y.J)
	})
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1)}
	for _, e := range es {
		nw.Indices = append(nw.Indices, e.J)
		nw.Weights = append(nw.Weights, e.W)
		nw.Indptr[e.I+1]++
	}
	for i := 0; i < n; i++ {
		nw.Indptr[i+1] += nw.Indptr[i]
	}
	return nw
}

// sameNetwork reports the first difference, comparing weights bit for bit.
func sameNetwork(t *testing.T, got, want *network.Network) {
	t.Helper()
	if got.N != want.N || len(got.Indices) != len(want.Indices) || len(got.Weights) != len(got.Indices) {
		t.Fatalf("N %d, %d edges; want N %d, %d edges", got.N, len(got.Indices), want.N, len(want.Indices))
	}
	for i := range want.Indptr {
		if got.Indptr[i] != want.Indptr[i] {
			t.Fatalf("Indptr[%d] = %d, want %d", i, got.Indptr[i], want.Indptr[i])
		}
	}
	for x := range want.Indices {
		if got.Indices[x] != want.Indices[x] || math.Float32bits(got.Weights[x]) != math.Float32bits(want.Weights[x]) {
			t.Fatalf("entry %d = (%d, %v), want (%d, %v)", x, got.Indices[x], got.Weights[x], want.Indices[x], want.Weights[x])
		}
	}
}

// randomBlocks returns every planned block's edges (each pair with probability p, weights
// uniform in [−1, 1), shuffled) in a random block order.
func randomBlocks(rng *rand.Rand, n, rows int, p float64) []BlockResult {
	var out []BlockResult
	for _, b := range PlanBlocks(n, rows) {
		var es []Edge
		for i := b.I0; i < b.I1; i++ {
			for j := max(b.J0, i+1); j < b.J1; j++ {
				if rng.Float64() < p {
					es = append(es, Edge{uint32(i), uint32(j), float32(2*rng.Float64() - 1)})
				}
			}
		}
		rng.Shuffle(len(es), func(x, y int) { es[x], es[y] = es[y], es[x] })
		out = append(out, BlockResult{Block: b, Edges: es})
	}
	rng.Shuffle(len(out), func(x, y int) { out[x], out[y] = out[y], out[x] })
	return out
}

// feed hands the blocks to a as a backend does: from one reused buffer that is overwritten
// (with edges of another block) as soon as the sink returns.
func feed(a *assembler, blocks []BlockResult) error {
	var buf []Edge
	for k := range blocks {
		buf = append(buf[:0], blocks[k].Edges...)
		if err := a.add(&BlockResult{Block: blocks[k].Block, Edges: buf}); err != nil {
			return err
		}
		for x := range buf {
			buf[x] = Edge{I: 1 << 31, J: 1<<31 + 1, W: float32(math.NaN())}
		}
	}
	return nil
}

// withProcs runs f with GOMAXPROCS = 1 (the sink assembles inline) and 4 (worker pool), each
// with the default strip size (whole blocks at these sizes) and with strips of 16 edges (so
// blocks of more than 128 edges are sorted strip by strip).
func withProcs(t *testing.T, f func(t *testing.T)) {
	for _, procs := range []int{1, 4} {
		for _, strip := range []int{stripEdges, 16} {
			t.Run("procs="+itoa(procs)+",strip="+itoa(strip), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				defer func(s int) { stripEdges = s }(stripEdges)
				stripEdges = strip
				f(t)
			})
		}
	}
}

func sortedIJ(es []Edge) []Edge {
	es = slices.Clone(es)
	slices.SortFunc(es, cmpIJ)
	return es
}

// TestAssemblerMatchesReference checks the parallel assembly against referenceCSR for the
// three kinds of passes (keep all, hold all, per-edge classification with extra edges merged
// back as the density mode does), panel heights that do and do not divide N, and blocks in
// random order.
func TestAssemblerMatchesReference(t *testing.T) {
	withProcs(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 11))
		for _, c := range []struct{ n, rows int }{{300, 64}, {301, 37}, {50, 50}, {97, 1000}, {2, 1}} {
			blocks := randomBlocks(rng, c.n, min(c.rows, c.n), 0.2)
			var all []Edge
			for _, r := range blocks {
				all = append(all, r.Edges...)
			}
			rows := min(c.rows, c.n)

			a := newAssembler(c.n, rows, nil)
			if err := feed(a, blocks); err != nil {
				t.Fatal(err)
			}
			nw, err := a.finish(nil)
			if err != nil {
				t.Fatal(err)
			}
			sameNetwork(t, nw, referenceCSR(c.n, all))
			if a.kept != int64(len(all)) || len(a.held) != 0 {
				t.Fatalf("n=%d: kept %d held %d, want %d and 0", c.n, a.kept, len(a.held), len(all))
			}

			a = newAssemblerAll(c.n, rows, hold)
			if err := feed(a, blocks); err != nil {
				t.Fatal(err)
			}
			if err := a.wait(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sortedIJ(a.held), sortedIJ(all)) {
				t.Fatalf("n=%d: hold-all pass held %d edges, want all %d", c.n, len(a.held), len(all))
			}

			class := func(e Edge) edgeClass {
				switch {
				case e.W > 0.3:
					return keep
				case e.W > 0:
					return hold
				}
				return drop
			}
			var kept, held []Edge
			for _, e := range all {
				switch class(e) {
				case keep:
					kept = append(kept, e)
				case hold:
					held = append(held, e)
				}
			}
			a = newAssembler(c.n, rows, class)
			if err := feed(a, blocks); err != nil {
				t.Fatal(err)
			}
			if err := a.wait(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sortedIJ(a.held), sortedIJ(held)) {
				t.Fatalf("n=%d: held %d edges, want %d", c.n, len(a.held), len(held))
			}
			// as the density mode: every other held edge is selected and merged back
			var sel []Edge
			for x, e := range sortedIJ(a.held) {
				if x%2 == 0 {
					sel = append(sel, e)
				}
			}
			nw, err = a.finish(sel)
			if err != nil {
				t.Fatal(err)
			}
			sameNetwork(t, nw, referenceCSR(c.n, append(slices.Clone(kept), sel...)))
			if err := nw.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestAssemblerEachFilter checks the single-pass density helpers against the reference order.
func TestAssemblerEachFilter(t *testing.T) {
	withProcs(t, func(t *testing.T) {
		n, rows := 200, 48
		blocks := randomBlocks(rand.New(rand.NewPCG(3, 5)), n, rows, 0.3)
		var all []Edge
		for _, r := range blocks {
			all = append(all, r.Edges...)
		}
		a := newAssembler(n, rows, nil)
		if err := feed(a, blocks); err != nil {
			t.Fatal(err)
		}
		if err := a.wait(); err != nil {
			t.Fatal(err)
		}
		var seen []Edge
		a.each(func(i int, j uint32, w float32) { seen = append(seen, Edge{uint32(i), j, w}) })
		if want := sortedIJ(all); !slices.Equal(seen, want) {
			t.Fatalf("each visited %d edges, want %d in (i, j) order", len(seen), len(want))
		}
		pass := func(i int, j uint32, w float32) bool { return w > 0.5 || (i+int(j))%7 == 0 }
		a.filter(pass)
		var kept []Edge
		for _, e := range all {
			if pass(int(e.I), e.J, e.W) {
				kept = append(kept, e)
			}
		}
		if a.kept != int64(len(kept)) {
			t.Fatalf("filter kept %d, want %d", a.kept, len(kept))
		}
		nw, err := a.finish(nil)
		if err != nil {
			t.Fatal(err)
		}
		sameNetwork(t, nw, referenceCSR(n, kept))
	})
}

// TestAssemblerRejects checks that a backend's slips are reported (by add or by finish), not
// assembled into a corrupt network.
func TestAssemblerRejects(t *testing.T) {
	withProcs(t, func(t *testing.T) {
		n, rows := 40, 16
		good := func() []BlockResult {
			bs := randomBlocks(rand.New(rand.NewPCG(1, 2)), n, rows, 0.5)
			slices.SortFunc(bs, func(x, y BlockResult) int { return (x.Block.I0-y.Block.I0)*n + x.Block.J0 - y.Block.J0 })
			return bs
		}
		for _, c := range []struct {
			name, want string
			spoil      func([]BlockResult) []BlockResult
			classify   func(Edge) edgeClass
		}{
			{"edge below diagonal", "outside block", func(bs []BlockResult) []BlockResult {
				bs[0].Edges[3] = Edge{5, 5, 1}
				return bs
			}, nil},
			{"edge in another block's columns", "outside block", func(bs []BlockResult) []BlockResult {
				bs[1].Edges[0].J = 3
				return bs
			}, func(e Edge) edgeClass { return keep }},
			{"edge in another block's rows", "outside block", func(bs []BlockResult) []BlockResult {
				bs[len(bs)-1].Edges[0].I = 0
				return bs
			}, nil},
			{"edge twice", "more than once", func(bs []BlockResult) []BlockResult {
				bs[2].Edges = append(bs[2].Edges, bs[2].Edges[len(bs[2].Edges)/2])
				return bs
			}, nil},
			{"edge twice, classified", "more than once", func(bs []BlockResult) []BlockResult {
				bs[2].Edges = append(bs[2].Edges, bs[2].Edges[0])
				return bs
			}, func(e Edge) edgeClass { return keep }},
			{"block twice", "more than once", func(bs []BlockResult) []BlockResult {
				return append(bs[:2:2], bs[1:]...)
			}, nil},
			{"unplanned block", "did not plan", func(bs []BlockResult) []BlockResult {
				bs[1].Block.J0++
				return bs
			}, nil},
			{"missing block", "still waits", func(bs []BlockResult) []BlockResult {
				return bs[1:]
			}, nil},
		} {
			a := newAssembler(n, rows, c.classify)
			err := feed(a, c.spoil(good()))
			if err == nil {
				_, err = a.finish(nil)
			} else {
				a.wait()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
			}
		}
		// and the unspoilt blocks pass
		a := newAssembler(n, rows, nil)
		if err := feed(a, good()); err != nil {
			t.Fatal(err)
		}
		if _, err := a.finish(nil); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBuildCSRExtraOrder: extra edges must come sorted by (i, j) and disjoint from the panels.
func TestBuildCSRExtraOrder(t *testing.T) {
	for _, extra := range [][]Edge{
		{{2, 5, 1}, {1, 3, 1}},
		{{1, 3, 1}, {1, 3, 2}},
		{{1, 4, 1}, {1, 3, 1}},
		{{9, 12, 1}},
	} {
		if _, err := buildCSR(10, 10, []*panelChunk{nil}, extra); err == nil {
			t.Errorf("extra edges %v accepted", extra)
		}
	}
	nw, err := buildCSR(10, 4, make([]*panelChunk, 3), []Edge{{0, 9, 1}, {4, 5, 2}, {9, 9, 3}}[:2])
	if err != nil {
		t.Fatal(err)
	}
	sameNetwork(t, nw, referenceCSR(10, []Edge{{0, 9, 1}, {4, 5, 2}}))
}

// TestAssemblerBins checks the density mode's comparison rule (newAssemblerBins) against
// Op.BinOf itself on values at and next to bin edges, ±0, ±1, out of range, ±Inf and NaN,
// for full-range, |v| and narrowed histograms.
func TestAssemblerBins(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const n = 120 // 7140 pairs, one block
	for _, op := range []Op{
		{Lo: -1, Hi: 1, Bins: DefaultBins},
		{Lo: 0, Hi: 1, Bins: 1000},
		{Lo: 0.37, Hi: 1, Bins: 7},
		{Lo: 0.9993, Hi: 1, Bins: DefaultBins},
	} {
		for _, b := range []int{0, 1, op.Bins / 2, op.Bins - 2, op.Bins - 1} {
			var vals []float32
			for _, x := range []float64{op.BinLower(b), op.BinLower(b + 1), op.BinLower(b - 1), 0, 1, -1, op.Lo} {
				v := float32(x)
				vals = append(vals, v, -v)
				up, down := v, v
				for range 3 {
					up, down = math.Nextafter32(up, 2), math.Nextafter32(down, -2)
					vals = append(vals, up, down)
				}
			}
			inf := float32(math.Inf(1))
			vals = append(vals, inf, -inf, float32(math.NaN()), 1e6, -1e6, binRange, -binRange, 2*binRange, -2*binRange)
			for len(vals) < n*(n-1)/2 {
				vals = append(vals, float32(rng.Float64()*3-1.5))
			}
			var es []Edge
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					es = append(es, Edge{uint32(i), uint32(j), vals[len(es)]})
				}
			}
			a := newAssemblerBins(n, n, &op, b)
			if err := feed(a, []BlockResult{{Block: Block{0, n, 0, n}, Edges: es}}); err != nil {
				t.Fatal(err)
			}
			if err := a.wait(); err != nil {
				t.Fatal(err)
			}
			got := map[[2]uint32]edgeClass{}
			a.each(func(i int, j uint32, w float32) { got[[2]uint32{uint32(i), j}] = keep })
			for _, e := range a.held {
				got[[2]uint32{e.I, e.J}] = hold
			}
			for _, e := range es {
				want := drop
				switch bin := op.BinOf(e.W); {
				case bin > b:
					want = keep
				case bin == b:
					want = hold
				}
				if g := got[[2]uint32{e.I, e.J}]; g != want {
					t.Fatalf("op %+v, boundary bin %d: value %v (bin %d) classed %d, want %d",
						op, b, e.W, op.BinOf(e.W), g, want)
				}
			}
		}
	}
}
