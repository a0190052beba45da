package fctest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/network"
)

// Tol is the agreement the suite demands between a backend's float32 Pearson/Spearman values
// and the float64 reference; Kendall must agree bit for bit.
const Tol = 1e-5

var measures = []fc.Measure{fc.Pearson, fc.Spearman, fc.Kendall}

// datasets are small enough that the float64 reference (Kendall O(N²L²)) stays fast.
func datasets() []Dataset {
	return []Dataset{
		Gaussian("gauss", 157, 40, 5, 1),
		Ties("ties", 97, 20, 4, 2),
		Gaussian("tinyL", 23, 3, 2, 3),
		Gaussian("longL", 30, 300, 3, 5), // long series: backends may sum in chunks
		Gaussian("pair", 2, 3, 1, 4),
	}
}

func blockHeights(n int) []int {
	hs := []int{n}
	for _, h := range []int{1, 13, 64} {
		if h < n && (h > 1 || n <= 30) {
			hs = append(hs, h)
		}
	}
	return hs
}

// Run checks the backend that newBackend creates (one per subtest; the suite closes it)
// against the float64 reference: every pair's value, histograms, thresholded edges, per-block
// top-K, and fc.Build in every threshold mode over several block heights, with tie-heavy data,
// N = 2, L = 3 and zero-variance rows.
func Run(t *testing.T, newBackend func(t *testing.T) fc.Backend) {
	open := func(t *testing.T) fc.Backend {
		be := newBackend(t)
		t.Cleanup(func() {
			if err := be.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return be
	}
	for _, d := range datasets() {
		for _, m := range measures {
			ref := NewReference(d, m)
			t.Run(fmt.Sprintf("%s/%s", d.Name, m), func(t *testing.T) {
				for _, h := range blockHeights(d.N) {
					t.Run(fmt.Sprintf("rows=%d", h), func(t *testing.T) {
						be := open(t)
						if err := be.Prepare(context.Background(), d.X, d.N, d.L, m); err != nil {
							t.Fatalf("Prepare: %v", err)
						}
						blocks := fc.PlanBlocks(d.N, h)
						own := checkValues(t, be, blocks, ref)
						checkHistogram(t, be, blocks, ref, own)
						checkEdges(t, be, blocks, ref, own)
						checkTopK(t, be, blocks, own, d.N)
					})
				}
				t.Run("build", func(t *testing.T) { checkBuild(t, open(t), d, ref) })
			})
		}
	}
	t.Run("zero-variance", func(t *testing.T) { checkZeroVariance(t, open(t)) })
	t.Run("cancel", func(t *testing.T) { checkCancel(t, open(t)) })
	if sl, ok := open(t).(fc.Sliding); ok {
		t.Run("sliding", func(t *testing.T) { CheckSliding(t, sl) })
	}
}

// allPairs runs op over blocks and returns the backend's value for every pair (NaN where
// missing), checking that each pair comes once and only from its block.
func allPairs(t *testing.T, be fc.Backend, blocks []fc.Block, op fc.Op, n int) []float32 {
	t.Helper()
	vals := make([]float32, n*n)
	for i := range vals {
		vals[i] = float32(math.NaN())
	}
	seen := make([]bool, n*n)
	err := be.Run(context.Background(), blocks, op, func(r *fc.BlockResult) error {
		b := r.Block
		for _, e := range r.Edges {
			i, j := int(e.I), int(e.J)
			if i < b.I0 || i >= b.I1 || j < b.J0 || j >= b.J1 || j <= i {
				return fmt.Errorf("edge (%d,%d) outside block %+v or not i < j", i, j, b)
			}
			if seen[i*n+j] {
				return fmt.Errorf("pair (%d,%d) emitted twice", i, j)
			}
			seen[i*n+j] = true
			vals[i*n+j] = e.W
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Run %+v: %v", op, err)
	}
	return vals
}

// checkValues reads every pair's value (OpEdges with threshold −∞) and compares it with the
// reference: within Tol for Pearson/Spearman, bit-identical for Kendall. It returns the
// backend's own values, which later checks use for exact internal consistency.
func checkValues(t *testing.T, be fc.Backend, blocks []fc.Block, ref *Reference) []float32 {
	t.Helper()
	n := ref.N
	op := fc.Op{Kind: fc.OpEdges, Threshold: math.Inf(-1), Inclusive: true}
	own := allPairs(t, be, blocks, op, n)
	bad := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v, want := own[i*n+j], ref.At(i, j)
			if !agree(ref.M, v, want) {
				if bad++; bad <= 5 {
					t.Errorf("%s value of (%d,%d) = %v, reference %v", ref.M, i, j, v, want)
				}
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d pairs disagree with the float64 reference", bad, n*(n-1)/2)
	}
	abs := allPairs(t, be, blocks, fc.Op{Kind: fc.OpEdges, Abs: true, Threshold: math.Inf(-1), Inclusive: true}, n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if w := abs[i*n+j]; w != float32(math.Abs(float64(own[i*n+j]))) {
				t.Fatalf("Abs value of (%d,%d) = %v, want |%v|", i, j, w, own[i*n+j])
			}
		}
	}
	return own
}

func agree(m fc.Measure, v float32, want float64) bool {
	if m == fc.Kendall {
		return v == float32(want)
	}
	return math.Abs(float64(v)-want) <= Tol
}

// checkHistogram demands that the backend's histogram equals Op.BinOf applied to its own
// values exactly (the exact density mode depends on it), and agrees with the reference up to
// values within Tol of a bin edge.
func checkHistogram(t *testing.T, be fc.Backend, blocks []fc.Block, ref *Reference, own []float32) {
	t.Helper()
	n := ref.N
	for _, op := range []fc.Op{
		{Kind: fc.OpHistogram, Lo: -1, Hi: 1, Bins: 1000},
		{Kind: fc.OpHistogram, Abs: true, Lo: 0, Hi: 1, Bins: 37},
		{Kind: fc.OpHistogram, Lo: 0.25, Hi: 1, Bins: 1 << 16}, // narrowed range: values below Lo in bin 0
		// the density driver's repeated range: values above Hi clamped into the last bin too
		{Kind: fc.OpHistogram, Lo: -0.1, Hi: 0.2, Bins: 1 << 12},
	} {
		got := make([]uint64, op.Bins)
		err := be.Run(context.Background(), blocks, op, func(r *fc.BlockResult) error {
			if len(r.Hist) != op.Bins {
				return fmt.Errorf("block %+v: %d bins, want %d", r.Block, len(r.Hist), op.Bins)
			}
			var sum uint64
			for b, c := range r.Hist {
				got[b] += c
				sum += c
			}
			if sum != uint64(r.Block.Pairs()) {
				return fmt.Errorf("block %+v counted %d pairs, want %d", r.Block, sum, r.Block.Pairs())
			}
			return nil
		})
		if err != nil {
			t.Fatalf("histogram %+v: %v", op, err)
		}
		self := make([]uint64, op.Bins)
		near := make([]int, op.Bins+1) // reference values within Tol of edge b
		refh := make([]uint64, op.Bins)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				self[op.BinOf(op.Value(own[i*n+j]))]++
				rv := ref.At(i, j)
				if op.Abs {
					rv = math.Abs(rv)
				}
				refh[op.BinOf(float32(rv))]++
				// values within Tol of a bin edge may fall on either side of it
				if e := math.Round((rv - op.Lo) / (op.Hi - op.Lo) * float64(op.Bins)); e >= 0 && e <= float64(op.Bins) &&
					math.Abs(rv-op.BinLower(int(e))) <= Tol {
					near[int(e)]++
				}
			}
		}
		for b := range got {
			if got[b] != self[b] {
				t.Fatalf("histogram %+v bin %d = %d, but BinOf of the backend's own values gives %d", op, b, got[b], self[b])
			}
		}
		// cumulative counts from the top may differ only by values near an edge
		var cg, cr int64
		for b := op.Bins - 1; b >= 0; b-- {
			cg += int64(got[b])
			cr += int64(refh[b])
			slack := int64(near[b]) // bins ≥ b hold the values ≥ edge b
			if d := cg - cr; d > slack || -d > slack {
				t.Fatalf("histogram %+v: %d values in bins ≥ %d, reference %d (only %d near an edge)", op, cg, b, cr, slack)
			}
		}
	}
}

// checkEdges: thresholded edges equal the pairs Op.Keep selects from the backend's own values
// exactly, and the reference's selection except pairs within Tol of the threshold.
func checkEdges(t *testing.T, be fc.Backend, blocks []fc.Block, ref *Reference, own []float32) {
	t.Helper()
	n := ref.N
	for _, op := range []fc.Op{
		{Kind: fc.OpEdges, Threshold: 0.3},
		{Kind: fc.OpEdges, Threshold: 0.3, Abs: true},
		{Kind: fc.OpEdges, Threshold: -0.2, Inclusive: true},
		{Kind: fc.OpEdges, Threshold: float64(pick(own, n)), Inclusive: true}, // a value that occurs
		{Kind: fc.OpEdges, Threshold: float64(pick(own, n))},
		{Kind: fc.OpEdges, Threshold: 2},
	} {
		got := allPairs(t, be, blocks, op, n)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				g := got[i*n+j]
				w := op.Value(own[i*n+j])
				if want := op.Keep(w); want != !math.IsNaN(float64(g)) || (want && g != w) {
					t.Fatalf("op %+v pair (%d,%d): emitted %v, own value %v (keep=%v)", op, i, j, g, w, want)
				}
				rv := ref.At(i, j)
				if op.Abs {
					rv = math.Abs(rv)
				}
				refKeep := rv > op.Threshold || (op.Inclusive && rv == op.Threshold)
				if refKeep != op.Keep(w) && math.Abs(rv-op.Threshold) > Tol {
					t.Fatalf("op %+v pair (%d,%d): backend keep=%v, reference value %v", op, i, j, op.Keep(w), rv)
				}
			}
		}
	}
}

// pick returns a value that occurs among the pairs (the median), to test thresholds that
// coincide with values exactly.
func pick(own []float32, n int) float32 {
	var vs []float32
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			vs = append(vs, own[i*n+j])
		}
	}
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// checkTopK compares OpTopK per block with the top-K of every row and column of the block by
// the backend's own values (value descending, smaller partner index first).
func checkTopK(t *testing.T, be fc.Backend, blocks []fc.Block, own []float32, n int) {
	t.Helper()
	for _, op := range []fc.Op{{Kind: fc.OpTopK, K: 1}, {Kind: fc.OpTopK, K: 3, Abs: true}} {
		err := be.Run(context.Background(), blocks, op, func(r *fc.BlockResult) error {
			b := r.Block
			want := map[[2]int]bool{}
			type cand struct {
				p int
				v float32
			}
			best := func(cs []cand) {
				slices.SortFunc(cs, func(x, y cand) int {
					if x.v != y.v {
						return cmp.Compare(y.v, x.v)
					}
					return cmp.Compare(x.p, y.p)
				})
			}
			for i := b.I0; i < b.I1; i++ {
				var cs []cand
				for j := max(b.J0, i+1); j < b.J1; j++ {
					cs = append(cs, cand{j, op.Value(own[i*n+j])})
				}
				best(cs)
				for _, c := range cs[:min(op.K, len(cs))] {
					want[[2]int{i, c.p}] = true
				}
			}
			for j := b.J0; j < b.J1; j++ {
				var cs []cand
				for i := b.I0; i < min(b.I1, j); i++ {
					cs = append(cs, cand{i, op.Value(own[i*n+j])})
				}
				best(cs)
				for _, c := range cs[:min(op.K, len(cs))] {
					want[[2]int{c.p, j}] = true
				}
			}
			got := map[[2]int]bool{}
			for _, e := range r.Edges {
				k := [2]int{int(e.I), int(e.J)}
				if got[k] {
					return fmt.Errorf("block %+v: pair %v emitted twice", b, k)
				}
				got[k] = true
				if !want[k] {
					return fmt.Errorf("block %+v: pair %v is not among its row's or column's top-%d", b, k, op.K)
				}
				if e.W != op.Value(own[k[0]*n+k[1]]) {
					return fmt.Errorf("block %+v: pair %v value %v, own value %v", b, k, e.W, op.Value(own[k[0]*n+k[1]]))
				}
			}
			if len(got) != len(want) {
				return fmt.Errorf("block %+v: %d top-%d pairs, want %d", b, len(got), op.K, len(want))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("top-K %+v: %v", op, err)
		}
	}
}

// edgesOf flattens a network into a map, validating it first.
func edgesOf(t *testing.T, nw *network.Network) map[[2]int]float32 {
	t.Helper()
	if err := nw.Validate(); err != nil {
		t.Fatalf("invalid network: %v", err)
	}
	m := make(map[[2]int]float32, nw.Edges())
	for i := 0; i < nw.N; i++ {
		cols, ws := nw.Row(i)
		for k, j := range cols {
			m[[2]int{i, int(j)}] = ws[k]
		}
	}
	return m
}

func checkZeroVariance(t *testing.T, be fc.Backend) {
	d := Gaussian("zv", 20, 10, 2, 9)
	for t2 := 0; t2 < d.L; t2++ {
		d.X[5*d.L+t2] = 3.25
	}
	for _, m := range measures {
		_, _, err := fc.Build(context.Background(), be, d.X, d.N, d.L, fc.Config{Measure: m, Threshold: 0.5}, nil)
		var se *fc.SeriesError
		if !errors.As(err, &se) || se.ZeroVariance != 1 || se.Rows[0] != 5 {
			t.Errorf("%s: Build with a constant row 5: error %v, want a SeriesError naming row 5", m, err)
		}
		if err := be.Prepare(context.Background(), d.X, d.N, d.L, m); err == nil {
			t.Errorf("%s: Prepare accepted a constant row", m)
		}
	}
}

func checkCancel(t *testing.T, be fc.Backend) {
	d := Gaussian("cancel", 300, 30, 3, 11)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := fc.Build(ctx, be, d.X, d.N, d.L, fc.Config{Threshold: 0.5, BlockRows: 16}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Build with a cancelled context: %v, want context.Canceled", err)
	}
}
