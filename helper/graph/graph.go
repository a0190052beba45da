// Package graph analyses a functional network as an undirected graph: nodal measures (degree,
// strength, clustering, local efficiency, participation, betweenness, eigenvector centrality),
// global measures (density, C_p, exact L_p, global efficiency, assortativity, modularity),
// modules (Newman's leading eigenvector, Louvain with Leiden refinement), degree-preserving
// random baselines and small-world indices (ALGORITHMS.md §4). CSR in, results out; no I/O.
package graph

import "github.com/hubscope/hubscope/helper/network"

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
