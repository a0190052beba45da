package fc

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/network"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
)

// componentsByBFS is an independent reference: breadth-first search over the symmetric
// adjacency built from the CSR.
func componentsByBFS(nw *network.Network) (isolated, largest int) {
	adj := make([][]int, nw.N)
	for i := 0; i < nw.N; i++ {
		cols, _ := nw.Row(i)
		for _, j := range cols {
			adj[i] = append(adj[i], int(j))
			adj[j] = append(adj[j], i)
		}
	}
	seen := make([]bool, nw.N)
	for s := 0; s < nw.N; s++ {
		if len(adj[s]) == 0 {
			isolated++
		}
		if seen[s] {
			continue
		}
		seen[s] = true
		queue, size := []int{s}, 0
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			size++
			for _, u := range adj[v] {
				if !seen[u] {
					seen[u] = true
					queue = append(queue, u)
				}
			}
		}
		largest = max(largest, size)
	}
	return isolated, largest
}

// randomNetwork plants c clusters of random edges (plus isolated nodes), so components are
// many and of different sizes.
func randomNetwork(n, edges, clusters int, seed uint64) *network.Network {
	r := rand.New(rand.NewPCG(seed, 3))
	cluster := func(v int) int { return v % clusters }
	rows := make([][]uint32, n)
	for e := 0; e < edges; e++ {
		i := r.IntN(n)
		j := r.IntN(n)
		if i == j || cluster(i) != cluster(j) || i%97 == 0 || j%97 == 0 {
			continue // nodes ≡ 0 mod 97 stay isolated
		}
		if j < i {
			i, j = j, i
		}
		rows[i] = append(rows[i], uint32(j))
	}
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1)}
	for i, cols := range rows {
		slices.Sort(cols)
		cols = slices.Compact(cols)
		nw.Indices = append(nw.Indices, cols...)
		nw.Indptr[i+1] = uint64(len(nw.Indices))
	}
	nw.Weights = make([]float32, len(nw.Indices))
	return nw
}

func TestComponentsAgainstBFS(t *testing.T) {
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, c := range []struct{ n, edges, clusters int }{
			{1, 0, 1}, {2, 0, 1}, {50, 30, 3}, {3000, 2500, 7}, {20000, 150000, 5}, {20000, 40000, 40},
		} {
			nw := randomNetwork(c.n, c.edges, c.clusters, uint64(c.n+c.edges))
			if err := nw.Validate(); err != nil {
				t.Fatal(err)
			}
			gi, gl := Components(nw)
			wi, wl := componentsByBFS(nw)
			if gi != wi || gl != wl {
				t.Errorf("GOMAXPROCS %d, n=%d edges=%d: isolated %d largest %d, BFS says %d, %d", procs, c.n, nw.Edges(), gi, gl, wi, wl)
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// componentsByGonum is an independent formulation: gonum's topo.ConnectedComponents (a
// depth-first traversal) on the network as a gonum undirected graph.
func componentsByGonum(nw *network.Network) (isolated, largest int) {
	g := simple.NewUndirectedGraph()
	for i := 0; i < nw.N; i++ {
		g.AddNode(simple.Node(i))
	}
	for i := 0; i < nw.N; i++ {
		cols, _ := nw.Row(i)
		for _, j := range cols {
			g.SetEdge(simple.Edge{F: simple.Node(i), T: simple.Node(j)})
		}
	}
	for _, c := range topo.ConnectedComponents(g) {
		largest = max(largest, len(c))
		if len(c) == 1 {
			isolated++
		}
	}
	return isolated, largest
}

// TestComponentsAgainstGonum: density-like graphs (a giant component), graphs of several
// large components of similar size (the sampled giant may be any of them), and sparse ones,
// against gonum's connected components.
func TestComponentsAgainstGonum(t *testing.T) {
	for _, procs := range []int{1, 3, 8} {
		old := runtime.GOMAXPROCS(procs)
		for seed := uint64(1); seed <= 2; seed++ {
			for _, nw := range []*network.Network{
				denseRandomNetwork(20000, 8, seed), // ≥ 2¹⁶ edges: parallel rounds
				denseRandomNetwork(5000, 1, seed),
				denseRandomNetwork(5000, 3, seed),
				randomNetwork(10000, 150000, 2, seed),
				randomNetwork(10000, 100000, 3, seed),
				randomNetwork(10000, 10000, 50, seed),
			} {
				gi, gl := Components(nw)
				wi, wl := componentsByGonum(nw)
				if gi != wi || gl != wl {
					t.Errorf("GOMAXPROCS %d, n=%d edges=%d: isolated %d largest %d, gonum %d, %d", procs, nw.N, nw.Edges(), gi, gl, wi, wl)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
