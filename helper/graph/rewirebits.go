package graph

import (
	"context"
	"errors"
	"math/bits"
	"math/rand/v2"

	"github.com/hubscope/hubscope/helper/progress"
)

// maxBitsetBytes caps the adjacency bit matrix of rewireBits (one bit per node pair, upper
// triangle): 51 MB for the 28,652-node C5 network, 200 MB at 56,696 nodes. Larger graphs use the
// hash set, which takes 8 bytes per edge instead.
const maxBitsetBytes = 256 << 20

// triangleBits is the number of unordered node pairs, one bit each in rewireBits' matrix.
func triangleBits(n int) int64 { return int64(n) * int64(n-1) / 2 }

// rewireBatch is how many attempts rewireBits draws and reads ahead at a time.
const rewireBatch = 64

// rewireBits is Rewire's chain with edge membership in a bit matrix over the upper triangle of
// node pairs instead of a hash set: a membership test, insertion or deletion touches one
// word, where the hash set walks a probe run and shifts entries back on deletion. Same swap
// rule, same random stream and so the same random network as the hash-set chain for a given
// seed; about three times faster on the C5 network (docs/algorithms.md, "Random networks").
// The edge list and the matrix are updated in place; nothing is allocated per swap.
func rewireBits(ctx context.Context, g *Graph, opt RewireOptions, rep progress.Reporter) (*Graph, RewireStats, error) {
	var st RewireStats
	const shift = 16
	const low = uint32(1)<<shift - 1
	n := int64(g.N)
	m := int(g.Edges())
	// bit(u, v), u < v: row u of the upper triangle starts at u·n − u(u+1)/2, column v − u − 1.
	bit := func(u, v int32) int64 {
		a, b := int64(min(u, v)), int64(max(u, v))
		return a*n - a*(a+1)/2 + b - a - 1
	}
	edges, freeEdges := hugeWords[uint32](m)
	defer freeEdges()
	edges = edges[:0]
	for i := 0; i < g.N; i++ {
		for _, j := range g.Neighbors(i) {
			if int(j) > i {
				edges = append(edges, uint32(i)<<shift|uint32(j))
			}
		}
	}
	want := int64(opt.SwapsPerEdge * float64(m))
	maxAttempts := int64(opt.MaxAttemptsPerSwap * float64(want))
	if m < 2 || want == 0 {
		h, err := graphFromKeys(g.N, edges, shift)
		return h, st, err
	}
	rep.Start("Maslov–Sneppen rewiring", want)
	var reported int64
	adj, free := hugeWords[uint64](int((triangleBits(g.N) + 63) / 64))
	defer free()
	for _, e := range edges {
		b := bit(int32(e>>shift), int32(e&low))
		adj[b>>6] |= 1 << (b & 63)
	}
	has := func(u, v int32) bool {
		b := bit(u, v)
		return adj[b>>6]&(1<<(b&63)) != 0
	}
	set := func(u, v int32, on bool) {
		b := bit(u, v)
		if on {
			adj[b>>6] |= 1 << (b & 63)
		} else {
			adj[b>>6] &^= 1 << (b & 63)
		}
	}
	rng := rand.NewPCG(opt.Seed, opt.Stream)
	um := uint64(m)
	// Attempts run in batches. Each batch first draws its edge indices (the hash-set chain's
	// order: the high word of one Uint64 for i1, the high word and low bit of the next for i2
	// and the orientation), then reads their edge-list entries in one tight loop, then the
	// matrix words the swaps will test and change in another, and only then runs the attempts
	// one after the other. The reads ahead are independent of each other, so their cache misses
	// overlap (memory-level parallelism); the sequential pass finds everything in cache. A swap
	// earlier in the batch may change an edge a later attempt drew: the sequential pass reads
	// every entry again, so the chain is exactly the one-at-a-time chain.
	var (
		i1s, i2s [rewireBatch]uint64
		flips    [rewireBatch]bool
		e1s, e2s [rewireBatch]uint32
		sink     uint64
	)
	for st.Swaps < want && st.Attempts < maxAttempts {
		if err := ctx.Err(); err != nil {
			return nil, st, err
		}
		for range 1024 / rewireBatch {
			for k := range rewireBatch {
				i1s[k], _ = bits.Mul64(rng.Uint64(), um)
				r2 := rng.Uint64()
				i2s[k], _ = bits.Mul64(r2, um)
				flips[k] = r2&1 != 0
			}
			for k := range rewireBatch {
				e1s[k], e2s[k] = edges[i1s[k]], edges[i2s[k]]
			}
			for k := range rewireBatch {
				a, b := int32(e1s[k]>>shift), int32(e1s[k]&low)
				c, e := int32(e2s[k]>>shift), int32(e2s[k]&low)
				if flips[k] {
					c, e = e, c
				}
				if a != e && c != b && a != c && b != e {
					sink ^= adj[bit(a, e)>>6] ^ adj[bit(c, b)>>6] ^ adj[bit(a, b)>>6] ^ adj[bit(c, e)>>6]
				}
			}
			for k := range rewireBatch {
				if st.Swaps >= want || st.Attempts >= maxAttempts {
					break
				}
				st.Attempts++
				if i1s[k] == i2s[k] {
					continue
				}
				e1, e2 := edges[i1s[k]], edges[i2s[k]]
				a, b := int32(e1>>shift), int32(e1&low)
				c, e := int32(e2>>shift), int32(e2&low)
				if flips[k] {
					c, e = e, c
				}
				if a == e || c == b || a == c || b == e {
					continue // a self-loop, or the same pair of edges back
				}
				if has(a, e) || has(c, b) {
					continue
				}
				set(a, b, false)
				set(c, e, false)
				set(a, e, true)
				set(c, b, true)
				edges[i1s[k]] = uint32(min(a, e))<<shift | uint32(max(a, e))
				edges[i2s[k]] = uint32(min(c, b))<<shift | uint32(max(c, b))
				st.Swaps++
			}
		}
		rep.Add(st.Swaps - reported)
		reported = st.Swaps
	}
	rep.Add(st.Swaps - reported)
	if sink == 1<<63 && st.Attempts < 0 { // keeps the reads ahead alive
		return nil, st, errors.New("graph: internal error in the rewiring chain")
	}
	h, err := graphFromKeys(g.N, edges, shift)
	return h, st, err
}
