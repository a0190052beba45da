package fc

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hubscope/hubscope/helper/network"
)

// Components returns the number of isolated nodes (no edge) and the size of the largest
// connected component of the network, for the threshold report (ALGORITHMS.md §3).
//
// Rows are shared among workers that merge components in one concurrent union–find
// (Anderson & Woll 1991, simplified): a root is linked only to a smaller-indexed root, with a
// compare-and-swap that fails if the root was linked meanwhile, so no cycle can form and the
// result is the same forest's components as a sequential pass; find halves paths with
// compare-and-swaps that may lose races harmlessly. Memory O(N); the edges are only read.
func Components(nw *network.Network) (isolated, largest int) {
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
