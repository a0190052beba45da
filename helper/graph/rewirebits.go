package graph

import (
	"context"
	"errors"
	"math/bits"
	"math/rand/v2"
	"unsafe"

	"github.com/hubscope/hubscope/helper/progress"
)

// maxBitsetBytes caps the adjacency bit matrix of rewireBits (one bit per node pair, upper
// triangle): 51 MB for the 28,652-node C5 network, 200 MB at 56,696 nodes. Larger graphs use the
// hash set, which takes 8 bytes per edge instead.
const maxBitsetBytes = 256 << 20

// triangleBits is the number of unordered node pairs, one bit each in rewireBits' matrix.
func triangleBits(n int) int64 { return int64(n) * int64(n-1) / 2 }

// pairBit is the position of node pair {u, v} in rewireBits' matrix of n nodes: row min(u, v)
// of the upper triangle starts at a·n − a(a+1)/2, and the column is max(u, v) − a − 1. A plain
// function, so that the chain's loop has it inlined.
func pairBit(u, v int32, n int64) int64 {
	a, b := int64(min(u, v)), int64(max(u, v))
	return a*n - int64(uint64(a*(a+1))>>1) + b - a - 1
}

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
		b := pairBit(int32(e>>shift), int32(e&low), n)
		adj[b>>6] |= 1 << (b & 63)
	}
	rng := rand.NewPCG(opt.Seed, opt.Stream)
	um := uint64(m)
	// Attempts run in batches through a three-stage software pipeline (docs/algorithms.md,
	// "Random networks"). A batch's edge indices are drawn two batches before it runs (the
	// hash-set chain's order: the high word of one Uint64 for i1, the high word and low bit of
	// the next for i2 and the orientation). Beside attempt k of the batch that runs, the chain
	// hints into cache attempt k's two edge entries of the batch two ahead, and reads attempt
	// k's entries of the batch one ahead (hinted one batch ago) to hint the four matrix words
	// its swap will test and change. The hints are prefetch instructions: they neither fault nor
	// hold up the work behind them, so their misses overlap each other and the swaps
	// (memory-level parallelism) instead of costing one memory latency each; spread one
	// attempt's worth at a time, they do not overflow the core's miss buffers as a burst of a
	// whole batch's did. A swap may change an edge that a later attempt drew before it ran: the
	// attempts read every entry again when they run, so the chain is exactly the one-at-a-time
	// chain and the hints only hints.
	type stage struct {
		i1, i2 [rewireBatch]uint64
		flip   [rewireBatch]int32 // 1: the second edge is taken as (d, c)
	}
	var (
		pipe [3]stage
		sink uint64
	)
	draw := func(s *stage) {
		for k := range rewireBatch {
			s.i1[k], _ = bits.Mul64(rng.Uint64(), um)
			r2 := rng.Uint64()
			s.i2[k], _ = bits.Mul64(r2, um)
			s.flip[k] = int32(r2 & 1)
		}
	}
	draw(&pipe[0])
	draw(&pipe[1])
	for t := 0; st.Swaps < want && st.Attempts < maxAttempts; t++ {
		if t%(1024/rewireBatch) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, err
			}
			rep.Add(st.Swaps - reported)
			reported = st.Swaps
		}
		cur, next, fresh := &pipe[t%3], &pipe[(t+1)%3], &pipe[(t+2)%3]
		draw(fresh)
		for k := range rewireBatch {
			if st.Swaps >= want || st.Attempts >= maxAttempts {
				break
			}
			{
				// Attempt k of the next batch: its edge entries were hinted one batch ago;
				// hint its four matrix words, and attempt k of the batch after it's entries.
				e1, e2 := edges[next.i1[k]], edges[next.i2[k]]
				a, b := int32(e1>>shift), int32(e1&low)
				c, e := int32(e2>>shift), int32(e2&low)
				x := (c ^ e) & -next.flip[k]
				c, e = c^x, e^x
				var w0, w1, w2, w3 int64
				if a != e && c != b && a != c && b != e {
					w0, w1, w2, w3 = pairBit(a, e, n)>>6, pairBit(c, b, n)>>6, pairBit(a, b, n)>>6, pairBit(c, e, n)>>6
				}
				sink ^= prefetch6(unsafe.Pointer(&edges[fresh.i1[k]]), unsafe.Pointer(&edges[fresh.i2[k]]),
					unsafe.Pointer(&adj[w0]), unsafe.Pointer(&adj[w1]), unsafe.Pointer(&adj[w2]), unsafe.Pointer(&adj[w3]))
			}
			st.Attempts++
			i1, i2 := cur.i1[k], cur.i2[k]
			e1, e2 := edges[i1], edges[i2]
			a, b := int32(e1>>shift), int32(e1&low)
			c, e := int32(e2>>shift), int32(e2&low)
			// The orientation, and below whether the swap is made, are random to a branch
			// predictor: both are applied with masks instead of branches.
			x := (c ^ e) & -cur.flip[k]
			c, e = c^x, e^x
			if a == e || c == b || a == c || b == e || i1 == i2 {
				continue // a self-loop, or the same pair of edges back
			}
			pae, pcb, pab, pce := pairBit(a, e, n), pairBit(c, b, n), pairBit(a, b, n), pairBit(c, e, n)
			// free is 1 when neither new edge exists: then the swap is made.
			free := (adj[pae>>6]>>(pae&63)|adj[pcb>>6]>>(pcb&63))&1 ^ 1
			mask := -free
			adj[pab>>6] &^= 1 << (pab & 63) & mask
			adj[pce>>6] &^= 1 << (pce & 63) & mask
			adj[pae>>6] |= 1 << (pae & 63) & mask
			adj[pcb>>6] |= 1 << (pcb & 63) & mask
			m32 := uint32(mask)
			k1, k2 := uint32(min(a, e))<<shift|uint32(max(a, e)), uint32(min(c, b))<<shift|uint32(max(c, b))
			edges[i1] = e1 ^ (e1^k1)&m32
			edges[i2] = e2 ^ (e2^k2)&m32
			st.Swaps += int64(free)
		}
	}
	rep.Add(st.Swaps - reported)
	if sink == 1<<63 && st.Attempts < 0 { // keeps the reads ahead alive
		return nil, st, errors.New("graph: internal error in the rewiring chain")
	}
	h, err := graphFromKeys(g.N, edges, shift)
	return h, st, err
}
