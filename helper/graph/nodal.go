package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/hubscope/hubscope/helper/progress"
)

// Degrees returns k_i, the number of neighbours of every node.
func Degrees(g *Graph) []int {
	k := make([]int, g.N)
	for i := range k {
		k[i] = g.Degree(i)
	}
	return k
}

// Strengths returns s_i = Σ_j w_ij (Wu et al. 2010, eq. 3), summed in float64 in neighbour
// order. For a binary graph the strength is the degree.
func Strengths(g *Graph) []float64 {
	s := make([]float64, g.N)
	for i := range s {
		if g.Weights == nil {
			s[i] = float64(g.Degree(i))
			continue
		}
		for _, w := range g.Weights[g.Offsets[i]:g.Offsets[i+1]] {
			s[i] += float64(w)
		}
	}
	return s
}

// Mean is the network average of a nodal measure, 0 for no nodes: the Watts–Strogatz
// clustering coefficient C = ⟨C_i⟩ and the mean local efficiency ⟨E_loc,i⟩ are this average
// (docs/algorithms.md, "Network measures").
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// LocalEfficiencies returns every node's local efficiency (Latora & Marchiori 2001): the global
// efficiency of the subgraph induced by its neighbours (node i itself excluded),
// E_loc,i = 1/(k_i(k_i−1)) Σ_{j≠h ∈ N_i} 1/d^{(i)}_jh, with d^{(i)} distances inside that subgraph
// and 0 for k_i < 2. This is networkx's local_efficiency per node and, for binary undirected
// graphs, the Brain Connectivity Toolbox's efficiency_bin(A, 1). Each neighbourhood is built as
// a bit matrix from the upper halves of its members' rows, split into its connected components,
// and each component's distances come from the same bit-parallel BFS as ShortestPaths
// (docs/algorithms.md, "Local efficiency"). The distance counts are exact integers, so the
// result does not depend on the method or the schedule. Parallel over nodes; progress counts
// nodes.
func LocalEfficiencies(ctx context.Context, g *Graph, rep progress.Reporter) ([]float64, error) {
	rep = progress.OrDiscard(rep)
	if g == nil {
		return nil, errors.New("graph: local efficiency of a nil graph")
	}
	// Node indices below 2¹⁶ are read in 16 bits: the neighbourhoods are built by streaming
	// Σ k_j over the neighbours' rows, and half the bytes is half the memory traffic.
	if g.N <= 1<<16 {
		adj := make([]uint16, len(g.Adj))
		for p, v := range g.Adj {
			adj[p] = uint16(v)
		}
		return localEfficiencies(ctx, g, adj, rep)
	}
	return localEfficiencies(ctx, g, g.Adj, rep)
}

// maxLocalBitWords caps one neighbourhood's bit matrix ((k+1)² bits); larger neighbourhoods
// (k > ~8,000) are built as adjacency lists by looking every member's row up in a marker array.
var maxLocalBitWords = 1 << 20

func localEfficiencies[I uint16 | int32](ctx context.Context, g *Graph, adj []I, rep progress.Reporter) ([]float64, error) {
	n := g.N
	maxDeg := 0
	for i := 0; i < n; i++ {
		maxDeg = max(maxDeg, g.Degree(i))
	}
	rep.Start("local efficiency", int64(n))
	eloc := make([]float64, n)
	workers := workerCount((n + 63) / 64)
	ws := make([]*localScratch[I], workers)
	for w := range ws {
		ws[w] = newLocalScratch[I](n, maxDeg)
	}
	err := forEachChunk(ctx, n, 64, workers, false, func(w, lo, hi int) error {
		s := ws[w]
		for i := lo; i < hi; i++ {
			k := g.Degree(i)
			if k < 2 {
				continue
			}
			s.bfs.hist = s.bfs.hist[:0]
			s.neighbourhood(g, adj, i)
			var inv float64
			for d := 1; d < len(s.bfs.hist); d++ {
				inv += float64(s.bfs.hist[d]) / float64(d)
			}
			eloc[i] = inv / (float64(k) * float64(k-1))
		}
		rep.Add(int64(hi - lo))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return eloc, nil
}

// localScratch is one worker's space for LocalEfficiencies.
type localScratch[I uint16 | int32] struct {
	local []I      // local[v] = position of v in the current neighbourhood + 1, else 0
	bits  []uint64 // the neighbourhood's bit matrix, rows and columns 1..k (0 is a sink)
	comp  []int32  // a component's members (local positions, 1-based)
	pos   []int32  // pos[x] = x's index inside its component's CSR
	left  []uint64 // members not yet given a component
	off   []int64
	adj   []int32
	bfs   *msbfs
}

func newLocalScratch[I uint16 | int32](n, maxDeg int) *localScratch[I] {
	return &localScratch[I]{local: make([]I, n), comp: make([]int32, 0, maxDeg), pos: make([]int32, maxDeg+1),
		off: make([]int64, maxDeg+1), bfs: newMSBFS(maxDeg)}
}

// neighbourhood adds the ordered pairs at each distance inside node i's neighbourhood subgraph
// to s.bfs.hist.
func (s *localScratch[I]) neighbourhood(g *Graph, adj []I, i int) {
	nb := g.Neighbors(i)
	k := len(nb)
	wpr := (k + 1 + 63) / 64 // words per row: columns 0..k
	if (k+1)*wpr > maxLocalBitWords {
		s.neighbourhoodLists(g, adj, i)
		return
	}
	for li, v := range nb {
		s.local[v] = I(li + 1)
	}
	if cap(s.bits) < (k+1)*wpr {
		s.bits = make([]uint64, (k+1)*wpr)
	}
	bm := s.bits[:(k+1)*wpr]
	clear(bm)
	// Every edge {v, u} inside N_i is met once, from its lower end v (u > v: the part of v's
	// sorted row past v), and set in both rows. A neighbour of v outside N_i has local 0 and
	// lands in row or column 0, which nothing reads: no branch on membership in the hot loop.
	for li, v := range nb {
		x := li + 1
		a, b := g.Offsets[v], g.Offsets[v+1]
		row := adj[a:b]
		lo, hi := 0, len(row)
		for lo < hi { // first u > v
			m := int(uint(lo+hi) >> 1)
			if int(row[m]) <= int(v) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		rx := bm[x*wpr : (x+1)*wpr]
		xw, xb := x>>6, uint64(1)<<uint(x&63)
		for _, u := range row[lo:] {
			y := int(s.local[u])
			rx[y>>6] |= 1 << uint(y&63)
			bm[y*wpr+xw] |= xb
		}
	}
	for _, v := range nb {
		s.local[v] = 0
	}
	// Connected components by search over the bit rows; each component of ≥ 2 members gets its
	// own CSR and MS-BFS, so a search never scans members it cannot reach.
	if cap(s.left) < wpr {
		s.left = make([]uint64, wpr)
	}
	left := s.left[:wpr]
	for w := range left {
		left[w] = ^uint64(0)
	}
	left[0] &^= 1 // column 0 is the sink
	if r := (k + 1) & 63; r != 0 {
		left[wpr-1] &= uint64(1)<<uint(r) - 1
	}
	for w0 := 0; w0 < wpr; w0++ {
		for left[w0] != 0 {
			root := w0<<6 | bits.TrailingZeros64(left[w0])
			left[w0] &^= 1 << uint(root&63)
			comp := append(s.comp[:0], int32(root))
			for q := 0; q < len(comp); q++ {
				r := bm[int(comp[q])*wpr : int(comp[q]+1)*wpr]
				for w := w0; w < wpr; w++ { // no member of this component lies below root's word
					nw := r[w] & left[w]
					if nw == 0 {
						continue
					}
					left[w] &^= nw
					for ; nw != 0; nw &= nw - 1 {
						comp = append(comp, int32(w<<6|bits.TrailingZeros64(nw)))
					}
				}
			}
			s.comp = comp
			s.component(bm, wpr, comp)
		}
	}
}

// component runs the distance count on one connected component of the neighbourhood's bit
// matrix bm (members comp, local positions).
func (s *localScratch[I]) component(bm []uint64, wpr int, comp []int32) {
	c := len(comp)
	switch c {
	case 1:
		return
	case 2:
		s.addHist(1, 2)
		return
	}
	for p, x := range comp {
		s.pos[x] = int32(p)
	}
	s.adj = s.adj[:0]
	complete := true
	for p, x := range comp {
		s.off[p] = int64(len(s.adj))
		r := bm[int(x)*wpr : int(x+1)*wpr]
		for w, word := range r {
			if w == 0 {
				word &^= 1 // column 0: the neighbours outside N_i
			}
			for ; word != 0; word &= word - 1 {
				s.adj = append(s.adj, s.pos[w<<6|bits.TrailingZeros64(word)])
			}
		}
		complete = complete && len(s.adj)-int(s.off[p]) == c-1
	}
	s.off[c] = int64(len(s.adj))
	if complete { // a clique: every pair at distance 1
		s.addHist(1, int64(c)*int64(c-1))
		return
	}
	for src := 0; src < c; src += 64 {
		s.bfs.sweep(s.off[:c+1], s.adj, src, min(src+64, c))
	}
}

func (s *localScratch[I]) addHist(d int, count int64) {
	for len(s.bfs.hist) <= d {
		s.bfs.hist = append(s.bfs.hist, 0)
	}
	s.bfs.hist[d] += count
}

// neighbourhoodLists is neighbourhood for neighbourhoods too large for a bit matrix: the
// induced subgraph as adjacency lists (every member's row looked up in the marker array), one
// MS-BFS over all of it.
func (s *localScratch[I]) neighbourhoodLists(g *Graph, adj []I, i int) {
	nb := g.Neighbors(i)
	k := len(nb)
	for li, v := range nb {
		s.local[v] = I(li + 1)
	}
	s.adj = s.adj[:0]
	for li, v := range nb {
		s.off[li] = int64(len(s.adj))
		for _, u := range adj[g.Offsets[v]:g.Offsets[v+1]] {
			if lu := s.local[u]; lu != 0 {
				s.adj = append(s.adj, int32(lu)-1)
			}
		}
	}
	s.off[k] = int64(len(s.adj))
	for _, v := range nb {
		s.local[v] = 0
	}
	for src := 0; src < k; src += 64 {
		s.bfs.sweep(s.off[:k+1], s.adj, src, min(src+64, k))
	}
}

// EigenvectorOptions tunes EigenvectorCentrality; the zero value asks for the defaults.
type EigenvectorOptions struct {
	MaxIter   int     // default 10000
	Tolerance float64 // max-norm change between iterates of the max-normalised vector; default 1e-13
	// Accelerator runs the power iteration when it is a PowerIterator (nil: CPU).
	Accelerator Accelerator
}

// PowerIterator is implemented by an Accelerator that runs EigenvectorCentrality's power
// iteration x ← (A+I)x / max_i((A+I)x)_i from x0 (max-normalised) until the max-norm change
// between iterates is below tol or maxIter iterations were made, with the host's arithmetic
// (the same iterates bit for bit). It returns the last iterate, its normaliser m (λ + 1), the
// last change and whether it converged.
type PowerIterator interface {
	PowerIterate(ctx context.Context, g *Graph, x0 []float64, maxIter int, tol float64) (x []float64, m, change float64, converged bool, err error)
}

// EigenvectorCentrality returns the leading eigenvector x of the adjacency matrix A, scaled so
// that max_i x_i = 1 (igraph's eigenvector_centrality(scale=True); divide by ‖x‖₂ for networkx's
// convention), with its eigenvalue λ. It runs power iteration on A + I, which has the same
// eigenvectors, eigenvalues shifted by one and, unlike A, no −λ_max competitor on bipartite
// graphs; the start vector is the degree vector, as in igraph. On a disconnected graph the
// iteration converges to the component with the largest eigenvalue (other components → 0), as
// ARPACK does. A graph with no edges has no leading eigenvector; igraph then returns all ones,
// and so does this function (with λ = 0). When the leading eigenvalue is shared (two identical
// components), the eigenvector is not unique and the result depends on the start vector, as
// any solver's does. If the iteration limit is reached, the last iterate is returned together
// with an error wrapping ErrNotConverged. Weights are ignored (binary centrality).
func EigenvectorCentrality(ctx context.Context, g *Graph, opt EigenvectorOptions) (x []float64, lambda float64, err error) {
	if g == nil {
		return nil, 0, errors.New("graph: eigenvector centrality of a nil graph")
	}
	if opt.MaxIter <= 0 {
		opt.MaxIter = 10000
	}
	if opt.Tolerance <= 0 {
		opt.Tolerance = 1e-13
	}
	n := g.N
	x = make([]float64, n)
	if g.Edges() == 0 {
		for i := range x {
			x[i] = 1
		}
		return x, 0, nil
	}
	for i := range x {
		x[i] = float64(g.Degree(i))
	}
	scaleMax(x)
	var pi PowerIterator = CPU{}
	if p, ok := opt.Accelerator.(PowerIterator); ok {
		pi = p
	}
	x, m, change, converged, err := pi.PowerIterate(ctx, g, x, opt.MaxIter, opt.Tolerance)
	if err != nil {
		return nil, 0, err
	}
	if !converged {
		return x, m - 1, eigenvectorNotConverged(opt, change)
	}
	return x, m - 1, nil
}

// PowerIterate is EigenvectorCentrality's power iteration on the host (PowerIterator).
func (CPU) PowerIterate(ctx context.Context, g *Graph, x0 []float64, maxIter int, tol float64) ([]float64, float64, float64, bool, error) {
	n := g.N
	x := append([]float64(nil), x0...)
	y := make([]float64, n)
	var m, lastChange float64
	for it := 0; it < maxIter; it++ {
		if it%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, 0, false, err
			}
		}
		for i := 0; i < n; i++ {
			s := x[i]
			for _, j := range g.Neighbors(i) {
				s += x[j]
			}
			y[i] = s
		}
		// The max entry of (A+I)x with max(x) = 1 converges to λ+1.
		m = scaleMax(y)
		var change float64
		for i := range x {
			change = max(change, math.Abs(y[i]-x[i]))
		}
		x, y = y, x
		lastChange = change
		if change < tol {
			return x, m, change, true, nil
		}
	}
	return x, m, lastChange, false, nil
}

func eigenvectorNotConverged(opt EigenvectorOptions, change float64) error {
	return fmt.Errorf("%w: %d power iterations left a change of %.3g (tolerance %g); the two leading eigenvalues are too close to separate", ErrNotConverged, opt.MaxIter, change, opt.Tolerance)
}

// ErrNotConverged is wrapped by iterative measures that stopped at their iteration limit; they
// still return their last iterate, which the caller may keep with a warning.
var ErrNotConverged = errors.New("graph: iteration did not converge")

// scaleMax divides x by its largest entry and returns that entry.
func scaleMax(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, v)
	}
	if m > 0 {
		for i := range x {
			x[i] /= m
		}
	}
	return m
}

// DegreeAssortativity is Newman's (2002) degree assortativity r, the Pearson correlation of the
// degrees at either end of an edge, each edge counted in both directions:
// r = [⟨jk⟩ − ⟨(j+k)/2⟩²] / [⟨(j²+k²)/2⟩ − ⟨(j+k)/2⟩²], as igraph's
// assortativity_degree(directed=False). ok is false when r is undefined (no edges, or every edge
// joins nodes of one degree: zero variance), where igraph returns NaN.
func DegreeAssortativity(g *Graph) (r float64, ok bool) {
	m := float64(g.Edges())
	if m == 0 {
		return 0, false
	}
	// Sums over edges (i<j) of integers, exact in float64 while they stay below 2⁵³.
	var sjk, sj, sjj float64
	for i := 0; i < g.N; i++ {
		ki := float64(g.Degree(i))
		for _, j := range g.Neighbors(i) {
			if int(j) <= i {
				continue
			}
			kj := float64(g.Degree(int(j)))
			sjk += ki * kj
			sj += ki + kj
			sjj += ki*ki + kj*kj
		}
	}
	mean := sj / (2 * m)
	num := sjk/m - mean*mean
	den := sjj/(2*m) - mean*mean
	if den <= 0 || math.Abs(den) < 1e-12*math.Abs(sjj/(2*m)) {
		return 0, false
	}
	return num / den, true
}
