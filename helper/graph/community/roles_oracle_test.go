package community

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/graph/graphtest"
)

// In-Go oracles of the node roles (Guimerà & Amaral 2005): a hand-checked graph, and both
// definitions summed over the dense karate club split into its factions, unweighted and with
// weights.

func TestRolesHandChecked(t *testing.T) {
	// Module A = {0, 1, 2, 3} with 0–1, 0–2, 0–3, 1–2; module B = {4, 5} with 4–5; the bridge
	// 3–4. Within-module degrees κ: 3, 2, 2, 1 (mean 2, population SD √½) and 1, 1 (SD 0), so
	// z = √2, 0, 0, −√2, 0, 0. The bridge's ends have one link in and one out: P = 1 − ¼ − ¼ = ½.
	g, err := graph.FromEdges(6, [][2]int32{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {4, 5}, {3, 4}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mem := []int{0, 0, 0, 0, 1, 1}
	p, err := ParticipationCoefficient(g, mem, false)
	if err != nil {
		t.Fatal(err)
	}
	z, err := WithinModuleDegreeZScore(g, mem, false)
	if err != nil {
		t.Fatal(err)
	}
	r2 := math.Sqrt2
	for i, want := range [][2]float64{{0, r2}, {0, 0}, {0, 0}, {0.5, -r2}, {0.5, 0}, {0, 0}} {
		if math.Abs(p[i]-want[0]) > 1e-12 || math.Abs(z[i]-want[1]) > 1e-12 {
			t.Errorf("node %d: P = %g, z = %g; want %g, %g", i, p[i], z[i], want[0], want[1])
		}
	}
}

func TestRolesAgainstDefinition(t *testing.T) {
	n := graphtest.KarateNodes
	mem := graphtest.KarateFaction
	for _, weighted := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(9, 1))
		w := make([]float32, len(graphtest.Karate))
		dense := make([][]float64, n)
		for i := range dense {
			dense[i] = make([]float64, n)
		}
		for e, ij := range graphtest.Karate {
			w[e] = 1
			if weighted {
				w[e] = float32(0.1 + 0.9*rng.Float64())
			}
			dense[ij[0]][ij[1]], dense[ij[1]][ij[0]] = float64(w[e]), float64(w[e])
		}
		var ws []float32
		if weighted {
			ws = w
		}
		g, err := graph.FromEdges(n, graphtest.Karate, ws)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParticipationCoefficient(g, mem, weighted)
		if err != nil {
			t.Fatal(err)
		}
		z, err := WithinModuleDegreeZScore(g, mem, weighted)
		if err != nil {
			t.Fatal(err)
		}
		// κ_i: weight of i's links inside its faction; k_is per faction.
		kappa := make([]float64, n)
		for i := 0; i < n; i++ {
			var ki float64
			ks := [2]float64{}
			for j := 0; j < n; j++ {
				ki += dense[i][j]
				ks[mem[j]] += dense[i][j]
			}
			kappa[i] = ks[mem[i]]
			want := 1 - (ks[0]/ki)*(ks[0]/ki) - (ks[1]/ki)*(ks[1]/ki)
			if math.Abs(p[i]-want) > 1e-6 {
				t.Errorf("weighted %v, node %d: P = %g, definition %g", weighted, i, p[i], want)
			}
		}
		for i := 0; i < n; i++ {
			var sum, sq, cnt float64
			for j := 0; j < n; j++ {
				if mem[j] == mem[i] {
					sum += kappa[j]
					cnt++
				}
			}
			mean := sum / cnt
			for j := 0; j < n; j++ {
				if mem[j] == mem[i] {
					sq += (kappa[j] - mean) * (kappa[j] - mean)
				}
			}
			want := (kappa[i] - mean) / math.Sqrt(sq/cnt)
			if math.Abs(z[i]-want) > 1e-5 {
				t.Errorf("weighted %v, node %d: z = %g, definition %g", weighted, i, z[i], want)
			}
		}
	}
}
