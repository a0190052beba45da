package graph

import (
	"context"
	"math/bits"

	"github.com/hubscope/hubscope/helper/progress"
)

// pair128 is one node's bit set over the ≤ 128 sources of a wide MS-BFS batch.
type pair128 = [2]uint64

// msbfs128 is msbfs with 128 sources per sweep: seen, visit and next hold two words per node,
// side by side in one cache line. A bottom-up step reads a neighbour's row once for 128
// searches instead of twice for two batches of 64 and stops once both words are complete; on
// the C5 network, where bottom-up steps are nine tenths of the exact search, this cuts the
// rows read (docs/algorithms.md, "Network measures", Paths).
type msbfs128 struct {
	seen, visit, next        []pair128
	frontier, grown, touched []int32
	hist                     []int64 // ordered pairs per distance, accumulated over all sweeps
	direction                int     // directionAuto, or one step kind forced (tests)
	sources                  []int32 // the current batch's sources (scratch)
	// perSource, when set, receives each source's own sums over the targets it reaches
	// (indexed by the source's position in its batch), as msbfs's: the sampled estimator's.
	perSource *[128]sourceSums
}

func newMSBFS128(n int) *msbfs128 {
	return &msbfs128{
		seen: make([]pair128, n), visit: make([]pair128, n), next: make([]pair128, n),
		frontier: make([]int32, 0, n), grown: make([]int32, 0, n), touched: make([]int32, 0, n),
	}
}

// sweep runs the breadth-first searches from sources lo..hi−1 (at most 128) together and adds
// the number of (source, target) pairs found at each distance to b.hist. The direction rule
// is msbfs's.
func (b *msbfs128) sweep(off []int64, adj []int32, lo, hi int) {
	src := b.sources[:0]
	for s := lo; s < hi; s++ {
		src = append(src, int32(s))
	}
	b.sources = src
	b.sweepFrom(off, adj, src)
}

// sweepFrom runs the breadth-first searches from the given distinct sources (at most 128)
// together, as sweep does.
func (b *msbfs128) sweepFrom(off []int64, adj []int32, sources []int32) {
	seen, visit, next := b.seen, b.visit, b.next
	count := len(sources)
	var all pair128 // one bit per source of this batch
	all[0] = ^uint64(0) >> uint(64-min(count, 64))
	if count > 64 {
		all[1] = ^uint64(0) >> uint(128-count)
	}
	frontier := b.frontier[:0]
	for k, s := range sources {
		seen[s][k>>6] |= 1 << uint(k&63)
		visit[s][k>>6] |= 1 << uint(k&63)
		frontier = append(frontier, int32(s))
	}
	touched := append(b.touched[:0], frontier...)
	n := len(off) - 1
	per := b.perSource
	frontierEdges := int64(0)
	for _, v := range frontier {
		frontierEdges += off[v+1] - off[v]
	}
	for d := 1; len(frontier) > 0; d++ {
		grown := b.grown[:0]
		if b.direction == bottomUpOnly || (b.direction == directionAuto && frontierEdges*bottomUpRatio > off[n]) {
			for u := 0; u < n; u++ {
				su := seen[u]
				if su == all {
					continue
				}
				var a0, a1 uint64
				for _, v := range adj[off[u]:off[u+1]] {
					vv := &visit[v]
					a0 |= vv[0]
					a1 |= vv[1]
					if a0|su[0] == all[0] && a1|su[1] == all[1] {
						break
					}
				}
				if n0, n1 := a0&^su[0], a1&^su[1]; n0|n1 != 0 {
					next[u] = pair128{n0, n1}
					grown = append(grown, int32(u))
				}
			}
		} else {
			for _, v := range frontier {
				reach := visit[v]
				for _, u := range adj[off[v]:off[v+1]] {
					su := &seen[u]
					if n0, n1 := reach[0]&^su[0], reach[1]&^su[1]; n0|n1 != 0 {
						nu := &next[u]
						if nu[0]|nu[1] == 0 {
							grown = append(grown, u)
						}
						nu[0] |= n0
						nu[1] |= n1
					}
				}
			}
		}
		frontierEdges = 0
		var found int64
		for _, v := range frontier {
			visit[v] = pair128{}
		}
		for _, u := range grown {
			nw := next[u]
			next[u] = pair128{}
			if seen[u] == (pair128{}) {
				touched = append(touched, u)
			}
			seen[u][0] |= nw[0]
			seen[u][1] |= nw[1]
			visit[u] = nw
			found += int64(bits.OnesCount64(nw[0]) + bits.OnesCount64(nw[1]))
			frontierEdges += off[u+1] - off[u]
			if per != nil {
				for w, x := range nw {
					for ; x != 0; x &= x - 1 {
						p := &per[64*w+bits.TrailingZeros64(x)]
						p.reached++
						p.dist += int64(d)
						p.inv += 1 / float64(d)
					}
				}
			}
		}
		if found > 0 {
			for len(b.hist) <= d {
				b.hist = append(b.hist, 0)
			}
			b.hist[d] += found
		}
		b.grown = frontier
		frontier = grown
	}
	for _, v := range frontier {
		visit[v] = pair128{}
	}
	for _, v := range touched {
		seen[v] = pair128{}
	}
	b.frontier = frontier[:0]
	b.touched = touched[:0]
}

// distanceHistogram128 is distanceHistogram with 128 sources per sweep.
func distanceHistogram128(ctx context.Context, off []int64, adj []int32, n, workers int, rep progress.Reporter) ([]int64, error) {
	return sweepHistogram(ctx, off, adj, n, workers, 128, func() sweeper { return newMSBFS128(n) }, rep)
}

func (b *msbfs128) histogram() []int64 { return b.hist }
