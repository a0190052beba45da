package graph

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/hubscope/hubscope/helper/progress"
)

// RewireOptions sets up a Maslov–Sneppen rewiring; the zero value asks for the defaults.
type RewireOptions struct {
	// SwapsPerEdge is the number of accepted double-edge swaps per edge (default 10, the
	// convention of Maslov & Sneppen 2002 and of the Brain Connectivity Toolbox's
	// randmio_und with ITER = 10, where every edge is rewired about ten times).
	SwapsPerEdge float64
	// MaxAttemptsPerSwap caps the attempts at this multiple of the swaps asked for (default 100),
	// so that graphs where few swaps are possible (near-complete graphs, stars) still stop.
	MaxAttemptsPerSwap float64
	// Seed and Stream select the PCG random stream (math/rand/v2): the same seed, stream and
	// graph give the same random network on every machine.
	Seed, Stream uint64
}

// RewireStats says how much rewiring happened.
type RewireStats struct {
	Attempts int64 `json:"attempts"`
	Swaps    int64 `json:"swaps"` // accepted swaps
}

// Rewire returns a degree-preserving randomisation of g by double edge swaps (Maslov & Sneppen,
// Science 296:910, 2002): pick two edges (a,b) and (c,d) uniformly, orient the second at random,
// and replace them by (a,d) and (c,b) unless that would create a self-loop or an edge that
// already exists. Every node keeps its degree exactly; the result is a simple graph with the
// same N and E. Edge membership is an open-addressing hash set (linear probing, backward-shift
// deletion), O(1) per check. The chain is sequential; run several rewirings in parallel for
// several random networks (SmallWorld does). Weights are dropped: random networks are binary.
// ctx is checked and progress (in accepted swaps) reported every 2¹⁶ attempts.
func Rewire(ctx context.Context, g *Graph, opt RewireOptions, rep progress.Reporter) (*Graph, RewireStats, error) {
	rep = progress.OrDiscard(rep)
	var st RewireStats
	if g == nil {
		return nil, st, errors.New("graph: rewiring a nil graph")
	}
	if opt.SwapsPerEdge <= 0 {
		opt.SwapsPerEdge = 10
	}
	if opt.MaxAttemptsPerSwap <= 0 {
		opt.MaxAttemptsPerSwap = 100
	}
	// Nodes < 2¹⁶ fit two to a 32-bit key, halving the memory the swaps walk over at random
	// (edge list + hash table), which is what bounds their speed.
	if g.N <= 1<<16 {
		if triangleBits(g.N) <= maxBitsetBytes*8 {
			return rewireBits(ctx, g, opt, rep)
		}
		return rewire[uint32](ctx, g, opt, 16, rep)
	}
	return rewire[uint64](ctx, g, opt, 32, rep)
}

// rewire runs the swap chain with edges packed as u<<shift | v (u < v) in keys of type K.
func rewire[K uint32 | uint64](ctx context.Context, g *Graph, opt RewireOptions, shift uint, rep progress.Reporter) (*Graph, RewireStats, error) {
	var st RewireStats
	m := int(g.Edges())
	low := K(1)<<shift - 1
	key := func(u, v int32) K {
		if u > v {
			u, v = v, u
		}
		return K(u)<<shift | K(v)
	}
	edges := make([]K, 0, m)
	for i := 0; i < g.N; i++ {
		for _, j := range g.Neighbors(i) {
			if int(j) > i {
				edges = append(edges, key(int32(i), j))
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
	set := newEdgeSet[K](m)
	for _, e := range edges {
		set.insert(e)
	}
	rng := rand.NewPCG(opt.Seed, opt.Stream)
	um := uint64(m)
	// The next attempt's edge indices are drawn one step ahead and their list entries read
	// early, so those cache misses overlap with the current attempt's hash probes.
	n1, _ := bits.Mul64(rng.Uint64(), um)
	r2 := rng.Uint64()
	n2, _ := bits.Mul64(r2, um)
	var sink K
	for st.Swaps < want && st.Attempts < maxAttempts {
		if st.Attempts&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return nil, st, err
			}
			rep.Add(st.Swaps - reported)
			reported = st.Swaps
		}
		st.Attempts++
		i1, i2, flip := n1, n2, r2&1 != 0 // the low bit is unused by the index (it took the high word)
		// Lemire's multiply-shift maps 64 random bits onto [0, m); the bias (m/2⁶⁴) is nil here.
		n1, _ = bits.Mul64(rng.Uint64(), um)
		r2 = rng.Uint64()
		n2, _ = bits.Mul64(r2, um)
		sink ^= edges[n1] ^ edges[n2]
		if i1 == i2 {
			continue
		}
		e1, e2 := edges[i1], edges[i2]
		a, b := int32(e1>>shift), int32(e1&low)
		c, d := int32(e2>>shift), int32(e2&low)
		if flip {
			c, d = d, c
		}
		if a == d || c == b || a == c || b == d {
			continue // a self-loop, or the same pair of edges back
		}
		k1, k2 := key(a, d), key(c, b)
		if set.has(k1) || set.has(k2) {
			continue
		}
		set.remove(e1)
		set.remove(e2)
		set.insert(k1)
		set.insert(k2)
		edges[i1], edges[i2] = k1, k2
		st.Swaps++
	}
	rep.Add(st.Swaps - reported)
	if sink == ^K(0) { // keeps the early reads alive; a key is never all ones
		return nil, st, errors.New("graph: internal error: impossible edge key")
	}
	h, err := graphFromKeys(g.N, edges, shift)
	return h, st, err
}

// graphFromKeys builds the symmetric CSR of a simple graph from packed edge keys u<<shift | v
// (u < v). The keys are sorted first (LSD radix sort, 16 bits a pass); then every row's lower
// neighbours (j < i, from keys (j, i) in increasing j) are placed in one pass and its upper
// neighbours (from keys (i, v) in increasing v) in a second, so rows come out sorted without a
// comparison sort per row.
func graphFromKeys[K uint32 | uint64](n int, keys []K, shift uint) (*Graph, error) {
	low := K(1)<<shift - 1
	g := &Graph{N: n, Offsets: make([]int64, n+1)}
	for _, k := range keys {
		u, v := int(k>>shift), int(k&low)
		if u >= n || v >= n || u >= v {
			return nil, fmt.Errorf("graph: internal error: edge (%d,%d) in a %d-node graph", u, v, n)
		}
		g.Offsets[u+1]++
		g.Offsets[v+1]++
	}
	for i := 0; i < n; i++ {
		g.Offsets[i+1] += g.Offsets[i]
	}
	sorted := radixSortKeys(keys, 2*shift)
	g.Adj = make([]int32, g.Offsets[n])
	pos := make([]int64, n)
	copy(pos, g.Offsets[:n])
	for _, k := range sorted { // lower neighbours: row v receives u in increasing u
		u, v := int32(k>>shift), int32(k&low)
		g.Adj[pos[v]] = u
		pos[v]++
	}
	for _, k := range sorted { // upper neighbours: row u receives v in increasing v
		u, v := int32(k>>shift), int32(k&low)
		g.Adj[pos[u]] = v
		pos[u]++
	}
	return g, nil
}

// radixSortKeys returns a sorted copy of keys whose values fit in bits bits.
func radixSortKeys[K uint32 | uint64](keys []K, bits uint) []K {
	a := append([]K(nil), keys...)
	b := make([]K, len(a))
	for sh := uint(0); sh < bits; sh += 16 {
		var count [1 << 16]int
		for _, k := range a {
			count[(k>>sh)&0xffff]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range a {
			d := (k >> sh) & 0xffff
			b[count[d]] = k
			count[d]++
		}
		a, b = b, a
	}
	return a
}

// edgeSet is an open-addressing hash set of packed edge keys with linear probing and
// backward-shift deletion (Knuth, TAOCP vol. 3, Algorithm R), so deletions leave no tombstones
// and probe lengths stay short through millions of swaps. The table is kept at most half full.
type edgeSet[K uint32 | uint64] struct {
	slots []K
	mask  uint64
	shift uint
}

// The all-ones key marks an empty slot: it is never an edge, whose first node u < v has a zero
// somewhere in its bits.

func newEdgeSet[K uint32 | uint64](m int) *edgeSet[K] {
	size := uint64(16)
	for size < uint64(2*m) {
		size <<= 1
	}
	s := &edgeSet[K]{slots: make([]K, size), mask: size - 1, shift: uint(64 - bits.TrailingZeros64(size))}
	for i := range s.slots {
		s.slots[i] = ^K(0)
	}
	return s
}

// home is the Fibonacci hash of k onto the table.
func (s *edgeSet[K]) home(k K) uint64 { return (uint64(k) * 0x9E3779B97F4A7C15) >> s.shift }

func (s *edgeSet[K]) has(k K) bool {
	for i := s.home(k); ; i = (i + 1) & s.mask {
		switch s.slots[i] {
		case k:
			return true
		case ^K(0):
			return false
		}
	}
}

func (s *edgeSet[K]) insert(k K) {
	i := s.home(k)
	for s.slots[i] != ^K(0) && s.slots[i] != k {
		i = (i + 1) & s.mask
	}
	s.slots[i] = k
}

func (s *edgeSet[K]) remove(k K) {
	i := s.home(k)
	for s.slots[i] != k {
		if s.slots[i] == ^K(0) {
			return
		}
		i = (i + 1) & s.mask
	}
	// Shift later members of the probe run back into the hole when the hole lies between their
	// home slot and where they sit (cyclically), so every key stays reachable from its home.
	for j := (i + 1) & s.mask; s.slots[j] != ^K(0); j = (j + 1) & s.mask {
		h := s.home(s.slots[j])
		if (j-h)&s.mask >= (j-i)&s.mask {
			s.slots[i] = s.slots[j]
			i = j
		}
	}
	s.slots[i] = ^K(0)
}
