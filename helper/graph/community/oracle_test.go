package community

import (
	"math"
	"math/rand/v2"
	"testing"

	gonumgraph "gonum.org/v1/gonum/graph"
	gonumcommunity "gonum.org/v1/gonum/graph/community"
	"gonum.org/v1/gonum/graph/simple"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/graph/graphtest"
)

// TestKarateClubModularity checks Q against the published values of Zachary's karate club:
// 0.3582 for the two factions as Zachary recorded them, 0.3715 with member 9 in the officer's
// faction (Newman & Girvan 2004), and no partition above the proven optimum 0.4198 (Brandes et
// al. 2008) — which Leiden reaches.
func TestKarateClubModularity(t *testing.T) {
	g, err := graph.FromEdges(graphtest.KarateNodes, graphtest.Karate, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Modularity(g, graphtest.KarateFaction, ModularityOptions{})
	if err != nil || math.Abs(q-graphtest.KarateFactionQ) > 1e-12 {
		t.Fatalf("Q of the factions %.12f (%v), published %.12f", q, err, graphtest.KarateFactionQ)
	}
	moved := append([]int(nil), graphtest.KarateFaction...)
	moved[8] = 1
	if q, _ := Modularity(g, moved, ModularityOptions{}); math.Abs(q-0.37146614069691) > 1e-12 {
		t.Errorf("Q with member 9 moved %.12f, Newman & Girvan's 0.3715", q)
	}
	best := 0.0
	for seed := uint64(1); seed <= 5; seed++ {
		m, err := LeidenModules(t.Context(), g, LeidenOptions{Seed: seed}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Q > graphtest.KarateMaxQ+1e-12 {
			t.Fatalf("Leiden's Q %.12f exceeds the proven optimum %.12f", m.Q, graphtest.KarateMaxQ)
		}
		best = math.Max(best, m.Q)
	}
	if best < graphtest.KarateMaxQ-1e-9 {
		t.Errorf("Leiden's best Q over 5 seeds %.6f, the optimum is %.6f", best, graphtest.KarateMaxQ)
	}
}

// TestModularityAgainstGonum compares Q with gonum's community.Q (an independent formulation
// over the communities' internal edges and degree sums) on random graphs and partitions, at
// resolutions 1 and 0.5.
func TestModularityAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 6; trial++ {
		n := 40 + 20*trial
		ug := simple.NewUndirectedGraph()
		for i := 0; i < n; i++ {
			ug.AddNode(simple.Node(i))
		}
		var edges [][2]int32
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if rng.Float64() < 0.08 {
					edges = append(edges, [2]int32{int32(i), int32(j)})
					ug.SetEdge(simple.Edge{F: simple.Node(i), T: simple.Node(j)})
				}
			}
		}
		g, err := graph.FromEdges(n, edges, nil)
		if err != nil {
			t.Fatal(err)
		}
		k := 2 + trial
		membership := make([]int, n)
		comms := make([][]gonumgraph.Node, k)
		for i := range membership {
			membership[i] = rng.IntN(k)
			comms[membership[i]] = append(comms[membership[i]], simple.Node(i))
		}
		for _, res := range []float64{1, 0.5} {
			q, err := Modularity(g, membership, ModularityOptions{Resolution: res})
			if err != nil {
				t.Fatal(err)
			}
			if want := gonumcommunity.Q(ug, comms, res); math.Abs(q-want) > 1e-12 {
				t.Fatalf("n %d, %d modules, γ %g: Q %.15f, gonum %.15f", n, k, res, q, want)
			}
		}
	}
}
