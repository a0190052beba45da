package fctest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
)

// buildCases are the fc.Build configurations the suite runs per dataset and measure.
func buildCases() []fc.Config {
	return []fc.Config{
		{Mode: fc.Strength, Threshold: 0.3},
		{Mode: fc.Strength, Threshold: 0.3, Abs: true},
		{Mode: fc.Density, Density: 0.05},
		{Mode: fc.Density, Density: 0.1, Abs: true},
		{Mode: fc.Density, Density: 0.2, Bins: 16},                                        // coarse bins: large boundary bin
		{Mode: fc.Density, Density: 0.02, Bins: 1000, DensityMethod: fc.DensityHistogram}, // Zhao et al.'s full-range histogram
		{Mode: fc.Density, Density: 0.03, DensityMethod: fc.DensityTwoPass},
		{Mode: fc.Density, Density: 0.04, Abs: true, DensityMethod: fc.DensitySinglePass},
		{Mode: fc.Density, Density: 1},
		{Mode: fc.Density, Density: 0},
		{Mode: fc.Significance, Alpha: 0.05, Correction: fc.Bonferroni},
		{Mode: fc.Significance, Alpha: 0.05, Correction: fc.FDR},
		{Mode: fc.Significance, Alpha: 0.01, Correction: fc.FDR, Abs: true},
		{Mode: fc.NearestNeighbours, K: 3},
		{Mode: fc.NearestNeighbours, K: 2, Abs: true},
	}
}

func caseName(c fc.Config) string {
	s := c.Mode.String()
	switch c.Mode {
	case fc.Strength:
		s += fmt.Sprintf("=%g", c.Threshold)
	case fc.Density:
		s += fmt.Sprintf("=%g", c.Density)
		if c.Bins > 0 {
			s += fmt.Sprintf(",bins=%d", c.Bins)
		}
		s += fmt.Sprintf(",method=%d", c.DensityMethod)
	case fc.Significance:
		s += fmt.Sprintf("=%g,%s", c.Alpha, c.Correction)
	case fc.NearestNeighbours:
		s += fmt.Sprintf("=%d", c.K)
	}
	if c.Abs {
		s += ",abs"
	}
	return s
}

// refPair is one pair with its reference value (|v| under Abs).
type refPair struct {
	i, j int
	v    float64
}

// sortedPairs lists all pairs by (value desc, i, j) — the density mode's tie-break.
func sortedPairs(ref *Reference, abs bool) []refPair {
	var ps []refPair
	for i := 0; i < ref.N; i++ {
		for j := i + 1; j < ref.N; j++ {
			v := ref.At(i, j)
			if abs {
				v = math.Abs(v)
			}
			ps = append(ps, refPair{i, j, v})
		}
	}
	slices.SortFunc(ps, func(a, b refPair) int {
		if a.v != b.v {
			return cmp.Compare(b.v, a.v)
		}
		if a.i != b.i {
			return cmp.Compare(a.i, b.i)
		}
		return cmp.Compare(a.j, b.j)
	})
	return ps
}

// band is the width around a cut inside which the backend may differ from the reference:
// Tol for float32 products, nothing but float64-vs-float32 rounding for Kendall.
func band(m fc.Measure) float64 {
	if m == fc.Kendall {
		return 1e-9
	}
	return Tol
}

// checkCut compares a network with the reference selection "value ≥ cut" (or > cut), allowing
// disagreement only for pairs within band of the cut, and checks weights.
func checkCut(t *testing.T, got map[[2]int]float32, ref *Reference, abs, positiveOnly bool, cut float64, inclusive bool) {
	t.Helper()
	bw := band(ref.M)
	for i := 0; i < ref.N; i++ {
		for j := i + 1; j < ref.N; j++ {
			v := ref.At(i, j)
			if abs {
				v = math.Abs(v)
			}
			want := v > cut || (inclusive && v == cut)
			if positiveOnly && v <= 0 {
				want = false
			}
			w, have := got[[2]int{i, j}]
			if have != want && math.Abs(v-cut) > bw {
				t.Fatalf("pair (%d,%d) value %v: in network = %v, reference cut %v (inclusive %v)", i, j, v, have, cut, inclusive)
			}
			if have && !agree(ref.M, w, v) {
				t.Fatalf("pair (%d,%d) weight %v, reference %v", i, j, w, v)
			}
		}
	}
}

func checkBuild(t *testing.T, be fc.Backend, d Dataset, ref *Reference) {
	m := int64(d.N) * int64(d.N-1) / 2
	for _, h := range []int{0, 13} {
		for _, c := range buildCases() {
			c.Measure, c.BlockRows = ref.M, h
			if h > 0 && (c.Mode == fc.Density || c.Mode == fc.Significance) && c.Bins == 0 {
				c.Bins = 1 << 12 // many small blocks: keep the per-block histograms small
			}
			t.Run(fmt.Sprintf("%s/rows=%d", caseName(c), h), func(t *testing.T) {
				nw, rpt, err := fc.Build(context.Background(), be, d.X, d.N, d.L, c, nil)
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				got := edgesOf(t, nw)
				if rpt.Edges != int64(len(got)) || rpt.Edges != nw.Edges() {
					t.Fatalf("report says %d edges, network has %d", rpt.Edges, len(got))
				}
				iso, lcc := components(d.N, got)
				if rpt.Isolated != iso || rpt.LargestComponent != lcc {
					t.Fatalf("report: %d isolated, largest component %d; BFS finds %d and %d", rpt.Isolated, rpt.LargestComponent, iso, lcc)
				}
				switch c.Mode {
				case fc.Strength:
					checkCut(t, got, ref, c.Abs, false, c.Threshold, false)
				case fc.Density:
					checkDensity(t, got, ref, c, m)
				case fc.Significance:
					checkSignificance(t, got, ref, c, m, rpt)
				case fc.NearestNeighbours:
					checkKNN(t, got, ref, c)
				}
			})
		}
	}
}

func checkDensity(t *testing.T, got map[[2]int]float32, ref *Reference, c fc.Config, m int64) {
	t.Helper()
	k := int(math.Round(c.Density * float64(m)))
	if len(got) != k {
		t.Fatalf("density %g: %d edges, want exactly round(%g·%d) = %d", c.Density, len(got), c.Density, m, k)
	}
	if k == 0 {
		return
	}
	ps := sortedPairs(ref, c.Abs)
	if ref.M == fc.Kendall { // bit-exact values: the selection, tie-break included, is exact
		for _, p := range ps[:k] {
			if _, ok := got[[2]int{p.i, p.j}]; !ok {
				t.Fatalf("density %g: pair (%d,%d) value %v is among the %d strongest (ties by (i,j)) but missing", c.Density, p.i, p.j, p.v, k)
			}
		}
		return
	}
	checkCut(t, got, ref, c.Abs, false, ps[k-1].v, true)
}

func checkSignificance(t *testing.T, got map[[2]int]float32, ref *Reference, c fc.Config, m int64, rpt *fc.Report) {
	t.Helper()
	ps := sortedPairs(ref, true)
	var cut float64
	if c.Correction == fc.Bonferroni {
		cut = math.Inf(1)
		for _, p := range ps {
			if fc.PValue(ref.M, p.v, ref.L) <= c.Alpha/float64(m) {
				cut = p.v
			}
		}
	} else { // Benjamini–Hochberg: largest k with p_(k) ≤ k·α/m
		cut = math.Inf(1)
		for k, p := range ps {
			if fc.PValue(ref.M, p.v, ref.L) <= float64(k+1)*c.Alpha/float64(m) {
				cut = p.v
			}
		}
	}
	if !math.IsInf(cut, 1) && !math.IsInf(rpt.Threshold, 1) && math.Abs(rpt.Threshold-cut) > 1e-3 {
		// the cut lies between two reference values; the report's must be close to it
		t.Logf("reported threshold %v, reference cut %v", rpt.Threshold, cut)
	}
	checkCut(t, got, ref, c.Abs, !c.Abs, cut, true)
}

// checkKNN: every node keeps its K best partners (value desc, smaller index first); the
// network is the union. Kendall is checked exactly, the others up to near-ties.
func checkKNN(t *testing.T, got map[[2]int]float32, ref *Reference, c fc.Config) {
	t.Helper()
	n := ref.N
	k := min(c.K, n-1)
	kth := make([]float64, n)
	tops := make([][]int, n)
	for v := 0; v < n; v++ {
		var ps []refPair
		for u := 0; u < n; u++ {
			if u != v {
				x := ref.At(u, v)
				if c.Abs {
					x = math.Abs(x)
				}
				ps = append(ps, refPair{u, 0, x})
			}
		}
		slices.SortFunc(ps, func(a, b refPair) int {
			if a.v != b.v {
				return cmp.Compare(b.v, a.v)
			}
			return cmp.Compare(a.i, b.i)
		})
		kth[v] = ps[k-1].v
		for _, p := range ps[:k] {
			tops[v] = append(tops[v], p.i)
		}
	}
	want := map[[2]int]bool{}
	for v, us := range tops {
		for _, u := range us {
			want[[2]int{min(u, v), max(u, v)}] = true
		}
	}
	bw := band(ref.M)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			x := ref.At(i, j)
			if c.Abs {
				x = math.Abs(x)
			}
			w, have := got[[2]int{i, j}]
			if have && !agree(ref.M, w, x) {
				t.Fatalf("kNN pair (%d,%d) weight %v, reference %v", i, j, w, x)
			}
			if have == want[[2]int{i, j}] {
				continue
			}
			nearTie := math.Abs(x-kth[i]) <= bw || math.Abs(x-kth[j]) <= bw
			if ref.M == fc.Kendall || !nearTie {
				t.Fatalf("kNN K=%d pair (%d,%d) value %v: in network = %v, reference %v (K-th values %v, %v)", k, i, j, x, have, !have, kth[i], kth[j])
			}
		}
	}
}

// components is an independent BFS count of isolated nodes and the largest component.
func components(n int, es map[[2]int]float32) (isolated, largest int) {
	adj := make([][]int, n)
	for e := range es {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	seen := make([]bool, n)
	for s := 0; s < n; s++ {
		if len(adj[s]) == 0 {
			isolated++
		}
		if seen[s] {
			continue
		}
		seen[s] = true
		q, size := []int{s}, 0
		for len(q) > 0 {
			v := q[0]
			q = q[1:]
			size++
			for _, u := range adj[v] {
				if !seen[u] {
					seen[u] = true
					q = append(q, u)
				}
			}
		}
		largest = max(largest, size)
	}
	return isolated, largest
}
