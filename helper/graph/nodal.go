package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

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
// a bit matrix from the upper halves of its members' rows and split into its connected
// components; distance 1 is the rows' bit count, distance 2 a search per member over the bit
// rows that stops once every member is reached, and the rare pairs at distance ≥ 3 are reached
// level by level (docs/algorithms.md, "Local efficiency"). The distance counts are exact
// integers, so the result does not depend on the method, the numbering or the schedule.
// Parallel over nodes; progress counts nodes.
func LocalEfficiencies(ctx context.Context, g *Graph, rep progress.Reporter) ([]float64, error) {
	rep = progress.OrDiscard(rep)
	if g == nil {
		return nil, errors.New("graph: local efficiency of a nil graph")
	}
	// Node indices below 2¹⁶ are read in 16 bits: the neighbourhoods are built by streaming
	// the neighbours' rows, and half the bytes is half the memory traffic.
	if g.N <= 1<<16 {
		off, adj, order := degreeOrdered[uint16](g, false)
		return unorder(localEfficiencies(ctx, g.N, off, adj, rep))(order)
	}
	if len(g.Adj) <= maxRenumberedEntries {
		off, adj, order := degreeOrdered[int32](g, false)
		return unorder(localEfficiencies(ctx, g.N, off, adj, rep))(order)
	}
	return localEfficiencies(ctx, g.N, g.Offsets, g.Adj, rep) // as numbered: no second copy
}

// maxRenumberedEntries caps the adjacency entries of a graph over 2¹⁶ nodes that
// LocalEfficiencies and ShortestPaths copy in degree order (4 bytes each); larger graphs keep
// their numbering.
const maxRenumberedEntries = 1 << 28

// unorder maps values of the degree-ordered nodes back to the original numbering.
func unorder(x []float64, err error) func(order []int32) ([]float64, error) {
	return func(order []int32) ([]float64, error) {
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(x))
		for r, v := range order {
			out[v] = x[r]
		}
		return out, nil
	}
}

// degreeOrdered returns g's adjacency (off, adj) with the nodes renumbered by increasing degree
// (decreasing when descending; ties by index) and order, the original index of each new node. Rows come out sorted: each
// new node r is appended to its neighbours' rows in increasing r. In this numbering the part
// of a row past its own node holds the neighbours of equal or higher degree, so that building
// a neighbourhood from those parts streams each edge inside it from its lower-degree end:
// Σ over edges of min(k_u, k_v) entries in all, against Σ max for the opposite order.
func degreeOrdered[I uint16 | int32](g *Graph, descending bool) ([]int64, []I, []int32) {
	n := g.N
	order := make([]int32, n)
	for v := range order {
		order[v] = int32(v)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if descending {
			return g.Degree(int(b)) - g.Degree(int(a))
		}
		return g.Degree(int(a)) - g.Degree(int(b))
	})
	newID := make([]int32, n)
	for r, v := range order {
		newID[v] = int32(r)
	}
	off := make([]int64, n+1)
	for r, v := range order {
		off[r+1] = off[r] + int64(g.Degree(int(v)))
	}
	adj := make([]I, len(g.Adj))
	fill := slices.Clone(off[:n])
	for r, v := range order {
		for _, u := range g.Neighbors(int(v)) {
			nu := newID[u]
			adj[fill[nu]] = I(r)
			fill[nu]++
		}
	}
	return off, adj, order
}

// maxLocalBitWords caps one neighbourhood's bit matrix ((k+1)² bits); larger neighbourhoods
// (k > ~8,000) are built as adjacency lists by looking every member's row up in a marker array.
var maxLocalBitWords = 1 << 20

// localEfficiencies is LocalEfficiencies on the adjacency (off, adj) of n nodes, rows sorted.
func localEfficiencies[I uint16 | int32](ctx context.Context, n int, off []int64, adj []I, rep progress.Reporter) ([]float64, error) {
	maxDeg := 0
	for i := 0; i < n; i++ {
		maxDeg = max(maxDeg, int(off[i+1]-off[i]))
	}
	rep.Start("local efficiency", int64(n))
	// above[v]: where v's row passes v (the part of the row a neighbourhood reads, see
	// neighbourhood), found once instead of once per neighbourhood holding v.
	above := make([]int64, n)
	for v := 0; v < n; v++ {
		lo, _ := slices.BinarySearch(adj[off[v]:off[v+1]], I(v)) // v is not in its own row
		above[v] = off[v] + int64(lo)
	}
	eloc := make([]float64, n)
	workers := workerCount((n + 63) / 64)
	ws := make([]*localScratch[I], workers)
	for w := range ws {
		ws[w] = newLocalScratch[I](n, maxDeg)
	}
	err := forEachChunk(ctx, n, 64, workers, false, func(w, lo, hi int) error {
		s := ws[w]
		for i := lo; i < hi; i++ {
			k := int(off[i+1] - off[i])
			if k < 2 {
				continue
			}
			s.bfs.hist = s.bfs.hist[:0]
			s.neighbourhood(off, adj, above, i)
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

// transposeLocalWords is the bit-matrix size (words) from which a neighbourhood is built as a
// lower triangle and then symmetrised by block transposes (k ≳ 250). On C5 (two alternations,
// load 5–10) from 0, 1,024 and 4,096 words: 8.4–10.3 CPU-s for all local efficiencies; from
// 16,384: 10.3; never: 11.2–12.2.
var transposeLocalWords = 1024

// symmetrizeLower sets bit (c, r) wherever bit (r, c) is set below the diagonal (c < r) of the
// rows×rows bit matrix bm (wpr words per row; bits of row r beyond the diagonal zero on entry),
// one 64×64 block at a time: each block below the diagonal is read into 64 words, transposed
// and ORed into its mirror block, which reads and writes each row once per block.
func symmetrizeLower(bm []uint64, rows, wpr int) {
	var blk [64]uint64
	for bx := 0; bx < wpr; bx++ { // block row: matrix rows 64bx..
		rlo := bx << 6
		rhi := min(rlo+64, rows)
		for by := 0; by <= bx; by++ { // block column: word by of those rows
			var any uint64
			for r := rlo; r < rhi; r++ {
				w := bm[r*wpr+by]
				blk[r-rlo] = w
				any |= w
			}
			if any == 0 {
				continue
			}
			clear(blk[rhi-rlo:])
			transpose64(&blk)
			clo := by << 6
			chi := min(clo+64, rows)
			for c := clo; c < chi; c++ {
				bm[c*wpr+bx] |= blk[c-clo]
			}
		}
	}
}

// transpose64 transposes the 64×64 bit matrix a in place (bit c of a[r] ↔ bit r of a[c]), by
// swapping ever smaller off-diagonal blocks (Warren, Hacker's Delight, 2nd ed., §7–3).
func transpose64(a *[64]uint64) {
	m := uint64(0x00000000ffffffff)
	for j := 32; j != 0; j, m = j>>1, m^(m<<uint(j>>1)) {
		for k := 0; k < 64; k = (k + j + 1) &^ j {
			t := (a[k]>>uint(j) ^ a[k+j]) & m
			a[k] ^= t << uint(j)
			a[k+j] ^= t
		}
	}
}

// localScratch is one worker's space for LocalEfficiencies.
type localScratch[I uint16 | int32] struct {
	local []I      // local[v] = v's position (1..k) in the current neighbourhood, else 0
	bits  []uint64 // the neighbourhood's bit matrix, rows and columns 1..k (0 is a sink)
	comp  []int32  // a component's members (local positions, 1-based)
	left  []uint64 // members not yet given a component
	mask  []uint64 // the current component's members (zero between components)
	u     []uint64 // members a search has not reached yet
	f     []uint64 // the current search level
	next  []uint64 // the next search level
	pos   []int32  // pos[x] = x's index inside its component's CSR (componentBFS)
	off   []int64  // componentBFS's and neighbourhoodLists' CSR
	adj   []int32
	bfs   *msbfs // their searches; bfs.hist: the ordered pairs at each distance
}

func newLocalScratch[I uint16 | int32](n, maxDeg int) *localScratch[I] {
	return &localScratch[I]{local: make([]I, n), comp: make([]int32, 0, maxDeg), pos: make([]int32, maxDeg+1),
		off: make([]int64, maxDeg+1), bfs: newMSBFS(maxDeg)}
}

// neighbourhood adds the ordered pairs at each distance inside node i's neighbourhood subgraph
// to s.bfs.hist.
func (s *localScratch[I]) neighbourhood(off []int64, adj []I, above []int64, i int) {
	nb := adj[off[i]:off[i+1]]
	k := len(nb)
	wpr := (k + 1 + 63) / 64 // words per row: columns 0..k
	if (k+1)*wpr > maxLocalBitWords {
		s.neighbourhoodLists(off, adj, i)
		return
	}
	for li, v := range nb {
		s.local[v] = I(k - li) // the highest degree (last in nb) at position 1
	}
	if cap(s.bits) < (k+1)*wpr {
		s.bits = make([]uint64, (k+1)*wpr)
	}
	bm := s.bits[:(k+1)*wpr]
	clear(bm)
	// Positions run against the numbering: position 1 holds the highest degree, so that the
	// searches meet the best-connected members first (see search). Every edge {v, u} inside N_i
	// is met once, from its lower end v (u > v: the part of v's sorted row past v, see
	// degreeOrdered), and set in both rows. A neighbour of v outside N_i has local 0 and lands
	// in row or column 0, cleared below: no branch on membership in the hot loop.
	if (k+1)*wpr < transposeLocalWords {
		for li, v := range nb {
			x := k - li
			rx := bm[x*wpr : (x+1)*wpr]
			xw, xb := x>>6, uint64(1)<<uint(x&63)
			for _, u := range adj[above[v]:off[v+1]] {
				y := int(s.local[u])
				rx[y>>6] |= 1 << uint(y&63)
				bm[y*wpr+xw] |= xb
			}
		}
	} else {
		// A matrix past the first-level cache: the second bit of each edge, a write to a
		// random row, would miss it nearly every time. Only row x's own bits are set (the
		// lower triangle: u > v puts y below x), and the upper triangle is filled from them
		// by transposing 64×64 blocks.
		for li, v := range nb {
			x := k - li
			rx := bm[x*wpr : (x+1)*wpr]
			for _, u := range adj[above[v]:off[v+1]] {
				y := int(s.local[u])
				rx[y>>6] |= 1 << uint(y&63)
			}
		}
		symmetrizeLower(bm, k+1, wpr)
	}
	for _, v := range nb {
		s.local[v] = 0
	}
	// Connected components by search over the bit rows; each component of ≥ 2 members gets its
	// own searches, which never scan members they cannot reach.
	if cap(s.left) < wpr {
		s.left = make([]uint64, wpr)
		s.mask = make([]uint64, wpr)
		s.u = make([]uint64, wpr)
		s.f = make([]uint64, wpr)
		s.next = make([]uint64, wpr)
	}
	for x := 1; x <= k; x++ { // column 0 collected the neighbours outside N_i
		bm[x*wpr] &^= 1
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

// component adds the ordered pairs at each distance inside one connected component of the
// neighbourhood's bit matrix bm (members comp, local positions; bit 0 of every row cleared).
// Distance 1 is the rows' bit count. Distance 2 and beyond are counted per unordered pair,
// each member j searching only the members at positions below its own (see search): a
// member of low degree sits late and has few rows to remove, and a member of high degree has
// few members before it. The few members left at distance ≥ 3 are reached level by level
// (farther).
func (s *localScratch[I]) component(bm []uint64, wpr int, comp []int32) {
	c := len(comp)
	switch c {
	case 1:
		return
	case 2:
		s.addHist(1, 2)
		return
	}
	var links int64
	for _, x := range comp {
		for _, word := range bm[int(x)*wpr : int(x+1)*wpr] {
			links += int64(bits.OnesCount64(word))
		}
	}
	if links < int64(c)*int64(searchLocalDegree) {
		s.componentBFS(bm, wpr, comp)
		return
	}
	s.addHist(1, links)
	if links == int64(c)*int64(c-1) { // a clique: every pair at distance 1
		return
	}
	// The component's members as a bit row, and the span of words they occupy.
	mask := s.mask[:wpr]
	wlo, whi := wpr, 0
	for _, x := range comp {
		w := int(x) >> 6
		mask[w] |= 1 << uint(x&63)
		wlo, whi = min(wlo, w), max(whi, w+1)
	}
	var at2 int64 // unordered pairs at distance 2
	for _, j := range comp {
		reach, far := s.search(bm, wpr, j, j, wlo, whi)
		at2 += reach - far
		if far > 0 {
			// Some members below j lie at distance ≥ 3: search again over all of the
			// component, which gives the whole level 2, and count those below j level by level.
			_, far = s.search(bm, wpr, j, int32(whi*64), wlo, whi)
			s.farther(bm, wpr, j, wlo, whi, far)
		}
	}
	s.addHist(2, 2*at2)
	for _, x := range comp {
		mask[int(x)>>6] = 0
	}
}

// searchLocalDegree is the mean degree inside a component from which component searches it
// row by row (search); sparser components, where U would lose few members per row and many
// pairs lie at distance ≥ 3, run the MS-BFS over a compact adjacency instead (componentBFS).
// The row search costs about c²/2 word reads per component of c members and mean degree δ, the
// MS-BFS c/64 sweeps over its c·δ links per level, so the search pays from δ·levels ≳ 32. On
// C2's random network (mean local degree ~4) the search alone took 3× the MS-BFS's time; on C5
// (~80) a third of it.
var searchLocalDegree = 12

// componentBFS adds the ordered pairs at each distance inside one connected component of the
// bit matrix (members comp) by MS-BFS over the component's own adjacency lists, so a search
// never scans members it cannot reach.
func (s *localScratch[I]) componentBFS(bm []uint64, wpr int, comp []int32) {
	c := len(comp)
	for p, x := range comp {
		s.pos[x] = int32(p)
	}
	s.adj = s.adj[:0]
	for p, x := range comp {
		s.off[p] = int64(len(s.adj))
		for w, word := range bm[int(x)*wpr : int(x+1)*wpr] {
			for ; word != 0; word &= word - 1 {
				s.adj = append(s.adj, s.pos[w<<6|bits.TrailingZeros64(word)])
			}
		}
	}
	s.off[c] = int64(len(s.adj))
	for src := 0; src < c; src += 64 {
		s.bfs.sweep(s.off[:c+1], s.adj, src, min(src+64, c))
	}
}

// search finds which members at positions below to of j's component (s.mask, words
// wlo..whi−1) lie at distance 2 from j. It returns reach, the members below to that are
// neither j nor j's neighbours, and far, those of them not at distance 2, which s.u then
// holds. The members still unreached, U, first lose the rows of j's neighbours one by one, in
// position order (the best-connected first): in a dense neighbourhood a few rows leave U
// nearly empty. Once U holds no more members than j has rows left to remove, each member h
// left tests its own row against j's instead (a common neighbour puts h at distance 2), which
// in position order usually stops at the first word. Against the MS-BFS over the component's
// edges that this replaces (every edge scanned per 64 sources and level), it reads a few words
// per pair: on the C5 network 12 instead of 35 CPU-s for all local efficiencies.
func (s *localScratch[I]) search(bm []uint64, wpr int, j, to int32, wlo, whi int) (reach, far int64) {
	u, mask := s.u[:wpr], s.mask[:wpr]
	rj := bm[int(j)*wpr : int(j+1)*wpr]
	lo, hi := wlo, min(whi, int(to+63)>>6)
	if lo >= hi {
		return 0, 0
	}
	for w := lo; w < hi; w++ {
		u[w] = mask[w] &^ rj[w]
	}
	if r := to & 63; r != 0 && int(to)>>6 == hi-1 {
		u[hi-1] &= uint64(1)<<uint(r) - 1 // the positions below to
	}
	if jw := int(j) >> 6; jw >= lo && jw < hi {
		u[jw] &^= 1 << uint(j&63)
	}
	for w := lo; w < hi; w++ {
		reach += int64(bits.OnesCount64(u[w]))
	}
	if reach == 0 {
		return 0, 0
	}
	var deg int64
	for w := wlo; w < whi; w++ {
		deg += int64(bits.OnesCount64(rj[w]))
	}
	for u[lo] == 0 {
		lo++
	}
	for u[hi-1] == 0 {
		hi--
	}
	left := reach
rows:
	for w0 := wlo; w0 < whi; w0++ {
		for nb := rj[w0]; nb != 0; nb &= nb - 1 {
			x := w0<<6 | bits.TrailingZeros64(nb)
			rx := bm[x*wpr : (x+1)*wpr]
			left = 0
			for w := lo; w < hi; w++ {
				u[w] &^= rx[w]
				left += int64(bits.OnesCount64(u[w]))
			}
			deg--
			if left == 0 {
				return reach, 0
			}
			for u[lo] == 0 {
				lo++
			}
			for u[hi-1] == 0 {
				hi--
			}
			if left <= deg {
				break rows
			}
		}
	}
	if deg > 0 {
		for w0 := lo; w0 < hi; w0++ {
			for m := u[w0]; m != 0; m &= m - 1 {
				h := w0<<6 | bits.TrailingZeros64(m)
				rh := bm[h*wpr : (h+1)*wpr]
				for w := wlo; w < whi; w++ {
					if rh[w]&rj[w] != 0 {
						u[w0] &^= 1 << uint(h&63)
						left--
						break
					}
				}
			}
		}
	}
	return reach, left // the words of s.u in [wlo, min(whi, ⌈to/64⌉)) outside [lo, hi) are zero
}

// farther adds 2× the members above j at distance ≥ 3 from j (each unordered pair counted once,
// see component) to their distances' counts. s.u holds all far members of j's component (far
// of them, in words wlo..whi−1, after a search from 0); every other member but j and its row
// lies at distance 2. Level d+1 is the set of members left whose row meets level d.
func (s *localScratch[I]) farther(bm []uint64, wpr int, j int32, wlo, whi int, far int64) {
	u, mask, level, next := s.u[:wpr], s.mask[:wpr], s.f[:wpr], s.next[:wpr]
	rj := bm[int(j)*wpr : int(j+1)*wpr]
	for w := wlo; w < whi; w++ { // level 2: the component minus j, its row and U
		level[w] = mask[w] &^ rj[w] &^ u[w]
	}
	level[int(j)>>6] &^= 1 << uint(j&63)
	for d := 3; far > 0; d++ {
		var found, below int64
		for w0 := wlo; w0 < whi; w0++ {
			next[w0] = 0
			for m := u[w0]; m != 0; m &= m - 1 {
				h := w0<<6 | bits.TrailingZeros64(m)
				rh := bm[h*wpr : (h+1)*wpr]
				for w := wlo; w < whi; w++ {
					if rh[w]&level[w] != 0 {
						next[w0] |= 1 << uint(h&63)
						found++
						if h < int(j) {
							below++
						}
						break
					}
				}
			}
		}
		if found == 0 { // cannot happen inside one component; guards against a broken row
			panic("graph: local efficiency: unreachable member inside a component")
		}
		s.addHist(d, 2*below)
		far -= found
		for w := wlo; w < whi; w++ {
			u[w] &^= next[w]
			level[w] = next[w]
		}
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
func (s *localScratch[I]) neighbourhoodLists(off []int64, adj []I, i int) {
	nb := adj[off[i]:off[i+1]]
	k := len(nb)
	for li, v := range nb {
		s.local[v] = I(li + 1)
	}
	s.adj = s.adj[:0]
	for li, v := range nb {
		s.off[li] = int64(len(s.adj))
		for _, u := range adj[off[v]:off[v+1]] {
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
