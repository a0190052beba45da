// Package community finds the modules of a functional brain network and describes them
// (docs/algorithms.md, "Network measures"):
//
//   - Modularity Q of a partition (Newman 2004; binary or weighted, with a resolution γ).
//   - Newman's leading-eigenvector method with recursive bisection (Newman 2006, PNAS 103:8577;
//     as used for voxel networks by Wu et al. 2010 and Wang et al. 2013), the modularity matrix
//     applied implicitly through the sparse adjacency, never formed.
//   - Louvain with Leiden refinement (Traag, Waltman & van Eck 2019, Sci Rep 9:5233), the default
//     module finder because it reaches higher Q.
//   - Nodal roles given modules: participation coefficient and within-module degree z-score
//     (Guimerà & Amaral 2005, Nature 433:895) and their role classes.
//   - Summaries: module sizes, relabelling by size, normalised mutual information between two
//     partitions, and Q's z-score against random networks.
//
// A partition is a membership slice: membership[i] is the module of node i, a non-negative
// integer. The package holds math only; it reads and writes no files.
package community

import (
	"errors"
	"fmt"
	"math"

	"github.com/hubscope/hubscope/helper/graph"
)

// ErrNoEdges is returned where modularity is undefined because the graph has no edges (2m = 0).
var ErrNoEdges = errors.New("graph has no edges: modularity is undefined")

// ModularityOptions chooses the variant of Q.
type ModularityOptions struct {
	// Weighted uses the edge weights (connection strengths) for A_ij and the strengths for k_i;
	// a graph without weights counts every edge as 1. Weights must be non-negative.
	Weighted bool
	// Resolution γ multiplies the null-model term (Reichardt & Bornholdt 2006); 0 means 1,
	// Newman's original definition.
	Resolution float64
}

func (o ModularityOptions) check() error {
	if o.Resolution < 0 || math.IsNaN(o.Resolution) || math.IsInf(o.Resolution, 0) {
		return fmt.Errorf("community: resolution γ = %v: want a finite value ≥ 0", o.Resolution)
	}
	return nil
}

func (o ModularityOptions) resolution() float64 {
	if o.Resolution == 0 {
		return 1
	}
	return o.Resolution
}

// Modularity returns Newman's modularity of the partition,
//
//	Q = (1/2m) Σ_ij (A_ij − γ k_i k_j / 2m) δ(c_i, c_j),
//
// computed per module as Q = Σ_c [ L_c/2m − γ (K_c/2m)² ], where L_c = Σ_{i,j∈c} A_ij counts each
// internal edge twice and K_c is the total degree (strength) of module c. It equals igraph's
// Graph.modularity for the same partition.
func Modularity(g *graph.Graph, membership []int, opts ModularityOptions) (float64, error) {
	if err := checkGraph(g, opts.Weighted); err != nil {
		return 0, err
	}
	return modularity(g, membership, opts)
}

// modularity is Modularity on a graph that checkGraph has passed: the module searches check it
// once, not again (a full scan of the adjacency) for every Q they evaluate.
func modularity(g *graph.Graph, membership []int, opts ModularityOptions) (float64, error) {
	if err := opts.check(); err != nil {
		return 0, err
	}
	labels, k, err := compactMembership(membership, g.N)
	if err != nil {
		return 0, err
	}
	internal := make([]float64, k)
	total := make([]float64, k)
	var twoM float64
	if !opts.Weighted || g.Weights == nil {
		// Every weight is 1: the sums are counts, kept in integers (the same values as the
		// float sums below, which are exact for whole numbers under 2⁵³) and read from 32-bit
		// labels — the loop streams every adjacency entry once.
		lab := make([]int32, g.N)
		for i, c := range labels {
			lab[i] = int32(c)
		}
		in, tot := make([]int64, k), make([]int64, k)
		for i := 0; i < g.N; i++ {
			ci := lab[i]
			row := g.Adj[g.Offsets[i]:g.Offsets[i+1]]
			tot[ci] += int64(len(row))
			var same int64
			for _, u := range row {
				if lab[u] == ci {
					same++
				}
			}
			in[ci] += same
		}
		for c := range k {
			internal[c], total[c] = float64(in[c]), float64(tot[c])
			twoM += total[c]
		}
	} else {
		for i := 0; i < g.N; i++ {
			ci := labels[i]
			for p := g.Offsets[i]; p < g.Offsets[i+1]; p++ {
				w := edgeWeight(g, p, opts.Weighted)
				twoM += w
				total[ci] += w
				if labels[g.Adj[p]] == ci {
					internal[ci] += w
				}
			}
		}
	}
	if twoM == 0 {
		return 0, ErrNoEdges
	}
	gamma := opts.resolution()
	var q float64
	for c := 0; c < k; c++ {
		f := total[c] / twoM
		q += internal[c]/twoM - gamma*f*f
	}
	return q, nil
}

// edgeWeight is A_ij for the adjacency entry at position p.
func edgeWeight(g *graph.Graph, p int64, weighted bool) float64 {
	if !weighted || g.Weights == nil {
		return 1
	}
	return float64(g.Weights[p])
}

// checkGraph validates the CSR invariants the algorithms rely on, so that a malformed graph
// gives an error instead of an index panic deep inside a loop.
func checkGraph(g *graph.Graph, weighted bool) error {
	if g == nil {
		return errors.New("community: nil graph")
	}
	if g.N < 0 || len(g.Offsets) != g.N+1 {
		return fmt.Errorf("community: graph has %d offsets for %d nodes, want %d", len(g.Offsets), g.N, g.N+1)
	}
	if g.Offsets[0] != 0 || g.Offsets[g.N] != int64(len(g.Adj)) {
		return fmt.Errorf("community: graph offsets span [%d, %d] but there are %d adjacency entries", g.Offsets[0], g.Offsets[g.N], len(g.Adj))
	}
	if g.Weights != nil && len(g.Weights) != len(g.Adj) {
		return fmt.Errorf("community: graph has %d weights for %d adjacency entries", len(g.Weights), len(g.Adj))
	}
	for i := 0; i < g.N; i++ {
		if g.Offsets[i+1] < g.Offsets[i] {
			return fmt.Errorf("community: graph offsets decrease at node %d", i)
		}
	}
	for i := 0; i < g.N; i++ {
		for p := g.Offsets[i]; p < g.Offsets[i+1]; p++ {
			j := g.Adj[p]
			if j < 0 || int(j) >= g.N {
				return fmt.Errorf("community: adjacency entry %d of node %d names node %d, outside [0, %d)", p, i, j, g.N)
			}
			if int(j) == i {
				return fmt.Errorf("community: node %d has a self-loop; functional networks have none and the methods here assume so", i)
			}
		}
	}
	if weighted && g.Weights != nil {
		for p, w := range g.Weights {
			if !(w >= 0) || math.IsInf(float64(w), 0) {
				return fmt.Errorf("community: edge weight %v at adjacency entry %d: weighted modularity needs finite non-negative weights", w, p)
			}
		}
	}
	return nil
}

// compactMembership maps arbitrary non-negative module labels onto 0..k−1 in order of first
// appearance, so that per-module arrays stay O(N) whatever labels the caller used.
func compactMembership(membership []int, n int) ([]int, int, error) {
	if len(membership) != n {
		return nil, 0, fmt.Errorf("community: membership has %d entries for a graph of %d nodes", len(membership), n)
	}
	out := make([]int, n)
	index := make(map[int]int)
	for i, c := range membership {
		if c < 0 {
			return nil, 0, fmt.Errorf("community: node %d has negative module label %d", i, c)
		}
		id, ok := index[c]
		if !ok {
			id = len(index)
			index[c] = id
		}
		out[i] = id
	}
	return out, len(index), nil
}

// nodeDegrees returns k_i (binary) or the strength s_i (weighted) of every node and their sum 2m.
func nodeDegrees(g *graph.Graph, weighted bool) ([]float64, float64) {
	k := make([]float64, g.N)
	var twoM float64
	for i := 0; i < g.N; i++ {
		if !weighted || g.Weights == nil {
			k[i] = float64(g.Offsets[i+1] - g.Offsets[i])
		} else {
			var s float64
			for p := g.Offsets[i]; p < g.Offsets[i+1]; p++ {
				s += float64(g.Weights[p])
			}
			k[i] = s
		}
		twoM += k[i]
	}
	return k, twoM
}
