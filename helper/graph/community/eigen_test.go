package community

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// bipartitePlanted links two random bipartite graphs (each half a ∪ b) by a few edges that keep
// the whole graph bipartite. Its adjacency spectrum is symmetric, so after B removes the top
// eigenvalue the most negative eigenvalue of B dominates the most positive one: power
// iteration must take the shift.
func bipartitePlanted(seed uint64) (int, []edge) {
	r := rand.New(rand.NewPCG(seed, 1))
	const half = 60 // nodes per module; even ids on one side, odd on the other
	var edges []edge
	for m := 0; m < 2; m++ {
		base := m * half
		for i := 0; i < half; i += 2 {
			for j := 1; j < half; j += 2 {
				if r.Float64() < 0.3 {
					a, b := int32(base+i), int32(base+j)
					edges = append(edges, edge{min(a, b), max(a, b), 1})
				}
			}
		}
	}
	for k := 0; k < 4; k++ {
		i := 2 * r.IntN(half/2)          // even, module 0
		j := half + 1 + 2*r.IntN(half/2) // odd, module 1
		edges = append(edges, edge{int32(i), int32(j), 1})
	}
	return 2 * half, dedupe(edges)
}

func dedupe(edges []edge) []edge {
	seen := map[[2]int32]bool{}
	var out []edge
	for _, e := range edges {
		k := [2]int32{e.i, e.j}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// The leading eigenpair of B^(G) from both solvers equals numpy.linalg.eigh of the dense
// B^(G) built in Python (eigenvalue to 1e-9 relative, eigenvector up to sign to 1e-6), for the
// whole graph and for sub-groups, on a planted-partition graph and on a bipartite one whose
// dominant eigenvalue is negative.
func TestLeadingEigenpairMatchesNumpy(t *testing.T) {
	pyref.Require(t, "numpy")
	type groupCase struct {
		name    string
		n       int
		edges   []edge
		members []int32
	}
	n1, e1, _ := plantedPartition([]int{80, 60, 40}, 0.2, 0.03, 21)
	n2, e2 := bipartitePlanted(3)
	all := func(n int) []int32 {
		m := make([]int32, n)
		for i := range m {
			m[i] = int32(i)
		}
		return m
	}
	sub := func(n int, keep func(i int) bool) []int32 {
		var m []int32
		for i := 0; i < n; i++ {
			if keep(i) {
				m = append(m, int32(i))
			}
		}
		return m
	}
	cases := []groupCase{
		{"planted, whole graph", n1, e1, all(n1)},
		{"planted, sub-group", n1, e1, sub(n1, func(i int) bool { return i%3 != 0 })},
		{"bipartite, whole graph", n2, e2, all(n2)},
		{"bipartite, sub-group", n2, e2, sub(n2, func(i int) bool { return i < 90 })},
	}
	dir := t.TempDir()
	for _, c := range cases {
		g := fromEdges(c.n, c.edges)
		edgesPath := writeEdges(t, dir, c.n, c.edges)
		groupPath := writeJSON(t, dir, "group.json", c.members)
		out := pyref.Run(t, `
import sys, json, numpy as np
with open(sys.argv[1]) as f:
    n = int(f.readline()); rows = [l.split() for l in f if l.strip()]
A = np.zeros((n, n))
for r in rows:
    A[int(r[0]), int(r[1])] = A[int(r[1]), int(r[0])] = 1.0
G = np.array(json.load(open(sys.argv[2])))
k = A.sum(1); B = A - np.outer(k, k) / k.sum()
BG = B[np.ix_(G, G)] - np.diag(B[np.ix_(G, G)].sum(1))   # Newman 2006 eq. 6
w, V = np.linalg.eigh(BG)
print(json.dumps({"top": w[-1], "second": w[-2], "bottom": w[0], "vec": V[:, -1].tolist()}))
`, edgesPath, groupPath)
		var ref struct {
			Top, Second, Bottom float64
			Vec                 []float64
		}
		if err := json.Unmarshal(out, &ref); err != nil {
			t.Fatal(err)
		}
		k, twoM := nodeDegrees(g, false)
		op := &groupModularityMatrix{g: g, k: k, twoM: twoM, local: make([]int32, g.N)}
		for i := range op.local {
			op.local[i] = -1
		}
		op.bind(c.members)
		for _, solver := range []EigenSolver{Lanczos, PowerIteration} {
			solve := leadingEigenpairLanczos
			if solver == PowerIteration {
				solve = leadingEigenpairPower
			}
			res, err := solve(context.Background(), op, eigenOptions{tol: 1e-12, maxApply: 200000, seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, %v: β = %.12f (numpy %.12f; next %.4f, bottom %.4f), %d products",
				c.name, solver, res.value, ref.Top, ref.Second, ref.Bottom, res.products)
			if !res.converged || math.Abs(res.value-ref.Top) > 1e-9*math.Max(1, math.Abs(ref.Top)) {
				t.Errorf("%s, %v: β = %.12f (converged %v), numpy %.12f", c.name, solver, res.value, res.converged, ref.Top)
			}
			if overlap := math.Abs(dot(res.vector, ref.Vec)); math.Abs(overlap-1) > 1e-6 {
				t.Errorf("%s, %v: |⟨x, x_numpy⟩| = %.9f, want 1", c.name, solver, overlap)
			}
		}
		if c.name == "bipartite, whole graph" && -ref.Bottom <= ref.Top {
			t.Fatalf("bipartite case does not exercise the shift: bottom %v, top %v", ref.Bottom, ref.Top)
		}
		op.unbind()
	}
}

// Every product with B^(G) equals the dense product, including the parallel path.
func TestGroupModularityMatrixProduct(t *testing.T) {
	n, edges, _ := plantedPartition([]int{3000, 3000}, 0.004, 0.001, 9)
	g := fromEdges(n, edges)
	for _, weighted := range []bool{false, true} {
		k, twoM := nodeDegrees(g, weighted)
		op := &groupModularityMatrix{g: g, weighted: weighted, k: k, twoM: twoM, local: make([]int32, n)}
		for i := range op.local {
			op.local[i] = -1
		}
		var members []int32
		for i := 0; i < n; i++ {
			if i%5 != 1 {
				members = append(members, int32(i))
			}
		}
		if len(members) < parallelApplyMin {
			t.Fatal("group too small to exercise the parallel product")
		}
		op.bind(members)
		x := startVector(len(members), 1)
		y := make([]float64, len(members))
		op.apply(y, x)
		// Reference: B^(G)_ij = A_ij − k_i k_j/2m − δ_ij Σ_l B_il, row by row from the adjacency.
		in := make(map[int32]int)
		for li, v := range members {
			in[v] = li
		}
		var kx, kG float64
		for li, v := range members {
			kx += k[v] * x[li]
			kG += k[v]
		}
		for li, v := range members {
			var ax, rowA float64
			for p := g.Offsets[v]; p < g.Offsets[v+1]; p++ {
				if lu, ok := in[g.Adj[p]]; ok {
					w := edgeWeight(g, p, weighted)
					ax += w * x[lu]
					rowA += w
				}
			}
			want := ax - k[v]*kx/twoM - (rowA-k[v]*kG/twoM)*x[li]
			if math.Abs(y[li]-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("weighted=%v row %d: %v, want %v", weighted, li, y[li], want)
			}
		}
		op.unbind()
	}
}

// denseOp is a symmetric matrix applied densely.
type denseOp struct {
	n int
	a []float64
}

func (d *denseOp) dim() int { return d.n }
func (d *denseOp) apply(y, x []float64) {
	for i := 0; i < d.n; i++ {
		var s float64
		for j := 0; j < d.n; j++ {
			s += d.a[i*d.n+j] * x[j]
		}
		y[i] = s
	}
}

// Lanczos converges within a few cycles on groups of ≤ 40 nodes (the basis spans the whole
// space at capacity) and on low-rank operators (every step meets an invariant subspace) —
// both used to restart until the 50,000-product cap with "relative residual 0" — and its
// eigenvalue is the largest of the matrix.
func TestLanczosSmallAndLowRankConverge(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	for _, c := range []struct{ n, rank int }{{3, 3}, {12, 12}, {40, 40}, {39, 2}, {200, 3}, {500, 1}, {300, 6}} {
		op := &denseOp{n: c.n, a: make([]float64, c.n*c.n)}
		// A = Σ_k s_k u_k u_kᵀ with random u_k and signs, so that the spectrum has both signs.
		vals := make([]float64, c.rank)
		for k := 0; k < c.rank; k++ {
			u := make([]float64, c.n)
			for i := range u {
				u[i] = r.NormFloat64()
			}
			s := float64(k+1) * (1 - 2*float64(k%2))
			vals[k] = s
			for i := 0; i < c.n; i++ {
				for j := 0; j < c.n; j++ {
					op.a[i*c.n+j] += s * u[i] * u[j]
				}
			}
		}
		res, err := leadingEigenpairLanczos(context.Background(), op, eigenOptions{tol: 1e-10, maxApply: 50000, seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		if !res.converged || res.products > 10*c.n+200 {
			t.Errorf("n = %d, rank %d: converged %v after %d products", c.n, c.rank, res.converged, res.products)
			continue
		}
		// The eigenvalue: x is a unit eigenvector (‖Ax − λx‖ small) and no Rayleigh quotient
		// of a random vector exceeds λ.
		y := make([]float64, c.n)
		op.apply(y, res.vector)
		var r2, norm float64
		for i := range y {
			r2 += (y[i] - res.value*res.vector[i]) * (y[i] - res.value*res.vector[i])
			norm += op.a[i*c.n+i] * op.a[i*c.n+i]
		}
		if math.Sqrt(r2) > 1e-8*math.Max(1, math.Abs(res.value))*float64(c.n) {
			t.Errorf("n = %d, rank %d: residual %g for λ = %g", c.n, c.rank, math.Sqrt(r2), res.value)
		}
		for trial := 0; trial < 20; trial++ {
			x := startVector(c.n, uint64(100+trial))
			op.apply(y, x)
			if q := dot(x, y); q > res.value+1e-8*math.Abs(res.value) {
				t.Errorf("n = %d, rank %d: Rayleigh quotient %g above the leading eigenvalue %g", c.n, c.rank, q, res.value)
			}
		}
	}
}

type noteRecorder struct{ notes []string }

func (r *noteRecorder) Start(string, int64) {}
func (r *noteRecorder) Add(int64)           {}
func (r *noteRecorder) Note(msg string)     { r.notes = append(r.notes, msg) }

// A solve that hits its product cap is reported once for the whole division, in words (not one
// line per group), and a division whose solves converge says nothing.
func TestLeadingEigenvectorNotesOnce(t *testing.T) {
	n, edges, _ := plantedPartition([]int{60, 60, 60, 60}, 0.3, 0.02, 3)
	g := fromEdges(n, edges)
	rec := &noteRecorder{}
	if _, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{Solver: PowerIteration, MaxProducts: 3, Seed: 1}, rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.notes) != 1 || !strings.Contains(rec.notes[0], "uncertain") {
		t.Fatalf("notes with a 3-product cap: %q", rec.notes)
	}
	rec = &noteRecorder{}
	if _, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{Seed: 1}, rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.notes) != 0 {
		t.Fatalf("notes with the default cap: %q", rec.notes)
	}
}
