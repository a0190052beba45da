package fc

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hubscope/hubscope/helper/network"
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

// componentsPrevious is the implementation before the giant-component bitmap (one round of
// the same concurrent union–find over every edge, isolated nodes from per-worker marks),
// kept as a second reference.
func componentsPrevious(nw *network.Network) (isolated, largest int) {
	n := nw.N
	if n == 0 {
		return 0, 0
	}
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(x int32) int32 {
		for {
			p := atomic.LoadInt32(&parent[x])
			if p == x {
				return x
			}
			g := atomic.LoadInt32(&parent[p])
			if g != p {
				atomic.CompareAndSwapInt32(&parent[x], p, g) // path halving
			}
			x = g
		}
	}
	// union merges the components of roots-or-nodes a and b and returns the surviving root.
	union := func(a, b int32) int32 {
		for {
			ra, rb := find(a), find(b)
			if ra == rb {
				return ra
			}
			if ra < rb {
				ra, rb = rb, ra
			}
			if atomic.CompareAndSwapInt32(&parent[ra], ra, rb) {
				return rb
			}
		}
	}

	edges := nw.Edges()
	workers := runtime.GOMAXPROCS(0)
	if edges < 1<<16 {
		workers = 1
	}
	// Split rows so that every worker reads about the same number of edges. Each worker marks
	// the nodes it sees in its own slice (no shared writes); the marks are OR-ed afterwards.
	var wg sync.WaitGroup
	seen := make([][]bool, workers)
	lo := 0
	for w := 0; w < workers && lo < n; w++ {
		target := uint64(edges) * uint64(w+1) / uint64(workers)
		hi := lo
		for hi < n && (nw.Indptr[hi+1] <= target || w == workers-1) {
			hi++
		}
		if hi == lo {
			hi = lo + 1
		}
		wg.Add(1)
		mark := make([]bool, n)
		seen[w] = mark
		go func(lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				cols, _ := nw.Row(i)
				if len(cols) == 0 {
					continue
				}
				mark[i] = true
				ri := find(int32(i)) // one find of i per row; refreshed after each merge
				for _, j := range cols {
					mark[j] = true
					if rj := find(int32(j)); rj != ri {
						ri = union(ri, rj)
					}
				}
			}
		}(lo, hi)
		lo = hi
	}
	wg.Wait()

	size := make([]int32, n)
	for i := range parent {
		has := false
		for _, mark := range seen {
			if mark != nil && mark[i] {
				has = true
				break
			}
		}
		if !has {
			isolated++
		}
		r := find(int32(i))
		size[r]++
		largest = max(largest, int(size[r]))
	}
	return isolated, largest
}

// TestComponentsAgainstPrevious: density-like graphs (a giant component), graphs of several
// large components of similar size (the sampled giant may be any of them), and sparse ones.
func TestComponentsAgainstPrevious(t *testing.T) {
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
				wi, wl := componentsPrevious(nw)
				if gi != wi || gl != wl {
					t.Errorf("GOMAXPROCS %d, n=%d edges=%d: isolated %d largest %d, previous implementation %d, %d", procs, nw.N, nw.Edges(), gi, gl, wi, wl)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
