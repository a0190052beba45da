package graph

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/hubscope/hubscope/helper/progress"
)

// PathStats gathers the measures that need every shortest-path length of a binary graph. All
// are exact (breadth-first search from every node), with pairs in different components treated
// as igraph and networkx treat them.
type PathStats struct {
	// CharacteristicPathLength L_p is the mean shortest-path length over the ordered pairs
	// (i, j), i ≠ j, that are connected; disconnected pairs are left out, as in igraph's
	// average_path_length(unconn=True). 0 when no pair is connected (see ConnectedPairs).
	CharacteristicPathLength float64 `json:"characteristic_path_length"`
	// GlobalEfficiency E_glob = 1/(N(N−1)) Σ_{i≠j} 1/d_ij with 1/∞ = 0 (Latora & Marchiori 2001),
	// as networkx's global_efficiency.
	GlobalEfficiency float64 `json:"global_efficiency"`
	// ConnectedPairs is the number of unordered pairs {i, j} joined by some path.
	ConnectedPairs int64 `json:"connected_pairs"`
	// Diameter is the longest finite shortest-path length.
	Diameter int `json:"diameter"`
	// DistanceCounts[d] is the number of unordered pairs at distance d (index 0 unused).
	DistanceCounts []int64 `json:"distance_counts"`
	// Components counts connected components (isolated nodes included); LargestComponentShare
	// is the largest one's fraction of all nodes — read L_p together with it.
	Components            int     `json:"components"`
	LargestComponentShare float64 `json:"largest_component_share"`
}

// ShortestPaths computes L_p, E_glob and the distance distribution exactly, with a bit-parallel
// multi-source BFS (MS-BFS; Then et al., "The more the merrier: efficient multi-source graph
// traversal", PVLDB 8(4), 2014): 128 sources share one sweep, each node carries two uint64
// whose bit s says "reached from source s", so one pass over a frontier node's neighbours
// advances up to 128 searches at once (msbfs128). Levels whose frontier is large run bottom-up
// instead (direction-optimising BFS, Beamer, Asanović & Patterson 2012): each node still missing
// searches pulls the frontier bits of its neighbours and stops once complete, which on dense
// functional networks skips most of the edges. Batches of 128 sources are spread over all
// cores; per worker the memory is six words per node. Progress counts sources; ctx is checked
// between batches (a batch takes about a millisecond on the 10⁴-node, 5·10⁵-edge C2 graph).
func ShortestPaths(ctx context.Context, g *Graph, rep progress.Reporter) (PathStats, error) {
	rep = progress.OrDiscard(rep)
	if g == nil {
		return PathStats{}, errors.New("graph: shortest paths of a nil graph")
	}
	rep.Start("shortest paths (MS-BFS)", int64(g.N))
	// Numbered by decreasing degree, every row lists its best-connected neighbours first: a
	// bottom-up step, which stops reading a row once the node has every search, stops sooner
	// (the hubs are reached first), and the hubs' words sit together. The counts per distance
	// do not depend on the numbering.
	off, adj := g.Offsets, g.Adj
	if len(g.Adj) <= maxRenumberedEntries {
		off, adj, _ = degreeOrdered[int32](g, true)
	}
	hist, err := distanceHistogram128(ctx, off, adj, g.N, workerCount((g.N+127)/128), rep)
	if err != nil {
		return PathStats{}, err
	}
	ps := pathStatsFromHistogram(hist, g.N)
	ps.Components, _, ps.LargestComponentShare = LargestComponent(g)
	return ps, nil
}

// pathStatsFromHistogram turns counts of ordered pairs per distance into PathStats. The sums are
// taken over exact integer counts in increasing d, so the result does not depend on how sources
// were shared among workers.
func pathStatsFromHistogram(hist []int64, n int) PathStats {
	var ps PathStats
	var pairs, sumD int64
	var sumInv float64
	ps.DistanceCounts = make([]int64, len(hist))
	for d := 1; d < len(hist); d++ {
		c := hist[d]
		if c == 0 {
			continue
		}
		ps.DistanceCounts[d] = c / 2
		ps.Diameter = d
		pairs += c
		sumD += c * int64(d)
		sumInv += float64(c) / float64(d)
	}
	ps.ConnectedPairs = pairs / 2
	if pairs > 0 {
		ps.CharacteristicPathLength = float64(sumD) / float64(pairs)
	}
	if n > 1 {
		ps.GlobalEfficiency = sumInv / (float64(n) * float64(n-1))
	}
	for len(ps.DistanceCounts) > 1 && ps.DistanceCounts[len(ps.DistanceCounts)-1] == 0 {
		ps.DistanceCounts = ps.DistanceCounts[:len(ps.DistanceCounts)-1]
	}
	return ps
}

// distanceHistogram returns hist[d] = number of ordered pairs (s, t), s ≠ t, at distance d in
// the CSR graph (off, adj) over n nodes, running MS-BFS batches on workers goroutines.
func distanceHistogram(ctx context.Context, off []int64, adj []int32, n, workers int, rep progress.Reporter) ([]int64, error) {
	return sweepHistogram(ctx, off, adj, n, workers, 64, func() sweeper { return newMSBFS(n) }, rep)
}

// sweeper is one worker's multi-source BFS, 64 (msbfs) or 128 (msbfs128) sources per sweep,
// accumulating its ordered pairs per distance.
type sweeper interface {
	sweep(off []int64, adj []int32, lo, hi int)
	histogram() []int64
}

// sweepHistogram runs the sources in chunks of width on workers sweepers and sums their
// distance histograms.
func sweepHistogram(ctx context.Context, off []int64, adj []int32, n, workers, width int, newSweeper func() sweeper, rep progress.Reporter) ([]int64, error) {
	bfs := make([]sweeper, workers)
	for w := range bfs {
		bfs[w] = newSweeper()
	}
	err := forEachChunk(ctx, n, width, workers, false, func(w, lo, hi int) error {
		bfs[w].sweep(off, adj, lo, hi)
		rep.Add(int64(hi - lo))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var hist []int64
	for _, b := range bfs {
		bh := b.histogram()
		for len(hist) < len(bh) {
			hist = append(hist, 0)
		}
		for d, c := range bh {
			hist[d] += c
		}
	}
	return hist, nil
}

func (b *msbfs) histogram() []int64 { return b.hist }

// msbfs holds one worker's MS-BFS state: seen[v] / visit[v] / next[v] are the bit sets (over the
// ≤ 64 sources of the current batch) of searches that have reached v, that reached v in the last
// level, and that reach v in the level being built. All three are zero between sweeps.
type msbfs struct {
	seen, visit, next []uint64
	frontier, grown   []int32
	touched           []int32 // nodes whose seen word is non-zero, to clear after a sweep
	direction         int     // directionAuto, or one step kind forced (tests)
	hist              []int64 // ordered pairs per distance, accumulated over all sweeps
	sources           []int32 // the current batch's sources (scratch)
}

// sourceSums are one BFS source's sums over the nodes it reaches: how many, the sum of their
// distances and the sum of the inverse distances.
type sourceSums struct {
	reached, dist int64
	inv           float64
}

const (
	directionAuto = iota
	topDownOnly
	bottomUpOnly
)

// bottomUpRatio: a level runs bottom-up when its frontier's edges exceed 1/bottomUpRatio of all
// adjacency entries (Beamer et al.'s α = 14 heuristic, simplified to the whole edge count; on
// the C2 graph this turns levels 2 and 3 bottom-up).
const bottomUpRatio = 14

func newMSBFS(n int) *msbfs {
	return &msbfs{
		seen: make([]uint64, n), visit: make([]uint64, n), next: make([]uint64, n),
		frontier: make([]int32, 0, n), grown: make([]int32, 0, n), touched: make([]int32, 0, n),
	}
}

// sweep runs the breadth-first searches from sources lo..hi−1 (at most 64) together and adds
// the number of (source, target) pairs found at each distance to b.hist.
func (b *msbfs) sweep(off []int64, adj []int32, lo, hi int) {
	src := b.sources[:0]
	for s := lo; s < hi; s++ {
		src = append(src, int32(s))
	}
	b.sources = src
	b.sweepFrom(off, adj, src)
}

// sweepFrom runs the breadth-first searches from the given distinct sources (at most 64)
// together, as sweep does.
func (b *msbfs) sweepFrom(off []int64, adj []int32, sources []int32) {
	seen, visit, next := b.seen, b.visit, b.next
	frontier := b.frontier[:0]
	for k, s := range sources {
		bit := uint64(1) << uint(k)
		seen[s] |= bit
		visit[s] |= bit
		frontier = append(frontier, s)
	}
	touched := append(b.touched[:0], frontier...)
	n := len(off) - 1
	all := ^uint64(0) >> uint(64-len(sources)) // one bit per source of this batch
	frontierEdges := int64(0)
	for _, v := range frontier {
		frontierEdges += off[v+1] - off[v]
	}
	for d := 1; len(frontier) > 0; d++ {
		grown := b.grown[:0]
		bottomUp := b.direction == bottomUpOnly ||
			(b.direction == directionAuto && frontierEdges*bottomUpRatio > off[n])
		if bottomUp {
			// Bottom-up step (Beamer et al. 2012, in MS-BFS form, Then et al. §4.2): every node
			// still missing some searches gathers the frontier bits of its neighbours, stopping
			// as soon as nothing is missing. Cheaper than pushing when the frontier is large.
			for u := 0; u < n; u++ {
				su := seen[u]
				if su == all {
					continue
				}
				var acc uint64
				for _, v := range adj[off[u]:off[u+1]] {
					acc |= visit[v]
					if acc|su == all {
						break
					}
				}
				if nw := acc &^ su; nw != 0 {
					next[u] = nw
					grown = append(grown, int32(u))
				}
			}
		} else {
			// Top-down step: each frontier node pushes its new searches to neighbours that those
			// searches have not seen yet (Then et al., Listing 2).
			for _, v := range frontier {
				reach := visit[v]
				for _, u := range adj[off[v]:off[v+1]] {
					if nw := reach &^ seen[u]; nw != 0 {
						if next[u] == 0 {
							grown = append(grown, u)
						}
						next[u] |= nw
					}
				}
			}
		}
		frontierEdges = 0
		var found int64
		for _, v := range frontier {
			visit[v] = 0
		}
		for _, u := range grown {
			nw := next[u]
			next[u] = 0
			if seen[u] == 0 {
				touched = append(touched, u)
			}
			seen[u] |= nw
			visit[u] = nw
			found += int64(bits.OnesCount64(nw))
			frontierEdges += off[u+1] - off[u]
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
		visit[v] = 0
	}
	for _, v := range touched {
		seen[v] = 0
	}
	b.frontier = frontier[:0]
	b.touched = touched[:0]
}

// PathEstimate is L_p and E_glob estimated from the breadth-first searches of a random sample
// of sources, with standard errors (docs/algorithms.md, "Sampled path lengths"). With every
// node as a source the values are exact and the standard errors 0.
type PathEstimate struct {
	CharacteristicPathLength   float64 `json:"characteristic_path_length"`
	CharacteristicPathLengthSE float64 `json:"characteristic_path_length_se"`
	GlobalEfficiency           float64 `json:"global_efficiency"`
	GlobalEfficiencySE         float64 `json:"global_efficiency_se"`
	Sources                    int     `json:"sources"` // sources searched (N: exact)
	Exact                      bool    `json:"exact"`
}

// SampledShortestPaths estimates L_p and E_glob from BFS trees of a random sample of sources.
// Sources outside the largest component L are all searched (their trees are small, and a rare
// isolated node drawn or missed would swing the estimate: the sample's spread would no longer
// describe its error); sources distinct nodes of L (N_L nodes) are drawn uniformly without
// replacement (PCG stream (seed, stream)). Every source in L reaches the same N_L − 1 nodes, so
// with D_s and I_s the sums of the distances from s and of their inverses:
//
//	L̂_p = (D_out + N_L · D̄) / (C_out + N_L (N_L − 1)),  Ê_glob = (I_out + N_L · Ī) / (N (N − 1))
//
// where D_out, C_out, I_out are the exact sums over the sources outside L and D̄, Ī estimate the
// means over L by regression on two auxiliaries known for every node, the degree k_s and the
// sum of its neighbours' degrees (which bound the nodes at distance 1 and 2): ȳ_reg = ȳ +
// bᵀ(X̄ − x̄) with b the sample's least-squares slopes, SE² = (1 − n/N_L) Σ e_s² / (n (n − 3)) from
// the residuals e_s (Cochran, Sampling Techniques, 3rd ed., §7.1–7.3 and §7.9; sampling without
// replacement). Distances from a node follow its degree closely, so this cuts the standard
// error several-fold against the plain sample mean. When sources ≥ N_L every node is searched:
// exact values, SE 0.
func SampledShortestPaths(ctx context.Context, g *Graph, sources int, seed, stream uint64) (PathEstimate, error) {
	return sampledShortestPaths(ctx, g, sources, seed, stream, perSourceSums, ShortestPaths)
}

// SourceSums are one BFS source's sums over the nodes it reaches: how many, the sum of their
// distances and the sum of their inverse distances (an Accelerator's per-source searches).
type SourceSums struct {
	Reached, Dist int64
	Inv           float64
}

// SampledShortestPathsWith is SampledShortestPaths with the breadth-first searches done by
// sums (each listed source's SourceSums, in the order given) and, when the sample would cover
// the whole largest component, by exact; the sample and the estimators are the same, so an
// Accelerator's searches give the CPU's estimate.
func SampledShortestPathsWith(ctx context.Context, g *Graph, sources int, seed, stream uint64,
	sums func(ctx context.Context, g *Graph, list []int32) ([]SourceSums, error),
	exact func(ctx context.Context, g *Graph) (PathStats, error)) (PathEstimate, error) {
	per := func(ctx context.Context, g *Graph, list []int32) ([]sourceSums, error) {
		s, err := sums(ctx, g, list)
		if err != nil {
			return nil, err
		}
		out := make([]sourceSums, len(s))
		for i, v := range s {
			out[i] = sourceSums{reached: v.Reached, dist: v.Dist, inv: v.Inv}
		}
		return out, nil
	}
	all := func(ctx context.Context, g *Graph, _ progress.Reporter) (PathStats, error) { return exact(ctx, g) }
	return sampledShortestPaths(ctx, g, sources, seed, stream, per, all)
}

// PathStatsFromHistogram turns hist[d], the number of ordered pairs (s, t), s ≠ t, at distance
// d, into g's PathStats, as ShortestPaths does (an Accelerator's exact searches).
func PathStatsFromHistogram(g *Graph, hist []int64) PathStats {
	ps := pathStatsFromHistogram(hist, g.N)
	ps.Components, _, ps.LargestComponentShare = LargestComponent(g)
	return ps
}

func sampledShortestPaths(ctx context.Context, g *Graph, sources int, seed, stream uint64,
	sums func(context.Context, *Graph, []int32) ([]sourceSums, error),
	exact func(context.Context, *Graph, progress.Reporter) (PathStats, error)) (PathEstimate, error) {
	if g == nil {
		return PathEstimate{}, errors.New("graph: shortest paths of a nil graph")
	}
	n := g.N
	label, sizes := Components(g)
	big := 0
	for c, sz := range sizes {
		if sz > sizes[big] {
			big = c
		}
	}
	var inL, out []int32
	for v := 0; v < n; v++ {
		if len(sizes) > 0 && label[v] == int32(big) {
			inL = append(inL, int32(v))
		} else {
			out = append(out, int32(v))
		}
	}
	if sources <= 0 || sources >= len(inL) {
		ps, err := exact(ctx, g, nil)
		return PathEstimate{CharacteristicPathLength: ps.CharacteristicPathLength, GlobalEfficiency: ps.GlobalEfficiency,
			Sources: n, Exact: true}, err
	}
	// A partial Fisher–Yates shuffle of L's nodes draws the sample.
	rng := rand.New(rand.NewPCG(seed, stream))
	for i := 0; i < sources; i++ {
		j := i + rng.IntN(len(inL)-i)
		inL[i], inL[j] = inL[j], inL[i]
	}
	list := append(out, inL[:sources]...) // exact sources first, then the sample
	all, err := sums(ctx, g, list)
	if err != nil {
		return PathEstimate{}, err
	}
	// The auxiliaries of every node of L, for their means, and of the sample.
	aux := func(v int32) [2]float64 {
		var s2 float64
		for _, u := range g.Neighbors(int(v)) {
			s2 += float64(g.Degree(int(u)))
		}
		return [2]float64{float64(g.Degree(int(v))), s2}
	}
	var popMean [2]float64
	for _, v := range inL {
		a := aux(v)
		popMean[0] += a[0]
		popMean[1] += a[1]
	}
	popMean[0] /= float64(len(inL))
	popMean[1] /= float64(len(inL))
	x := make([][2]float64, sources)
	for i, v := range inL[:sources] {
		x[i] = aux(v)
	}
	return estimateFromSources(all[:len(out)], all[len(out):], x, popMean, len(inL), n), nil
}

// perSourceSums runs MS-BFS from the given distinct sources, 128 per sweep over all cores (as
// the exact search: one pass over a row serves twice the searches of a 64-source sweep), and
// returns each source's sums in the order given.
func perSourceSums(ctx context.Context, g *Graph, list []int32) ([]sourceSums, error) {
	sums := make([]sourceSums, len(list))
	workers := workerCount((len(list) + 127) / 128)
	bfs := make([]*msbfs128, workers)
	for w := range bfs {
		bfs[w] = newMSBFS128(g.N)
		bfs[w].perSource = new([128]sourceSums)
	}
	err := forEachChunk(ctx, len(list), 128, workers, false, func(w, lo, hi int) error {
		b := bfs[w]
		*b.perSource = [128]sourceSums{}
		b.sweepFrom(g.Offsets, g.Adj, list[lo:hi])
		copy(sums[lo:hi], b.perSource[:hi-lo])
		return nil
	})
	return sums, err
}

// estimateFromSources applies SampledShortestPaths' estimators: out holds the exact sums of
// every source outside the largest component, sample those of a random sample of its nL
// nodes, x the sample's auxiliaries and popMean their means over all nL nodes; n is the
// number of nodes. With nil x the plain sample means are used.
func estimateFromSources(out, sample []sourceSums, x [][2]float64, popMean [2]float64, nL, n int) PathEstimate {
	est := PathEstimate{Sources: len(out) + len(sample)}
	var dOut, cOut, iOut float64
	for _, s := range out {
		dOut += float64(s.dist)
		cOut += float64(s.reached)
		iOut += s.inv
	}
	d := make([]float64, len(sample))
	inv := make([]float64, len(sample))
	for i, s := range sample {
		d[i], inv[i] = float64(s.dist), s.inv
	}
	mD, seD := regressionMean(d, x, popMean, nL)
	mI, seI := regressionMean(inv, x, popMean, nL)
	pairs := cOut + float64(nL)*float64(nL-1)
	if pairs > 0 {
		est.CharacteristicPathLength = (dOut + float64(nL)*mD) / pairs
		est.CharacteristicPathLengthSE = float64(nL) * seD / pairs
	}
	if n > 1 {
		est.GlobalEfficiency = (iOut + float64(nL)*mI) / (float64(n) * float64(n-1))
		est.GlobalEfficiencySE = float64(nL) * seI / (float64(n) * float64(n-1))
	}
	return est
}

// regressionMean estimates the mean of y over a population of size pop from a sample without
// replacement, by linear regression on the auxiliaries x whose population means are popMean
// (Cochran §7.9), and its standard error. With nil x, too small a sample for the regression
// or a singular design it falls back to the sample mean and its standard error.
func regressionMean(y []float64, x [][2]float64, popMean [2]float64, pop int) (mean, se float64) {
	k := len(y)
	if k == 0 {
		return 0, 0
	}
	fpc := 1 - float64(k)/float64(pop)
	var my float64
	for _, v := range y {
		my += v
	}
	my /= float64(k)
	plain := func() (float64, float64) {
		if k < 2 {
			return my, 0
		}
		var ss float64
		for _, v := range y {
			ss += (v - my) * (v - my)
		}
		return my, math.Sqrt(fpc * ss / float64(k-1) / float64(k))
	}
	if x == nil || k < 8 {
		return plain()
	}
	var mx [2]float64
	for _, xi := range x {
		mx[0] += xi[0]
		mx[1] += xi[1]
	}
	mx[0] /= float64(k)
	mx[1] /= float64(k)
	// Normal equations of the centred regression y − ȳ = bᵀ(x − x̄), solved by Cramer's rule.
	var s00, s01, s11, s0y, s1y float64
	for i, xi := range x {
		a, b, c := xi[0]-mx[0], xi[1]-mx[1], y[i]-my
		s00 += a * a
		s01 += a * b
		s11 += b * b
		s0y += a * c
		s1y += b * c
	}
	det := s00*s11 - s01*s01
	if !(math.Abs(det) > 1e-12*s00*s11) || s00 == 0 || s11 == 0 {
		return plain()
	}
	b0 := (s0y*s11 - s1y*s01) / det
	b1 := (s1y*s00 - s0y*s01) / det
	var ss float64
	for i, xi := range x {
		e := y[i] - my - b0*(xi[0]-mx[0]) - b1*(xi[1]-mx[1])
		ss += e * e
	}
	mean = my + b0*(popMean[0]-mx[0]) + b1*(popMean[1]-mx[1])
	return mean, math.Sqrt(fpc * ss / float64(k-3) / float64(k))
}
