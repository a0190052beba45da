package graph

import (
	"context"
	"errors"
	"math"
	"math/bits"
)

// Triangles returns t_i, the number of triangles through each node, by the "forward" algorithm
// (Schank & Wagner 2005; Latapy 2008): orient every edge from the lower- to the higher-ranked end,
// rank = (degree, index), so that each triangle is found exactly once from its lowest-ranked node
// and no node has more than O(√E) out-neighbours; the hubs' rows are intersected as bit rows
// (docs/algorithms.md, "Triangles"). Cost O(E^1.5) worst case, far less on brain networks;
// parallel over nodes, with per-worker integer counts (exact, schedule-independent).
func Triangles(ctx context.Context, g *Graph) ([]int64, error) {
	if g == nil {
		return nil, errors.New("graph: triangles of a nil graph")
	}
	// Node indices below 2¹⁶ are stored in 16 bits: the oriented adjacency then takes half the
	// memory (1 MB for the C2 graph, within a core's L2 cache).
	if g.N <= 1<<16 {
		return triangles[uint16](ctx, g)
	}
	return triangles[int32](ctx, g)
}

func triangles[I uint16 | int32](ctx context.Context, g *Graph) ([]int64, error) {
	n := g.N
	deg := make([]int32, n)
	for i := range deg {
		deg[i] = int32(g.Offsets[i+1] - g.Offsets[i])
	}
	// Out-neighbours (higher rank) as a CSR of half the size of g, rows still sorted by index.
	outOff := make([]int64, n+1)
	out := make([]I, g.Edges())
	var p int64
	for i := 0; i < n; i++ {
		di := deg[i]
		for _, j := range g.Neighbors(i) {
			if dj := deg[j]; dj > di || (dj == di && int(j) > i) {
				out[p] = I(j)
				p++
			}
		}
		outOff[i+1] = p
	}
	maxOut := 0
	for i := 0; i < n; i++ {
		maxOut = max(maxOut, int(outOff[i+1]-outOff[i]))
	}
	// Rows as bit rows (docs/algorithms.md, "Triangles"): relabelled by rank, j's out-neighbours
	// are labels above j, so its row as bits spans the words from (j+1)/64 to the last one, and
	// intersecting it with i's marks costs one AND per 64 labels instead of one test per
	// out-neighbour. That pays for a row whose bits take at most half as many words as it has
	// entries — the hubs' rows, short in words (few labels above them) while holding most of
	// the scan. Where such rows hold less than half of the scan (graphs without strong hubs,
	// such as C2's), the relabelling would cost more than it saves: count entry by entry.
	rank, order := degreeRanks(g)
	last := (n - 1) >> 6
	words := func(r int32) int64 { return int64(last - int(r+1)>>6 + 1) }
	var scan, bitScan float64 // Σ indeg·outdeg: how often each row is read, times its length
	for i := 0; i < n; i++ {
		o := outOff[i+1] - outOff[i]
		w := float64(int64(deg[i])-o) * float64(o)
		scan += w
		if int(rank[i])+1 < n && 2*words(rank[i]) <= o {
			bitScan += w
		}
	}
	if 2*bitScan < scan {
		return trianglesByEntries(ctx, n, out, outOff, maxOut)
	}
	// Relabel: entries become ranks, label r's row is node order[r]'s.
	for q, j := range out {
		out[q] = I(rank[j])
	}
	rowLo, rowHi := make([]int64, n), make([]int64, n)
	for r, i := range order {
		rowLo[r], rowHi[r] = outOff[i], outOff[i+1]
	}
	// The bit rows take at most as many bytes as those rows' entries (8-byte words, ≥ 2
	// entries per word, entries ≥ 2 bytes).
	bitOff := make([]int64, n+1) // bit row of label j: bitRows[bitOff[j]:bitOff[j+1]], or empty
	for j := 0; j < n; j++ {
		bitOff[j+1] = bitOff[j]
		if w := words(int32(j)); j+1 < n && 2*w <= rowHi[j]-rowLo[j] {
			bitOff[j+1] += w
		}
	}
	bitRows := make([]uint64, bitOff[n])
	for j := 0; j < n; j++ {
		if bitOff[j+1] > bitOff[j] {
			row, first := bitRows[bitOff[j]:bitOff[j+1]], (j+1)>>6
			for _, k := range out[rowLo[j]:rowHi[j]] {
				row[int(k>>6)-first] |= 1 << (k & 63)
			}
		}
	}
	workers := workerCount((n + 255) / 256)
	counts := make([][]int64, workers) // by label
	marks := make([][]uint64, workers)
	markeds := make([][]uint8, workers)
	hits := make([][]I, workers)
	for w := range counts {
		counts[w] = make([]int64, n)
		// Bit k of mark, and byte k of marked, are set ⇔ label k is an out-neighbour of the
		// current i: the bits for the bit rows, the bytes for the others (one load and compare
		// a test).
		marks[w] = make([]uint64, last+1)
		markeds[w] = make([]uint8, n)
		hits[w] = make([]I, maxOut)
	}
	err := forEachChunk(ctx, n, 256, workers, false, func(w, lo, hi int) error {
		t, mark, marked, hit := counts[w], marks[w], markeds[w], hits[w]
		for i := lo; i < hi; i++ { // nodes in index order: their rows are read in sequence
			oi := out[outOff[i]:outOff[i+1]]
			if len(oi) < 2 {
				continue
			}
			for _, k := range oi {
				mark[k>>6] |= 1 << (k & 63)
				marked[k] = 1
			}
			var ti int64
			for _, j := range oi {
				if b0, b1 := bitOff[j], bitOff[j+1]; b1 > b0 {
					h := 0
					m := mark[int(j+1)>>6:]
					for q, x := range bitRows[b0:b1] {
						x &= m[q]
						for x != 0 { // a triangle i, j, k for every bit left
							hit[h] = I((int(j+1)>>6+q)<<6 + bits.TrailingZeros64(x))
							h++
							x &= x - 1
						}
					}
					ti += int64(h)
					t[j] += int64(h)
					for _, k := range hit[:h] {
						t[k]++
					}
				} else {
					for _, k := range out[rowLo[j]:rowHi[j]] {
						if marked[k] != 0 {
							ti++
							t[j]++
							t[k]++
						}
					}
				}
			}
			t[rank[i]] += ti
			for _, k := range oi {
				mark[k>>6] = 0
				marked[k] = 0
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	total := make([]int64, n)
	for r, i := range order {
		for _, t := range counts {
			total[i] += t[r]
		}
	}
	return total, nil
}

// trianglesByEntries counts the triangles over the oriented CSR (out, outOff) by index: every
// row j of an out-neighbour of i is tested entry by entry against i's marks.
func trianglesByEntries[I uint16 | int32](ctx context.Context, n int, out []I, outOff []int64, maxOut int) ([]int64, error) {
	workers := workerCount((n + 255) / 256)
	counts := make([][]int64, workers)
	marks := make([][]uint8, workers)
	for w := range counts {
		counts[w] = make([]int64, n)
		marks[w] = make([]uint8, n) // mark[k] = 1 ⇔ k is an out-neighbour of the current i
	}
	err := forEachChunk(ctx, n, 256, workers, false, func(w, lo, hi int) error {
		t, mark := counts[w], marks[w]
		for i := lo; i < hi; i++ {
			oi := out[outOff[i]:outOff[i+1]]
			if len(oi) < 2 {
				continue
			}
			for _, k := range oi {
				mark[k] = 1
			}
			for _, j := range oi {
				for _, k := range out[outOff[j]:outOff[j+1]] {
					if mark[k] != 0 {
						t[i]++
						t[j]++
						t[k]++
					}
				}
			}
			for _, k := range oi {
				mark[k] = 0
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	total := counts[0]
	for _, t := range counts[1:] {
		for i, c := range t {
			total[i] += c
		}
	}
	return total, nil
}

// degreeRanks returns every node's rank by (degree, index), 0 the lowest, and the nodes in
// rank order (a counting sort by degree, stable in the index).
func degreeRanks(g *Graph) (rank, order []int32) {
	n := g.N
	maxDeg := 0
	for i := 0; i < n; i++ {
		maxDeg = max(maxDeg, g.Degree(i))
	}
	start := make([]int32, maxDeg+2)
	for i := 0; i < n; i++ {
		start[g.Degree(i)+1]++
	}
	for d := 0; d <= maxDeg; d++ {
		start[d+1] += start[d]
	}
	rank, order = make([]int32, n), make([]int32, n)
	for i := 0; i < n; i++ {
		d := g.Degree(i)
		rank[i] = start[d]
		order[start[d]] = int32(i)
		start[d]++
	}
	return rank, order
}

// ClusteringCoefficients returns the binary local clustering coefficient of every node,
// C_i = 2 t_i / (k_i (k_i − 1)) (Watts & Strogatz 1998), 0 for nodes of degree < 2.
func ClusteringCoefficients(ctx context.Context, g *Graph) ([]float64, error) {
	return clusteringWith(ctx, CPU{}, g)
}

// clusteringWith is ClusteringCoefficients with the triangles counted by a.
func clusteringWith(ctx context.Context, a Accelerator, g *Graph) ([]float64, error) {
	t, err := a.Triangles(ctx, g)
	if err != nil {
		return nil, err
	}
	c := make([]float64, g.N)
	for i := range c {
		if k := float64(g.Degree(i)); k >= 2 {
			c[i] = 2 * float64(t[i]) / (k * (k - 1))
		}
	}
	return c, nil
}

// meanClusteringFromTriangles is C_p from every node's triangle count t.
func meanClusteringFromTriangles(g *Graph, t []int64) float64 {
	if g.N == 0 {
		return 0
	}
	var s float64
	for i, ti := range t {
		if k := float64(g.Degree(i)); k >= 2 {
			s += 2 * float64(ti) / (k * (k - 1))
		}
	}
	return s / float64(g.N)
}

// MeanClustering is C_p = (1/N) Σ_i C_i with C_i = 0 for nodes of degree < 2, igraph's
// transitivity_avglocal_undirected(mode="zero") and networkx's average_clustering.
func MeanClustering(ctx context.Context, g *Graph) (float64, error) {
	c, err := ClusteringCoefficients(ctx, g)
	if err != nil || len(c) == 0 {
		return 0, err
	}
	return mean(c), nil
}

// WeightedClusteringCoefficients returns Onnela et al.'s (2005) weighted clustering,
// C̃_i = 2/(k_i(k_i−1)) Σ_{j<k} (ŵ_ij ŵ_ik ŵ_jk)^{1/3} over adjacent neighbour pairs, with weights
// normalised by the largest weight in the graph, ŵ = w / max(w). This is networkx's
// clustering(G, weight=…). Weights are expected positive (|r| or r above a positive
// threshold); the cube root keeps the sign of a negative product. The triangles are listed
// once each, as Triangles lists them (docs/algorithms.md, "Weighted clustering"); every
// worker always takes the same nodes, so the sums are reproducible bit for bit for a given
// GOMAXPROCS.
func WeightedClusteringCoefficients(ctx context.Context, g *Graph) ([]float64, error) {
	_, wc, err := clusteringBoth(ctx, g)
	return wc, err
}

// clusteringBoth returns the binary clustering C_i and Onnela's weighted clustering C̃_i of every
// node from one listing of the triangles.
func clusteringBoth(ctx context.Context, g *Graph) (c, wc []float64, err error) {
	if g == nil {
		return nil, nil, errors.New("graph: weighted clustering of a nil graph")
	}
	if g.Weights == nil {
		return nil, nil, errors.New("graph: weighted clustering needs edge weights; the graph is binary")
	}
	if g.N <= 1<<16 {
		return clusteringBothI[uint16](ctx, g)
	}
	return clusteringBothI[int32](ctx, g)
}

func clusteringBothI[I uint16 | int32](ctx context.Context, g *Graph) (c, wc []float64, err error) {
	n := g.N
	var wmax float64
	for _, w := range g.Weights {
		wmax = max(wmax, math.Abs(float64(w)))
	}
	deg := make([]int32, n)
	for i := range deg {
		deg[i] = int32(g.Offsets[i+1] - g.Offsets[i])
	}
	// The oriented CSR of Triangles, with each entry's ŵ^{1/3}: (ŵ_ij ŵ_ik ŵ_jk)^{1/3} =
	// ŵ_ij^{1/3} ŵ_ik^{1/3} ŵ_jk^{1/3}, so the root is taken once per edge and the triangle
	// loop only multiplies (equal to the root of the product within a few ulp).
	outOff := make([]int64, n+1)
	out := make([]I, g.Edges())
	outW := make([]float64, g.Edges())
	var p int64
	for i := 0; i < n; i++ {
		di := deg[i]
		for q := g.Offsets[i]; q < g.Offsets[i+1]; q++ {
			j := g.Adj[q]
			if dj := deg[j]; dj > di || (dj == di && int(j) > i) {
				out[p] = I(j)
				if wmax > 0 {
					outW[p] = math.Cbrt(float64(g.Weights[q]) / wmax)
				}
				p++
			}
		}
		outOff[i+1] = p
	}
	workers := workerCount((n + 255) / 256)
	type acc struct {
		t     []int64
		s     []float64
		mark  []uint8   // mark[k] = 1 ⇔ k is an out-neighbour of the current i
		markW []float64 // ŵ_ik^{1/3} of those
	}
	accs := make([]acc, workers)
	for w := range accs {
		accs[w] = acc{make([]int64, n), make([]float64, n), make([]uint8, n), make([]float64, n)}
	}
	err = forEachChunk(ctx, n, 256, workers, true, func(w, lo, hi int) error {
		a := accs[w]
		t, s, mark, markW := a.t, a.s, a.mark, a.markW
		for i := lo; i < hi; i++ {
			oi := out[outOff[i]:outOff[i+1]]
			if len(oi) < 2 {
				continue
			}
			wi := outW[outOff[i]:outOff[i+1]]
			for q, k := range oi {
				mark[k] = 1
				markW[k] = wi[q]
			}
			var ti int64
			var si float64
			for q, j := range oi {
				wij := wi[q]
				a, b := outOff[j], outOff[j+1]
				wj := outW[a:b]
				var tj int64
				var sj float64
				for r, k := range out[a:b] {
					m := int64(mark[k])
					x := wij * markW[k] * wj[r]
					tj += m
					sj += x
					t[k] += m
					s[k] += x
				}
				ti += tj
				si += sj
				t[j] += tj
				s[j] += sj
			}
			t[i] += ti
			s[i] += si
			for _, k := range oi {
				mark[k], markW[k] = 0, 0
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	c, wc = make([]float64, n), make([]float64, n)
	for i := range c {
		var ti int64
		var si float64
		for _, a := range accs { // in worker order: reproducible
			ti += a.t[i]
			si += a.s[i]
		}
		if k := float64(deg[i]); k >= 2 {
			c[i] = 2 * float64(ti) / (k * (k - 1))
			wc[i] = 2 * si / (k * (k - 1))
		}
	}
	return c, wc, nil
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
