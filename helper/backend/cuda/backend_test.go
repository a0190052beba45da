//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/fc/fctest"
	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// requireGPU skips a test on machines without a usable GPU, or fails it when
// HUBSCOPE_REQUIRE_GPU=1 (scripts/gpu-check.sh sets it, so a GPU run can never silently skip).
func requireGPU(t testing.TB) string {
	t.Helper()
	desc, err := Available()
	if err != nil {
		if os.Getenv("HUBSCOPE_REQUIRE_GPU") == "1" {
			t.Fatalf("no usable GPU: %v", err)
		}
		t.Skipf("no usable GPU: %v", err)
	}
	return desc
}

func newTestBackend(t *testing.T, opts Options) fc.Backend {
	t.Helper()
	requireGPU(t)
	be, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return be
}

// TestConformance runs the suite every backend passes against the float64 reference.
func TestConformance(t *testing.T) {
	requireGPU(t)
	fctest.Run(t, func(t *testing.T) fc.Backend { return newTestBackend(t, Options{}) })
}

// TestConformanceTF32x3 runs the suite on the 3×TF32 tensor-core product (Options.TF32x3).
func TestConformanceTF32x3(t *testing.T) {
	requireGPU(t)
	fctest.Run(t, func(t *testing.T) fc.Backend { return newTestBackend(t, Options{TF32x3: true}) })
}

// collect runs op and returns every emitted pair's value in an n×n array (NaN where absent),
// failing on pairs outside their block, lower-triangle pairs or duplicates.
func collect(t *testing.T, be fc.Backend, blocks []fc.Block, op fc.Op, n int) ([]float32, int) {
	t.Helper()
	vals := make([]float32, n*n)
	for i := range vals {
		vals[i] = float32(math.NaN())
	}
	results := 0
	err := be.Run(context.Background(), blocks, op, func(r *fc.BlockResult) error {
		results++
		b := r.Block
		for _, e := range r.Edges {
			i, j := int(e.I), int(e.J)
			if i < b.I0 || i >= b.I1 || j < b.J0 || j >= b.J1 || j <= i {
				return fmt.Errorf("edge (%d,%d) outside block %+v or not i < j", i, j, b)
			}
			if !math.IsNaN(float64(vals[i*n+j])) {
				return fmt.Errorf("pair (%d,%d) emitted twice", i, j)
			}
			vals[i*n+j] = e.W
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Run %+v: %v", op, err)
	}
	return vals, results
}

// TestManyTilesAgainstReference covers what the suite's small matrices cannot: blocks of
// several 128×128 (64×64 for Kendall) tiles, partial tiles at both edges, diagonal blocks with
// skipped tiles, the two-deep pipeline over many blocks, and the overflow retry (an edge
// buffer of 64 edges that nearly every block outgrows). Values are checked against the
// float64 reference; thresholds and histograms against the backend's own values exactly.
func TestManyTilesAgainstReference(t *testing.T) {
	d := fctest.Gaussian("tiles", 613, 45, 6, 42)
	// Every 7th series rounded to one decimal: ties in some rows only, so Kendall tiles take
	// the tie-free popcount form where no row of theirs has ties and the general one elsewhere.
	for i := 0; i < d.N; i += 7 {
		for t := 0; t < d.L; t++ {
			d.X[i*d.L+t] = float32(math.Round(float64(d.X[i*d.L+t])*10) / 10)
		}
	}
	for _, m := range []fc.Measure{fc.Pearson, fc.Spearman, fc.Kendall} {
		t.Run(m.String(), func(t *testing.T) {
			ref := fctest.NewReference(d, m)
			be := newTestBackend(t, Options{EdgeCapacity: 64})
			defer be.Close()
			if err := be.Prepare(context.Background(), d.X, d.N, d.L, m); err != nil {
				t.Fatal(err)
			}
			blocks := fc.PlanBlocks(d.N, 200)
			n := d.N
			own, results := collect(t, be, blocks, fc.Op{Kind: fc.OpEdges, Threshold: math.Inf(-1), Inclusive: true}, n)
			if results != len(blocks) {
				t.Fatalf("sink called %d times for %d blocks", results, len(blocks))
			}
			worst := 0.0
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					v, want := own[i*n+j], ref.At(i, j)
					if m == fc.Kendall {
						if v != float32(want) {
							t.Fatalf("τ(%d,%d) = %v, want %v bit for bit", i, j, v, float32(want))
						}
						continue
					}
					worst = max(worst, math.Abs(float64(v)-want))
				}
			}
			if worst > fctest.Tol {
				t.Fatalf("largest deviation from the float64 reference %.3g > %g", worst, fctest.Tol)
			}
			t.Logf("%s: largest |value − float64 reference| = %.3g", m, worst)

			for _, op := range []fc.Op{
				{Kind: fc.OpEdges, Threshold: 0.25},
				{Kind: fc.OpEdges, Threshold: 0.25, Abs: true},
				{Kind: fc.OpEdges, Threshold: float64(own[3*n+400]), Inclusive: true},
				{Kind: fc.OpEdges, Threshold: float64(own[3*n+400])},
			} {
				got, _ := collect(t, be, blocks, op, n)
				for i := 0; i < n; i++ {
					for j := i + 1; j < n; j++ {
						w := op.Value(own[i*n+j])
						g := got[i*n+j]
						if keep := op.Keep(w); keep == math.IsNaN(float64(g)) || keep && g != w {
							t.Fatalf("op %+v pair (%d,%d): emitted %v, own value %v", op, i, j, g, w)
						}
					}
				}
			}
			for _, op := range []fc.Op{
				{Kind: fc.OpHistogram, Lo: -1, Hi: 1, Bins: 1_000_000},
				{Kind: fc.OpHistogram, Abs: true, Lo: 0.1, Hi: 0.9, Bins: 333},
			} {
				hist := make([]uint64, op.Bins)
				err := be.Run(context.Background(), blocks, op, func(r *fc.BlockResult) error {
					for b, c := range r.Hist {
						hist[b] += c
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n; i++ {
					for j := i + 1; j < n; j++ {
						hist[op.BinOf(op.Value(own[i*n+j]))]--
					}
				}
				for b, c := range hist {
					if c != 0 {
						t.Fatalf("histogram %+v bin %d differs from BinOf of the backend's values by %d", op, b, int64(c))
					}
				}
			}
		})
	}
}

// TestAgainstScipy compares Pearson, Spearman (average ranks) and Kendall τ-b on tie-heavy
// int16-like data with scipy.stats, an implementation independent of fc's reference.
func TestAgainstScipy(t *testing.T) {
	requireGPU(t)
	pyref.Require(t, "numpy", "scipy")
	d := fctest.Ties("scipy", 41, 23, 5, 7)
	var sb strings.Builder
	for i, v := range d.X {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.FormatFloat(float64(v), 'g', -1, 32))
	}
	script := `
import sys, numpy as np
from scipy import stats
n, l = int(sys.argv[1]), int(sys.argv[2])
x = np.array(sys.stdin.read().split(), dtype=np.float64).reshape(n, l)
for name, f in (("pearson", lambda a, b: stats.pearsonr(a, b)[0]),
                ("spearman", lambda a, b: stats.spearmanr(a, b)[0]),
                ("kendall", lambda a, b: stats.kendalltau(a, b, variant="b")[0])):
    vals = [repr(float(f(x[i], x[j]))) for i in range(n) for j in range(i + 1, n)]
    print(name, " ".join(vals))
`
	out := runPy(t, script, sb.String(), strconv.Itoa(d.N), strconv.Itoa(d.L))
	want := map[string][]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, s := range f[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("scipy output %q: %v", s, err)
			}
			want[f[0]] = append(want[f[0]], v)
		}
	}
	be := newTestBackend(t, Options{})
	defer be.Close()
	for _, m := range []fc.Measure{fc.Pearson, fc.Spearman, fc.Kendall} {
		if err := be.Prepare(context.Background(), d.X, d.N, d.L, m); err != nil {
			t.Fatal(err)
		}
		got, _ := collect(t, be, fc.PlanBlocks(d.N, 16), fc.Op{Kind: fc.OpEdges, Threshold: math.Inf(-1), Inclusive: true}, d.N)
		w := want[m.String()]
		if len(w) != d.N*(d.N-1)/2 {
			t.Fatalf("scipy gave %d %s values", len(w), m)
		}
		k := 0
		for i := 0; i < d.N; i++ {
			for j := i + 1; j < d.N; j++ {
				if diff := math.Abs(float64(got[i*d.N+j]) - w[k]); diff > 2e-6 {
					t.Errorf("%s(%d,%d) = %v, scipy %v", m, i, j, got[i*d.N+j], w[k])
				}
				k++
			}
		}
	}
}

// runPy runs a Python reference with stdin (pyref.Run passes arguments only).
func runPy(t *testing.T, script, stdin string, args ...string) []byte {
	t.Helper()
	path := t.TempDir() + "/data.txt"
	if err := os.WriteFile(path, []byte(stdin), 0o644); err != nil {
		t.Fatal(err)
	}
	return pyref.Run(t, "import sys; sys.stdin = open("+strconv.Quote(path)+"); exec("+strconv.Quote(script)+")", args...)
}

// TestSinkErrorAndReuse: an error from the sink stops Run and is returned; a call back into
// the backend from a sink is refused instead of deadlocking; the backend then runs the same
// blocks again with the same result.
func TestSinkErrorAndReuse(t *testing.T) {
	d := fctest.Gaussian("sink", 300, 30, 3, 5)
	be := newTestBackend(t, Options{})
	defer be.Close()
	if err := be.Prepare(context.Background(), d.X, d.N, d.L, fc.Pearson); err != nil {
		t.Fatal(err)
	}
	blocks := fc.PlanBlocks(d.N, 64)
	op := fc.Op{Kind: fc.OpEdges, Threshold: 0.2}
	stop := errors.New("stop")
	calls := 0
	err := be.Run(context.Background(), blocks, op, func(*fc.BlockResult) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Run with a failing sink: %v after %d calls, want the sink's error after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = be.Run(ctx, blocks, op, func(*fc.BlockResult) error { calls++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || calls >= len(blocks) {
		t.Fatalf("Run cancelled in the first sink call: %v after %d of %d blocks", err, calls, len(blocks))
	}
	var inner error
	err = be.Run(context.Background(), blocks[:1], op, func(*fc.BlockResult) error {
		inner = be.Prepare(context.Background(), d.X, d.N, d.L, fc.Pearson)
		return nil
	})
	if err != nil || inner == nil {
		t.Fatalf("Prepare from inside a sink: Run error %v, inner error %v; want the inner call refused", err, inner)
	}
	a, _ := collect(t, be, blocks, op, d.N)
	b, _ := collect(t, be, fc.PlanBlocks(d.N, 300), op, d.N)
	for i := range a {
		if !(a[i] == b[i] || math.IsNaN(float64(a[i])) && math.IsNaN(float64(b[i]))) {
			t.Fatalf("pair %d: %v with 64-row blocks, %v with one block", i, a[i], b[i])
		}
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	if err := be.Run(context.Background(), blocks, op, func(*fc.BlockResult) error { return nil }); err == nil {
		t.Fatal("Run after Close succeeded")
	}
}

// TestAvailable: the description names the device and its compute capability.
func TestAvailable(t *testing.T) {
	desc := requireGPU(t)
	if !strings.Contains(desc, "compute capability") || !strings.Contains(desc, "GiB") {
		t.Fatalf("Available() = %q", desc)
	}
	t.Log(desc)
}

// TestBadSeries: the device-side series check rejects a non-finite or constant row with the
// same fc.SeriesError the host check gives, naming the row; after the error the backend
// prepares valid data again.
func TestBadSeries(t *testing.T) {
	be := newTestBackend(t, Options{})
	defer be.Close()
	for _, c := range []struct {
		name  string
		value float32
	}{{"NaN", float32(math.NaN())}, {"Inf", float32(math.Inf(-1))}, {"constant", 0}} {
		d := fctest.Gaussian("bad", 300, 17, 3, 8)
		row := 211
		for k := 0; k < d.L; k++ {
			if c.name == "constant" {
				d.X[row*d.L+k] = 2.5
			} else if k == 9 {
				d.X[row*d.L+k] = c.value
			}
		}
		for _, m := range []fc.Measure{fc.Pearson, fc.Spearman, fc.Kendall} {
			err := be.Prepare(context.Background(), d.X, d.N, d.L, m)
			var se *fc.SeriesError
			if !errors.As(err, &se) || len(se.Rows) != 1 || se.Rows[0] != row {
				t.Fatalf("%s row, %s: Prepare error %v, want a SeriesError naming row %d", c.name, m, err, row)
			}
		}
	}
	d := fctest.Gaussian("good", 300, 17, 3, 8)
	if err := be.Prepare(context.Background(), d.X, d.N, d.L, fc.Pearson); err != nil {
		t.Fatalf("Prepare after rejected data: %v", err)
	}
}

// TestSplitBlocks forces the halving path: a 16-edge buffer that may grow to 100 edges only,
// so every block of 150 rows is split again and again (single rows then grow the buffer).
// The sink must still see each planned block once, with exactly the pairs an unconstrained
// backend emits.
func TestSplitBlocks(t *testing.T) {
	d := fctest.Gaussian("split", 451, 29, 4, 13)
	blocks := fc.PlanBlocks(d.N, 150)
	for _, m := range []fc.Measure{fc.Pearson, fc.Kendall} {
		op := fc.Op{Kind: fc.OpEdges, Threshold: -0.05, Abs: m == fc.Kendall}
		var want, got []float32
		for _, opts := range []Options{{}, {EdgeCapacity: 16, MaxEdgeCapacity: 100}} {
			be := newTestBackend(t, opts)
			if err := be.Prepare(context.Background(), d.X, d.N, d.L, m); err != nil {
				t.Fatal(err)
			}
			seen := map[fc.Block]int{}
			vals := make([]float32, d.N*d.N)
			for i := range vals {
				vals[i] = float32(math.NaN())
			}
			err := be.Run(context.Background(), blocks, op, func(r *fc.BlockResult) error {
				seen[r.Block]++
				for _, e := range r.Edges {
					vals[int(e.I)*d.N+int(e.J)] = e.W
				}
				return nil
			})
			be.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, blk := range blocks {
				if seen[blk] != 1 {
					t.Fatalf("%s %+v: block %+v reached the sink %d times", m, opts, blk, seen[blk])
				}
			}
			if len(seen) != len(blocks) {
				t.Fatalf("%s %+v: sink saw %d distinct blocks, %d planned", m, opts, len(seen), len(blocks))
			}
			if want == nil {
				want = vals
			} else {
				got = vals
			}
		}
		for i := range want {
			if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
				t.Fatalf("%s pair (%d,%d): %v with split blocks, %v without", m, i/d.N, i%d.N, got[i], want[i])
			}
		}
	}
}

// TestKendallUnitsAgree: the tensor cores' single-bit mma and the SIMT popcounts give the
// same τ for every pair, bit for bit, on tiles with and without ties, and both match the
// float64 reference exactly.
func TestKendallUnitsAgree(t *testing.T) {
	d := fctest.Gaussian("units", 389, 37, 5, 21)
	for i := 0; i < d.N; i += 5 { // ties in every 5th series
		for k := 0; k < d.L; k++ {
			d.X[i*d.L+k] = float32(math.Round(float64(d.X[i*d.L+k]) * 4))
		}
	}
	ref := fctest.NewReference(d, fc.Kendall)
	blocks := fc.PlanBlocks(d.N, 130)
	var vals [2][]float32
	for u, simt := range []bool{false, true} {
		be := newTestBackend(t, Options{KendallSIMT: simt})
		if err := be.Prepare(context.Background(), d.X, d.N, d.L, fc.Kendall); err != nil {
			t.Fatal(err)
		}
		vals[u], _ = collect(t, be, blocks, fc.Op{Kind: fc.OpEdges, Threshold: math.Inf(-1), Inclusive: true}, d.N)
		be.Close()
	}
	for i := 0; i < d.N; i++ {
		for j := i + 1; j < d.N; j++ {
			a, b := vals[0][i*d.N+j], vals[1][i*d.N+j]
			if math.Float32bits(a) != math.Float32bits(b) || a != float32(ref.At(i, j)) {
				t.Fatalf("τ(%d,%d): tensor cores %v, SIMT %v, reference %v", i, j, a, b, float32(ref.At(i, j)))
			}
		}
	}
}

// TestCorrelationUnitsAgree: the 3×TF32 tensor-core product (Options.TF32x3) and the fp32
// SIMT product (the default) both stay within fctest.Tol of the float64 reference for Pearson and
// Spearman, on short series and on long ones whose pairs are nearly collinear (|r| → 1, where
// the sums are largest), and the tensor-core value of a pair does not depend on where the
// pair falls in a tile: block heights 130 and 200 put it at different fragment positions,
// and the values must agree bit for bit (what lets both passes of a density threshold agree).
func TestCorrelationUnitsAgree(t *testing.T) {
	long := fctest.Gaussian("collinear", 300, 1500, 3, 5)
	rng := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < long.N; i++ { // x_i = f_c + 0.05·noise: |r| > 0.99 within a cluster
		for k := 0; k < long.L; k++ {
			long.X[i*long.L+k] = float32(float64(long.X[(i%3)*long.L+k]) + 0.05*rng.NormFloat64())
		}
	}
	for _, d := range []fctest.Dataset{fctest.Gaussian("units", 389, 37, 5, 21), long} {
		for _, m := range []fc.Measure{fc.Pearson, fc.Spearman} {
			ref := fctest.NewReference(d, m)
			all := fc.Op{Kind: fc.OpEdges, Threshold: math.Inf(-1), Inclusive: true}
			var tc [2][]float32
			for _, simt := range []bool{false, true} {
				be := newTestBackend(t, Options{TF32x3: !simt})
				if err := be.Prepare(context.Background(), d.X, d.N, d.L, m); err != nil {
					t.Fatal(err)
				}
				vals, _ := collect(t, be, fc.PlanBlocks(d.N, 130), all, d.N)
				if !simt {
					tc[0] = vals
					tc[1], _ = collect(t, be, fc.PlanBlocks(d.N, 200), all, d.N)
				}
				be.Close()
				worst, top := 0.0, 0.0
				for i := 0; i < d.N; i++ {
					for j := i + 1; j < d.N; j++ {
						worst = max(worst, math.Abs(float64(vals[i*d.N+j])-ref.At(i, j)))
						top = max(top, math.Abs(ref.At(i, j)))
					}
				}
				if worst > fctest.Tol {
					t.Fatalf("%s %s (SIMT %v): largest deviation %.3g from the float64 reference > %g", d.Name, m, simt, worst, fctest.Tol)
				}
				t.Logf("%s %s N=%d L=%d max|r|=%.4f SIMT=%v: largest |r − float64| = %.3g", d.Name, m, d.N, d.L, top, simt, worst)
			}
			for i := 0; i < d.N; i++ {
				for j := i + 1; j < d.N; j++ {
					if a, b := tc[0][i*d.N+j], tc[1][i*d.N+j]; math.Float32bits(a) != math.Float32bits(b) {
						t.Fatalf("%s %s r(%d,%d): %v with blocks of 130 rows, %v with 200", d.Name, m, i, j, a, b)
					}
				}
			}
		}
	}
}
