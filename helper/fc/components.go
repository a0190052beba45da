package fc

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hubscope/hubscope/helper/network"
)

// Components returns the number of isolated nodes (no edge) and the size of the largest
// connected component of the network, for the threshold report (docs/algorithms.md, "Thresholds").
//
// One concurrent union–find (Anderson & Woll 1991, simplified): a root is linked only to a
// smaller-indexed root, with a compare-and-swap that fails if the root was linked meanwhile,
// so no cycle can form and the result is the same forest's components as a sequential pass;
// find halves paths with compare-and-swaps that may lose races harmlessly. Rows are shared
// among workers in ranges of about equal edge counts. As in Afforest (Sutton, Ben-Nun & Barak
// 2018), a first round links each node to its first two partners only, which in a
// thresholded network already gathers most nodes into one giant component; its members are
// marked in a bitmap (N bits, cache-resident), and the full round then skips every edge whose
// two ends are both marked (they are connected already) with one bit test instead of finds.
// A node is isolated when its component is itself alone and its row is empty (a self-loop,
// never written by Build, still counts as an edge). Memory O(N); the edges are only read.
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
	// link merges i's component with its partners cols; ri is i's root, refreshed after each
	// merge. parent[j] == ri (a node whose path is already halved to the root) needs no find.
	link := func(i int, cols []uint32) {
		ri := find(int32(i))
		for _, j := range cols {
			if atomic.LoadInt32(&parent[j]) == ri {
				continue
			}
			if rj := find(int32(j)); rj != ri {
				ri = union(ri, rj)
			}
		}
	}

	edges := nw.Edges()
	workers := runtime.GOMAXPROCS(0)
	if edges < 1<<16 {
		workers = 1
	}
	// row ranges with about equal edge counts (rows [cut[w], cut[w+1]) for worker w)
	cut := make([]int, 0, workers+1)
	cut = append(cut, 0)
	for w, lo := 0, 0; w < workers && lo < n; w++ {
		target := uint64(edges) * uint64(w+1) / uint64(workers)
		hi := lo
		for hi < n && (nw.Indptr[hi+1] <= target || w == workers-1) {
			hi++
		}
		hi = max(hi, lo+1)
		cut = append(cut, hi)
		lo = hi
	}
	parallel := func(f func(lo, hi int)) {
		var wg sync.WaitGroup
		for w := 0; w+1 < len(cut); w++ {
			wg.Add(1)
			go func(lo, hi int) {
				defer wg.Done()
				f(lo, hi)
			}(cut[w], cut[w+1])
		}
		wg.Wait()
	}

	// Round 1: each row's first two partners.
	parallel(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a, b := nw.Indptr[i], nw.Indptr[i+1]
			link(i, nw.Indices[a:min(b, a+2)])
		}
	})
	// The giant component: the most frequent root among a strided sample of nodes.
	freq := map[int32]int{}
	var big int32 = -1
	for i, step := 0, max(1, n/1024); i < n; i += step {
		r := find(int32(i))
		freq[r]++
		if big < 0 || freq[r] > freq[big] {
			big = r
		}
	}
	inBig := make([]uint64, (n+63)/64) // written in round 1's aftermath only, read-only below
	parallelRange(n, workers, func(lo, hi int) {
		// 64-node words so that no two workers write the same word
		for w := lo / 64; w < (hi+63)/64; w++ {
			var bitsW uint64
			for i := w * 64; i < min(w*64+64, n); i++ {
				if find(int32(i)) == big {
					bitsW |= 1 << (i % 64)
				}
			}
			inBig[w] = bitsW
		}
	})
	marked := func(j uint32) bool { return inBig[j/64]>>(j%64)&1 != 0 }

	// Round 2: every edge, those inside the marked giant component skipped.
	parallel(func(lo, hi int) {
		for i := lo; i < hi; i++ {
			cols := nw.Indices[nw.Indptr[i]:nw.Indptr[i+1]]
			if len(cols) <= 2 {
				continue // linked in round 1
			}
			cols = cols[2:]
			if !marked(uint32(i)) {
				link(i, cols)
				continue
			}
			ri := int32(-1)
			for len(cols) > 0 {
				g := cols[:min(8, len(cols))]
				cols = cols[len(g):]
				if len(g) == 8 && allMarked8(inBig, g) {
					continue // the common case, one branch per 8 edges
				}
				for _, j := range g {
					if marked(j) {
						continue
					}
					if ri < 0 {
						ri = find(int32(i))
					}
					if rj := find(int32(j)); rj != ri {
						ri = union(ri, rj)
					}
				}
			}
		}
	})

	// No union is left: point every node at its root (in parallel; finds only read roots),
	// then count.
	parallelRange(n, workers, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			atomic.StoreInt32(&parent[i], find(int32(i)))
		}
	})
	size := make([]int32, n)
	for _, r := range parent {
		size[r]++
	}
	for i, r := range parent {
		largest = max(largest, int(size[r]))
		if size[r] == 1 && nw.Indptr[i+1] == nw.Indptr[i] {
			isolated++
		}
	}
	return isolated, largest
}

// parallelRange calls f on about equal shares [lo, hi) of [0, n) on up to workers goroutines,
// the shares' ends rounded to multiples of 64.
func parallelRange(n, workers int, f func(lo, hi int)) {
	step := (n/max(workers, 1) + 63) &^ 63
	step = max(step, 64)
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+step, n))
	}
	wg.Wait()
}

// allMarked8 reports whether all 8 nodes of g have their bit set in bits.
func allMarked8(bits []uint64, g []uint32) bool {
	g = g[:8]
	m := bits[g[0]/64] >> (g[0] % 64)
	m &= bits[g[1]/64] >> (g[1] % 64)
	m &= bits[g[2]/64] >> (g[2] % 64)
	m &= bits[g[3]/64] >> (g[3] % 64)
	m &= bits[g[4]/64] >> (g[4] % 64)
	m &= bits[g[5]/64] >> (g[5] % 64)
	m &= bits[g[6]/64] >> (g[6] % 64)
	m &= bits[g[7]/64] >> (g[7] % 64)
	return m&1 != 0
}
