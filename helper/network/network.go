// Package network holds the sparse functional network HubScope builds: the strict upper
// triangle of the thresholded connectivity matrix in CSR form (ARCHITECTURE.md, "Network").
//
// Row i lists the neighbours j > i of node i in increasing order, with the connection value
// (r, |r| or τ) as the weight. The symmetric adjacency that graph algorithms need is derived
// from it by package graph; nothing here ever holds an N×N array.
package network

import (
	"fmt"
	"math"
)

// Network is a strict-upper-triangle CSR matrix over N nodes.
type Network struct {
	N       int
	Indptr  []uint64  // len N+1; row i spans Indices[Indptr[i]:Indptr[i+1]]
	Indices []uint32  // column j > i, increasing within a row
	Weights []float32 // connection value of (i, j)
}

// Edges is the number of undirected edges E.
func (nw *Network) Edges() int64 {
	if nw == nil || len(nw.Indptr) == 0 {
		return 0
	}
	return int64(nw.Indptr[nw.N])
}

// Density is E / (N(N−1)/2).
func (nw *Network) Density() float64 {
	if nw.N < 2 {
		return 0
	}
	return float64(nw.Edges()) / (float64(nw.N) * float64(nw.N-1) / 2)
}

// Row returns the neighbours j > i of node i and their weights.
func (nw *Network) Row(i int) ([]uint32, []float32) {
	a, b := nw.Indptr[i], nw.Indptr[i+1]
	return nw.Indices[a:b], nw.Weights[a:b]
}

// Validate checks the CSR invariants: monotone indptr, strict upper triangle, sorted rows,
// in-range columns, finite weights.
func (nw *Network) Validate() error {
	if nw.N < 0 || len(nw.Indptr) != nw.N+1 {
		return fmt.Errorf("network: indptr has %d entries for %d nodes", len(nw.Indptr), nw.N)
	}
	if nw.Indptr[0] != 0 {
		return fmt.Errorf("network: indptr[0] = %d, want 0", nw.Indptr[0])
	}
	e := nw.Indptr[nw.N]
	if uint64(len(nw.Indices)) != e || uint64(len(nw.Weights)) != e {
		return fmt.Errorf("network: indptr claims %d edges, indices %d, weights %d", e, len(nw.Indices), len(nw.Weights))
	}
	for i := 0; i < nw.N; i++ {
		a, b := nw.Indptr[i], nw.Indptr[i+1]
		if b < a || b > e {
			return fmt.Errorf("network: indptr decreases or overruns the edges at row %d", i)
		}
		prev := int64(i)
		for p := a; p < b; p++ {
			j := int64(nw.Indices[p])
			if j <= prev || j >= int64(nw.N) {
				return fmt.Errorf("network: row %d has column %d out of order or range", i, j)
			}
			prev = j
			w := nw.Weights[p]
			if f := float64(w); math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("network: edge (%d,%d) has non-finite weight", i, j)
			}
		}
	}
	return nil
}
