package graph

import (
	"context"
	"math/rand/v2"
	"testing"
)

// naiveLocalEfficiency is the definition read literally: for each node, the induced subgraph on
// its neighbours, a plain queue BFS from every member, the ordered pairs counted per distance
// and Σ_d count_d / d over them, summed in increasing d as LocalEfficiencies does, so that the
// two agree to the last bit whenever the counts agree.
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
		var hist []int64
		for _, src := range nb {
			dist := map[int32]int{src: 0}
			queue := []int32{src}
			for len(queue) > 0 {
				v := queue[0]
				queue = queue[1:]
				for _, u := range g.Neighbors(int(v)) {
					if _, seen := dist[u]; in[u] && !seen {
						d := dist[v] + 1
						dist[u] = d
						for len(hist) <= d {
							hist = append(hist, 0)
						}
						hist[d]++
						queue = append(queue, u)
					}
				}
			}
		}
		var s float64
		for d := 1; d < len(hist); d++ {
			s += float64(hist[d]) / float64(d)
		}
		out[i] = s / (float64(k) * float64(k-1))
	}
	return out
}

// wheelsGraph has neighbourhoods where most pairs lie at distance ≥ 3 or in different parts:
// hub 0 over a path of 150 nodes (distances up to 149, three bit-matrix words); hub 1 over
// three disjoint rings (5, 40 and 70 nodes), a 12-clique, a pair and 10 leaves of its own;
// hub 2 over both hubs' members at once; and isolated nodes.
func wheelsGraph(t testing.TB) *Graph {
	t.Helper()
	var edges [][2]int32
	add := func(a, b int) { edges = append(edges, [2]int32{int32(a), int32(b)}) }
	next := 3
	take := func(m int) int { next += m; return next - m }
	p := take(150)
	for j := 0; j < 150; j++ {
		add(0, p+j)
		add(2, p+j)
		if j > 0 {
			add(p+j-1, p+j)
		}
	}
	for _, m := range []int{5, 40, 70} {
		r := take(m)
		for j := 0; j < m; j++ {
			add(1, r+j)
			add(2, r+j)
			add(r+j, r+(j+1)%m)
		}
	}
	c := take(12)
	for a := 0; a < 12; a++ {
		add(1, c+a)
		for b := a + 1; b < 12; b++ {
			add(c+a, c+b)
		}
	}
	pair := take(2)
	add(1, pair)
	add(1, pair+1)
	add(pair, pair+1)
	for l := take(10); l < next; l++ {
		add(1, l)
	}
	g, err := FromEdges(next+4, edges, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
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
	defer func(w, d, tw int) { maxLocalBitWords, searchLocalDegree, transposeLocalWords = w, d, tw }(maxLocalBitWords, searchLocalDegree, transposeLocalWords)
	for _, c := range []struct {
		name string
		g    *Graph
	}{
		{"clustered", clusteredGraph(t, 400, 1)},
		{"G(300, 0.05)", randomGraph(t, 300, 0.05, 3, 5)},
		{"G(150, 0.4)", randomGraph(t, 150, 0.4, 0, 6)},
		{"wheels", wheelsGraph(t)},
	} {
		want := naiveLocalEfficiency(c.g)
		for _, bitWords := range []int{1 << 20, 40} { // bit matrices; lists above ~5 members
			maxLocalBitWords = bitWords
			// Row searches in every component, MS-BFS in every one, and the default split;
			// each with the matrices built by block transposes and by writing both bits.
			for run, dense := range []int{0, 1 << 30, searchLocalDegree} {
				searchLocalDegree = dense
				transposeLocalWords = []int{0, 1 << 30, 1024}[run]
				got, err := LocalEfficiencies(ctx, c.g, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s (bit matrix up to %d words, row search from mean degree %d, transposes from %d words): node %d (degree %d) local efficiency %.17g, definition %.17g",
							c.name, bitWords, dense, transposeLocalWords, i, c.g.Degree(i), got[i], want[i])
					}
				}
			}
		}
	}
}

func TestTranspose64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var a [64]uint64
	for i := range a {
		a[i] = r.Uint64()
	}
	b := a
	transpose64(&b)
	for i := 0; i < 64; i++ {
		for j := 0; j < 64; j++ {
			if (a[i]>>uint(j))&1 != (b[j]>>uint(i))&1 {
				t.Fatalf("bit (%d, %d) = %d, transposed (%d, %d) = %d", i, j, (a[i]>>uint(j))&1, j, i, (b[j]>>uint(i))&1)
			}
		}
	}
}
