package graph

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/hubscope/hubscope/helper/graph/graphtest"
)

// More in-Go oracles for the nodal measures of the bundle's maps: eigenvector centrality
// against gonum's dense symmetric eigendecomposition (an independent algorithm: Householder
// tridiagonalisation and QL, not power iteration), and strength and weighted clustering
// against hand-checked values and their definitions summed over a dense matrix.

// weightedKarate is the karate club with weights drawn in (0.1, 1], 1 on the edge (0, 1) so
// that the largest weight (which normalises Onnela's clustering) is known.
func weightedKarate(t *testing.T) (*Graph, [][]float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	w := make([]float32, len(graphtest.Karate))
	dense := make([][]float64, graphtest.KarateNodes)
	for i := range dense {
		dense[i] = make([]float64, graphtest.KarateNodes)
	}
	for e, ij := range graphtest.Karate {
		w[e] = float32(0.1 + 0.9*rng.Float64())
		if ij == [2]int32{0, 1} {
			w[e] = 1
		}
		dense[ij[0]][ij[1]], dense[ij[1]][ij[0]] = float64(w[e]), float64(w[e])
	}
	g, err := FromEdges(graphtest.KarateNodes, graphtest.Karate, w)
	if err != nil {
		t.Fatal(err)
	}
	return g, dense
}

func TestEigenvectorCentralityAgainstDenseEigen(t *testing.T) {
	g := karate(t)
	n := g.N
	a := mat.NewSymDense(n, nil)
	for _, e := range graphtest.Karate {
		a.SetSym(int(e[0]), int(e[1]), 1)
	}
	var es mat.EigenSym
	if !es.Factorize(a, true) {
		t.Fatal("gonum: eigendecomposition failed")
	}
	vals := es.Values(nil) // ascending
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	want := make([]float64, n)
	top := 0.0
	for i := range want {
		want[i] = math.Abs(vecs.At(i, n-1)) // the Perron vector has one sign
		top = max(top, want[i])
	}
	x, lambda, err := EigenvectorCentrality(context.Background(), g, EigenvectorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !near(lambda, vals[n-1], 1e-9) {
		t.Errorf("λ = %.12g, gonum's largest eigenvalue %.12g", lambda, vals[n-1])
	}
	for i := range want {
		if !near(x[i], want[i]/top, 1e-7) {
			t.Errorf("node %d: eigenvector centrality %.10g, gonum %.10g", i, x[i], want[i]/top)
		}
	}
	// A star K_{1,3} by hand: λ = √3, the centre 1 and each leaf 1/√3.
	star, err := FromEdges(4, [][2]int32{{0, 1}, {0, 2}, {0, 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, lambda, err = EigenvectorCentrality(context.Background(), star, EigenvectorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !near(lambda, math.Sqrt(3), 1e-9) || !near(x[0], 1, 1e-9) || !near(x[1], 1/math.Sqrt(3), 1e-7) || !near(x[3], 1/math.Sqrt(3), 1e-7) {
		t.Errorf("star: λ = %g, x = %v; want √3 and (1, 1/√3, 1/√3, 1/√3)", lambda, x)
	}
}

func TestStrengthsAndWeightedClustering(t *testing.T) {
	// By hand: a triangle 0–1–2 with weights 1, 0.5 (0–2) and 0.25 (1–2), and a pendant 3 on 0
	// with 0.8. Strengths 2.3, 1.25, 0.75, 0.8. The triangle's normalised product is
	// 1·0.5·0.25 = 1/8, cube root 1/2: C̃ = 2/(k(k−1))·1/2 gives 1/2 for nodes 1 and 2 (k = 2),
	// 1/6 for node 0 (k = 3), 0 for the pendant.
	g, err := FromEdges(4, [][2]int32{{0, 1}, {0, 2}, {1, 2}, {0, 3}}, []float32{1, 0.5, 0.25, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	s := Strengths(g)
	for i, want := range []float64{2.3, 1.25, 0.75, 0.8} {
		if !near(s[i], want, 1e-6) {
			t.Errorf("strength of node %d = %g, want %g", i, s[i], want)
		}
	}
	wc, err := WeightedClusteringCoefficients(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{1.0 / 6, 0.5, 0.5, 0} {
		if !near(wc[i], want, 1e-7) {
			t.Errorf("weighted clustering of node %d = %g, want %g", i, wc[i], want)
		}
	}

	// The definitions summed over the dense weighted karate club.
	g, w := weightedKarate(t)
	n := g.N
	s = Strengths(g)
	wc, err = WeightedClusteringCoefficients(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		var si float64
		k := 0
		var tri float64
		for j := 0; j < n; j++ {
			if w[i][j] == 0 {
				continue
			}
			si += w[i][j]
			k++
			for h := j + 1; h < n; h++ {
				if w[i][h] != 0 && w[j][h] != 0 {
					tri += math.Cbrt(w[i][j] * w[i][h] * w[j][h]) // max weight is 1
				}
			}
		}
		if !near(s[i], si, 1e-5) {
			t.Errorf("node %d: strength %g, Σ_j w_ij %g", i, s[i], si)
		}
		want := 0.0
		if k > 1 {
			want = 2 * tri / float64(k*(k-1))
		}
		if !near(wc[i], want, 1e-6) {
			t.Errorf("node %d: weighted clustering %g, Onnela's definition %g", i, wc[i], want)
		}
	}
}

// TestDegreeAndHubRuleOnKarate: degrees counted from the edge list (Mr. Hi 16, the officer 17),
// degree z with the population SD, and the hub rule degree > mean + 1 SD (mean 156/34 ≈ 4.59,
// SD ≈ 3.82), which picks members 1, 2, 3, 33 and 34 (nodes 0, 1, 2, 32, 33).
func TestDegreeAndHubRuleOnKarate(t *testing.T) {
	g := karate(t)
	want := make([]int, g.N)
	for _, e := range graphtest.Karate {
		want[e[0]]++
		want[e[1]]++
	}
	deg := Degrees(g)
	var sum, sq float64
	for i := range want {
		if deg[i] != want[i] {
			t.Errorf("node %d: degree %d, %d edges in the list", i, deg[i], want[i])
		}
		sum += float64(want[i])
	}
	if deg[0] != 16 || deg[33] != 17 {
		t.Errorf("Mr. Hi's degree %d, the officer's %d; want 16 and 17", deg[0], deg[33])
	}
	mean := sum / float64(g.N)
	for _, k := range want {
		sq += (float64(k) - mean) * (float64(k) - mean)
	}
	sd := math.Sqrt(sq / float64(g.N))
	z := DegreeZScores(deg)
	for i, k := range want {
		if !near(z[i], (float64(k)-mean)/sd, 1e-12) {
			t.Errorf("node %d: degree z %g, want %g", i, z[i], (float64(k)-mean)/sd)
		}
	}
	hubs := Hubs(deg)
	if len(hubs) != 5 || hubs[0] != 0 || hubs[1] != 1 || hubs[2] != 2 || hubs[3] != 32 || hubs[4] != 33 {
		t.Errorf("hubs %v, want [0 1 2 32 33]", hubs)
	}
}
