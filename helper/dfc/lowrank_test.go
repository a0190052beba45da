package dfc

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/npy"
	"gonum.org/v1/gonum/mat"
)

// structuredWindow is an N×w window whose series mix a few slow components with noise, so
// that the spectrum of U decays as real BOLD windows' does and truncation error varies with l.
func structuredWindow(n, w int, seed uint64) []float32 {
	comp := fc.BenchData(6, w, seed+100)
	x := fc.BenchData(n, w, seed)
	load := fc.BenchData(n, 6, seed+200)
	for i := 0; i < n; i++ {
		for c := 0; c < 6; c++ {
			a := load[i*6+c] * float32(1.5/float64(c+1))
			for k := 0; k < w; k++ {
				x[i*w+k] += a * comp[c*w+k]
			}
		}
	}
	return x
}

// Error falls with the rank (for the randomized factor because its sketches are nested), the
// SVD factor is never worse than the randomized sketch at the same rank (Eckart–Young is about
// the Frobenius norm, so MAE gets a small tolerance) and both are exact at l = w.
func TestLowRankErrors(t *testing.T) {
	const n, w = 700, 24
	for _, m := range []fc.Measure{fc.Pearson, fc.Spearman} {
		u, err := NormalizedWindow(structuredWindow(n, w, 11), n, w, m)
		if err != nil {
			t.Fatal(err)
		}
		prevSVD, prevRnd := math.Inf(1), math.Inf(1)
		for _, l := range []int{1, 2, 4, 8, 16, w} {
			_, lr, err := LowRankWindow(context.Background(), u, l, 0, 3)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s l=%2d: MAE svd %.3g, randomized %.3g, energy %.3f, CR %.1f", m, l, lr.MAESVD, lr.MAERandomized, lr.Energy, lr.Compression)
			if lr.MAESVD >= prevSVD || (l < w && lr.MAERandomized >= prevRnd) {
				t.Errorf("%s l=%d: MAE did not fall with the rank (svd %g after %g, randomized %g after %g)", m, l, lr.MAESVD, prevSVD, lr.MAERandomized, prevRnd)
			}
			if lr.MAESVD > lr.MAERandomized*1.02+1e-12 {
				t.Errorf("%s l=%d: SVD MAE %g above the randomized one %g", m, l, lr.MAESVD, lr.MAERandomized)
			}
			if lr.Compression != float64(n)/(2*float64(l)) {
				t.Errorf("compression ratio %g, want N/(2l) = %g", lr.Compression, float64(n)/(2*float64(l)))
			}
			prevSVD, prevRnd = lr.MAESVD, lr.MAERandomized
		}
		if prevSVD > 1e-12 || prevRnd > 1e-10 {
			t.Errorf("%s l=w: MAE svd %g, randomized %g; want ≈ 0 (S has rank ≤ w)", m, prevSVD, prevRnd)
		}
	}
}

// The sampled MAE agrees with the exact block-wise one within its sampling error, and the
// exact one agrees with a direct sum over pairs on a small case.
func TestMAEExactAndSampled(t *testing.T) {
	const n, w, l = 600, 20, 5
	u, _ := NormalizedWindow(structuredWindow(n, w, 2), n, w, fc.Pearson)
	f, _, err := SVDFactor(u, l)
	if err != nil {
		t.Fatal(err)
	}
	q, r, err := RandomizedFactor(u, l, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p, r *mat.Dense
	}{{"svd", f, f}, {"randomized", q, r}} {
		exact, err := MAE(context.Background(), u, c.p, c.r)
		if err != nil {
			t.Fatal(err)
		}
		var direct float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i != j {
					direct += math.Abs(mat.Dot(u.RowView(i), u.RowView(j)) - mat.Dot(c.p.RowView(i), c.r.RowView(j)))
				}
			}
		}
		direct /= float64(n * (n - 1))
		if math.Abs(exact-direct) > 1e-12*direct {
			t.Errorf("%s: block-wise MAE %g, direct %g", c.name, exact, direct)
		}
		sampled, err := SampledMAE(u, c.p, c.r, 200_000, 4)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sampled-exact) > 0.02*exact {
			t.Errorf("%s: sampled MAE %g vs exact %g (more than 2 %% apart)", c.name, sampled, exact)
		}
	}
	if _, err := MAE(context.Background(), u, mat.NewDense(3, l, nil), f); err == nil {
		t.Error("MAE accepted a factor with the wrong number of rows")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MAE(ctx, u, f, f); err == nil {
		t.Error("MAE ignored a cancelled context")
	}
}

// Run with Rank hands out a factor of the window matrix and its report.
func TestRunLowRank(t *testing.T) {
	const n, T, w, l = 200, 50, 16, 16
	x := structuredWindow(n, T, 5)
	be := cpu.New(cpu.Options{})
	defer be.Close()
	res, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: 17, FC: fc.Config{Mode: fc.Strength, Threshold: 0.5}, Rank: l, MAESamples: 5000}, nil, func(win *Window) error {
		if r, c := win.Factor.Dims(); r != n || c != l {
			return fmt.Errorf("factor %d×%d, want %d×%d", r, c, n, l)
		}
		u, _ := NormalizedWindow(window(x, n, T, win.Start, w), n, w, fc.Pearson)
		exact, err := MAE(context.Background(), u, win.Factor, win.Factor)
		if err != nil {
			return err
		}
		if exact > 1e-12 {
			return fmt.Errorf("window %d: full-rank factor has MAE %g", win.Index, exact)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Windows) != 3 || res.Windows[2].LowRank == nil || res.Windows[2].LowRank.Samples != 5000 {
		t.Fatalf("windows %d, last low-rank report %+v", len(res.Windows), res.Windows[len(res.Windows)-1].LowRank)
	}
}

// One window's correlations and network against numpy: np.corrcoef of the sliced series
// agrees with the normalised products, and the window's r > 0.3 network holds exactly numpy's
// pairs above 0.3 (apart from pairs within float32 rounding of the threshold).
func TestWindowAgainstNumpy(t *testing.T) {
	pyref.Require(t, "numpy")
	const n, T, w, s, thr = 120, 60, 25, 5, 0.3
	x := randomSeries(n, T, 21)
	dir := t.TempDir()
	var b bytes.Buffer
	if err := npy.WriteMatrix(&b, n, T, func(i int, dst []float32) { copy(dst, x[i*T:]) }); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "x.npy")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	const k = 3 // window 3: volumes 15–39
	out := pyref.Run(t, `
import sys, numpy as np
x = np.load(sys.argv[1]).astype(np.float64)
s, w, thr = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
r = np.corrcoef(x[:, s:s + w])
i, j = np.triu_indices(r.shape[0], 1)
for a, b in zip(i, j):
    print(a, b, repr(r[a, b]))
`, path, strconv.Itoa(k*s), strconv.Itoa(w), fmt.Sprint(thr))
	ref := map[[2]int]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var a, c int
		var v float64
		if _, err := fmt.Sscan(line, &a, &c, &v); err != nil {
			t.Fatalf("numpy line %q: %v", line, err)
		}
		ref[[2]int{a, c}] = v
	}
	if len(ref) != n*(n-1)/2 {
		t.Fatalf("numpy gave %d pairs, want %d", len(ref), n*(n-1)/2)
	}
	u, _ := NormalizedWindow(window(x, n, T, k*s, w), n, w, fc.Pearson)
	for p, v := range ref {
		if got := mat.Dot(u.RowView(p[0]), u.RowView(p[1])); math.Abs(got-v) > 1e-12 {
			t.Fatalf("pair %v: r %g, numpy %g", p, got, v)
		}
	}
	be := cpu.New(cpu.Options{})
	defer be.Close()
	checked := 0
	_, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: s, FC: fc.Config{Mode: fc.Strength, Threshold: thr}}, nil, func(win *Window) error {
		if win.Index != k {
			return nil
		}
		got := map[[2]int]float32{}
		for i := 0; i < n; i++ {
			cols, ws := win.Network.Row(i)
			for q, j := range cols {
				got[[2]int{i, int(j)}] = ws[q]
			}
		}
		for p, v := range ref {
			g, in := got[p]
			if near := math.Abs(v-thr) < 1e-6; !near && in != (v > thr) {
				return fmt.Errorf("pair %v: numpy r %g, in network %v", p, v, in)
			}
			if in && math.Abs(float64(g)-v) > 1e-6 {
				return fmt.Errorf("pair %v: weight %g, numpy %g", p, g, v)
			}
			if in {
				checked++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("window has no edges: nothing was compared")
	}
}

// The incremental path (step 1 of a 32-volume window) factorises each window's own series:
// the same factors and MAE reports as the per-window path.
func TestRunLowRankIncremental(t *testing.T) {
	const n, T, w, l = 120, 40, 32, 8
	x := structuredWindow(n, T, 6)
	be := cpu.New(cpu.Options{})
	defer be.Close()
	collect := func(per bool) []*Window {
		var out []*Window
		opt := Options{Window: w, Step: 1, FC: fc.Config{Mode: fc.Strength, Threshold: 0.5}, Rank: l, MAESamples: 2000, PerWindow: per}
		if !per && !incremental(opt) {
			t.Fatal("step 1 of 32 volumes is not on the incremental path")
		}
		if _, err := Run(context.Background(), be, x, n, T, opt, nil, func(win *Window) error {
			c := *win
			c.Factor = mat.DenseCopyOf(win.Factor)
			out = append(out, &c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	inc, ref := collect(false), collect(true)
	if len(inc) != T-w+1 || len(ref) != len(inc) {
		t.Fatalf("%d and %d windows", len(inc), len(ref))
	}
	for k := range inc {
		if !mat.Equal(inc[k].Factor, ref[k].Factor) || *inc[k].LowRank != *ref[k].LowRank {
			t.Fatalf("window %d: factor or low-rank report differs from the per-window path's", k)
		}
	}
}
