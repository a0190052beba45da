// Package graph analyses a functional network as an undirected graph: nodal measures (degree,
// strength, binary and Onnela clustering, local efficiency, betweenness, eigenvector
// centrality, hubs), global measures (density, C_p, exact L_p and global efficiency by
// bit-parallel multi-source BFS, assortativity, components), degree-preserving Maslov–Sneppen
// random networks, small-world indices and degree-distribution fits (docs/algorithms.md, "Network measures"). Modules
// (leading eigenvector, Louvain/Leiden) live in the subpackage community. CSR in, results out;
// no I/O. Long computations take a context (cancellation) and a progress.Reporter, and use
// every core Go may run on (GOMAXPROCS).
package graph

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/hubscope/hubscope/helper/network"
)

// Graph is the symmetric adjacency of a network in CSR form: row i lists every neighbour of i
// (both directions) in increasing order. Memory is O(N + E).
type Graph struct {
	N       int
	Offsets []int64   // len N+1
	Adj     []int32   // neighbours, sorted within each row
	Weights []float32 // edge weights aligned with Adj (nil for a binary graph)
}

// FromNetwork derives the symmetric adjacency from a strict-upper-triangle network.
func FromNetwork(nw *network.Network) *Graph {
	n := nw.N
	deg := make([]int64, n+1)
	for i := 0; i < n; i++ {
		cols, _ := nw.Row(i)
		deg[i] += int64(len(cols))
		for _, j := range cols {
			deg[j]++
		}
	}
	g := &Graph{N: n, Offsets: make([]int64, n+1)}
	for i := 0; i < n; i++ {
		g.Offsets[i+1] = g.Offsets[i] + deg[i]
	}
	m := g.Offsets[n]
	g.Adj = make([]int32, m)
	g.Weights = make([]float32, m)
	pos := make([]int64, n)
	copy(pos, g.Offsets[:n])
	// Rows are visited in increasing i, so the lower-triangle entries (j < i) land in each row
	// in increasing order before its upper-triangle entries, which are already sorted.
	for i := 0; i < n; i++ {
		cols, ws := nw.Row(i)
		for k, j := range cols {
			g.Adj[pos[j]] = int32(i)
			g.Weights[pos[j]] = ws[k]
			pos[j]++
		}
		for k, j := range cols {
			g.Adj[pos[i]] = int32(j)
			g.Weights[pos[i]] = ws[k]
			pos[i]++
		}
	}
	return g
}

// Neighbors returns the neighbours of i.
func (g *Graph) Neighbors(i int) []int32 { return g.Adj[g.Offsets[i]:g.Offsets[i+1]] }

// Degree of node i.
func (g *Graph) Degree(i int) int { return int(g.Offsets[i+1] - g.Offsets[i]) }

// Edges is the number of undirected edges.
func (g *Graph) Edges() int64 { return g.Offsets[g.N] / 2 }

// FromEdges builds a Graph over n nodes from an undirected edge list; weights (nil for a binary
// graph) are aligned with edges. Self-loops, repeated edges and out-of-range endpoints are
// errors, because every measure here assumes a simple graph.
func FromEdges(n int, edges [][2]int32, weights []float32) (*Graph, error) {
	if n < 0 {
		return nil, fmt.Errorf("graph: negative node count %d", n)
	}
	if weights != nil && len(weights) != len(edges) {
		return nil, fmt.Errorf("graph: %d edges but %d weights", len(edges), len(weights))
	}
	deg := make([]int64, n)
	for e, uv := range edges {
		u, v := uv[0], uv[1]
		if u < 0 || v < 0 || int(u) >= n || int(v) >= n {
			return nil, fmt.Errorf("graph: edge %d (%d,%d) outside 0..%d", e, u, v, n-1)
		}
		if u == v {
			return nil, fmt.Errorf("graph: edge %d is a self-loop on node %d", e, u)
		}
		deg[u]++
		deg[v]++
	}
	g := &Graph{N: n, Offsets: make([]int64, n+1)}
	for i := 0; i < n; i++ {
		g.Offsets[i+1] = g.Offsets[i] + deg[i]
	}
	g.Adj = make([]int32, g.Offsets[n])
	if weights != nil {
		g.Weights = make([]float32, g.Offsets[n])
	}
	pos := make([]int64, n)
	copy(pos, g.Offsets[:n])
	for e, uv := range edges {
		u, v := uv[0], uv[1]
		g.Adj[pos[u]], g.Adj[pos[v]] = v, u
		if weights != nil {
			g.Weights[pos[u]], g.Weights[pos[v]] = weights[e], weights[e]
		}
		pos[u]++
		pos[v]++
	}
	g.sortRows()
	for i := 0; i < n; i++ {
		nb := g.Neighbors(i)
		for k := 1; k < len(nb); k++ {
			if nb[k] == nb[k-1] {
				return nil, fmt.Errorf("graph: edge (%d,%d) given more than once", i, nb[k])
			}
		}
	}
	return g, nil
}

// sortRows sorts every adjacency row (and its weights) by neighbour index.
func (g *Graph) sortRows() {
	for i := 0; i < g.N; i++ {
		a, b := g.Offsets[i], g.Offsets[i+1]
		if g.Weights == nil {
			slices.Sort(g.Adj[a:b])
			continue
		}
		sort.Sort(rowSorter{g.Adj[a:b], g.Weights[a:b]})
	}
}

type rowSorter struct {
	adj []int32
	w   []float32
}

func (r rowSorter) Len() int           { return len(r.adj) }
func (r rowSorter) Less(i, j int) bool { return r.adj[i] < r.adj[j] }
func (r rowSorter) Swap(i, j int) {
	r.adj[i], r.adj[j] = r.adj[j], r.adj[i]
	r.w[i], r.w[j] = r.w[j], r.w[i]
}

// Validate checks the invariants every measure relies on: offsets monotone from 0, neighbours
// in range, sorted and distinct, no self-loops, and symmetry (j lists i whenever i lists j,
// with the same weight).
func (g *Graph) Validate() error {
	if g == nil {
		return errors.New("graph: nil graph")
	}
	if g.N < 0 || len(g.Offsets) != g.N+1 || g.Offsets[0] != 0 {
		return fmt.Errorf("graph: %d offsets for %d nodes", len(g.Offsets), g.N)
	}
	if int64(len(g.Adj)) != g.Offsets[g.N] || (g.Weights != nil && len(g.Weights) != len(g.Adj)) {
		return fmt.Errorf("graph: offsets claim %d entries, adjacency has %d, weights %d", g.Offsets[g.N], len(g.Adj), len(g.Weights))
	}
	for i := 0; i < g.N; i++ {
		if g.Offsets[i+1] < g.Offsets[i] {
			return fmt.Errorf("graph: offsets decrease at node %d", i)
		}
		prev := int32(-1)
		for p := g.Offsets[i]; p < g.Offsets[i+1]; p++ {
			j := g.Adj[p]
			if j <= prev || int(j) >= g.N || int(j) == i {
				return fmt.Errorf("graph: node %d lists neighbour %d out of order, out of range or itself", i, j)
			}
			prev = j
			q, ok := g.find(int(j), int32(i))
			if !ok {
				return fmt.Errorf("graph: edge (%d,%d) is not symmetric", i, j)
			}
			if g.Weights != nil && g.Weights[q] != g.Weights[p] {
				return fmt.Errorf("graph: edge (%d,%d) has weights %g and %g in its two directions", i, j, g.Weights[p], g.Weights[q])
			}
		}
	}
	return nil
}

// find returns the position of neighbour j in row i (binary search over the sorted row).
func (g *Graph) find(i int, j int32) (int64, bool) {
	a, b := g.Offsets[i], g.Offsets[i+1]
	k, ok := slices.BinarySearch(g.Adj[a:b], j)
	return a + int64(k), ok
}

// HasEdge reports whether i and j are adjacent, in O(log degree).
func (g *Graph) HasEdge(i, j int) bool {
	_, ok := g.find(i, int32(j))
	return ok
}

// Density is E / (N(N−1)/2), the fraction of possible edges present.
func (g *Graph) Density() float64 {
	if g.N < 2 {
		return 0
	}
	return float64(g.Edges()) / (float64(g.N) * float64(g.N-1) / 2)
}
