package graph

import (
	"context"
	"math/rand/v2"
	"testing"
)

// naiveLocalEfficiency is the definition read literally: for each node, the induced subgraph on
// its neighbours, a plain queue BFS from every member, Σ 1/d over the pairs it reaches.
func naiveLocalEfficiency(g *Graph) []float64 {
	out := make([]float64, g.N)
	for i := 0; i < g.N; i++ {
		nb := g.Neighbors(i)
		k := len(nb)
		if k < 2 {
			continue
		}
		in := map[int32]bool{}
		for _, v := range nb {
			in[v] = true
		}
		var s float64
		for _, src := range nb {
			dist := map[int32]int{src: 0}
			queue := []int32{src}
			for len(queue) > 0 {
				v := queue[0]
				queue = queue[1:]
				for _, u := range g.Neighbors(int(v)) {
					if _, seen := dist[u]; in[u] && !seen {
						dist[u] = dist[v] + 1
						s += 1 / float64(dist[u])
						queue = append(queue, u)
					}
				}
			}
		}
		out[i] = s / (float64(k) * float64(k-1))
	}
	return out
}

// clusteredGraph has neighbourhoods of every kind the local-efficiency code distinguishes:
// cliques, paths and rings (long distances), several components per neighbourhood, hubs whose
// neighbourhood spans more than 64 nodes (several MS-BFS sweeps and bit-matrix words), and
// isolated nodes.
func clusteredGraph(t testing.TB, n int, seed uint64) *Graph {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	set := map[[2]int32]bool{}
	add := func(a, b int) {
		if a == b {
			return
		}
		if a > b {
			a, b = b, a
		}
		set[[2]int32{int32(a), int32(b)}] = true
	}
	// Modules of 12 nodes: a ring plus random chords inside the module.
	for m := 0; m+12 <= n-20; m += 12 {
		for j := 0; j < 12; j++ {
			add(m+j, m+(j+1)%12)
			if rng.Float64() < 0.3 {
				add(m+j, m+rng.IntN(12))
			}
		}
		if m == 0 { // one clique
			for a := 0; a < 12; a++ {
				for b := a + 1; b < 12; b++ {
					add(a, b)
				}
			}
		}
	}
	// Hubs tied to many modules.
	for h := n - 20; h < n-5; h++ {
		for e := 0; e < 40+rng.IntN(120); e++ {
			add(h, rng.IntN(n-20))
		}
	}
	// A long path through the hubs' neighbourhoods, a few random long-range edges.
	for j := 0; j+1 < n-20; j += 7 {
		if rng.Float64() < 0.5 {
			add(j, j+1+rng.IntN(30)%(n-21-j))
		}
	}
	var edges [][2]int32
	for e := range set {
		edges = append(edges, e)
	}
	g, err := FromEdges(n, edges, nil) // nodes n−5 … n−1 stay isolated
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestLocalEfficiencyAgainstDefinition(t *testing.T) {
	ctx := context.Background()
	defer func(w int) { maxLocalBitWords = w }(maxLocalBitWords)
	for _, c := range []struct {
		name string
		g    *Graph
	}{
		{"clustered", clusteredGraph(t, 400, 1)},
		{"G(300, 0.05)", randomGraph(t, 300, 0.05, 3, 5)},
		{"G(150, 0.4)", randomGraph(t, 150, 0.4, 0, 6)},
	} {
		want := naiveLocalEfficiency(c.g)
		for _, bitWords := range []int{1 << 20, 40} { // bit matrices; lists above ~5 members
			maxLocalBitWords = bitWords
			got, err := LocalEfficiencies(ctx, c.g, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !near(got[i], want[i], 1e-14) {
					t.Fatalf("%s (bit matrix up to %d words): node %d (degree %d) local efficiency %.17g, definition %.17g",
						c.name, bitWords, i, c.g.Degree(i), got[i], want[i])
				}
			}
		}
	}
}
