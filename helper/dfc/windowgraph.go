package dfc

import (
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/network"
)

// windowMeanClustering is C_p = (1/N) Σ_i C_i, C_i = 2t_i/(k_i(k_i − 1)) (0 below degree 2),
// graph.MeanClustering's value to the last bit (the same expression per node, summed in node
// order), computed from a window's strict-upper-triangle rows on one goroutine: Run's
// incremental path measures several windows at once, and on a window's sparse network
// building the symmetric graph and clearing graph.Triangles' per-worker arrays (GOMAXPROCS × N
// counts) cost more than the count itself. Each triangle i < j < k is found once, from i: j and
// k in i's row, k in j's row (a mark per node of i's row; rows sorted, so no duplicates).
func windowMeanClustering(nw *network.Network, deg []int32) float64 {
	return (&windowScratch{}).meanClustering(nw, deg)
}

// meanClustering is windowMeanClustering with sc's arrays.
func (sc *windowScratch) meanClustering(nw *network.Network, deg []int32) float64 {
	n := nw.N
	sc.tri = grow(sc.tri, n)
	sc.mark = grow(sc.mark, n)
	t, mark := sc.tri, sc.mark
	for i := 0; i < n; i++ {
		cols, _ := nw.Row(i)
		if len(cols) < 2 {
			continue
		}
		for _, k := range cols {
			mark[k] = true
		}
		for _, j := range cols {
			row, _ := nw.Row(int(j))
			for _, k := range row {
				if mark[k] {
					t[i]++
					t[j]++
					t[k]++
				}
			}
		}
		for _, k := range cols {
			mark[k] = false
		}
	}
	return meanClusteringOf(t, deg)
}

// meanClusteringOf is C_p from every node's triangles t_i and degree k_i: the same expression
// per node, summed in node order, whether the triangles were counted here or on the device
// (fc.WindowCSR), so both give graph.MeanClustering's value to the last bit.
func meanClusteringOf[T int64 | uint32](t []T, deg []int32) float64 {
	var s float64
	for i, ti := range t {
		if k := float64(deg[i]); k >= 2 {
			s += 2 * float64(ti) / (k * (k - 1))
		}
	}
	return s / float64(len(t))
}

// largestComponent is the size of the largest connected component of nw, by a sequential
// union–find (union by size, path halving): the quantity fc.Components reports, computed on
// one goroutine for the same reason as windowMeanClustering.
func largestComponent(nw *network.Network) int {
	n := nw.N
	if n == 0 {
		return 0
	}
	var edges []fc.Edge
	for i := 0; i < n; i++ {
		cols, _ := nw.Row(i)
		for _, j := range cols {
			edges = append(edges, fc.Edge{I: uint32(i), J: j})
		}
	}
	return (&windowScratch{}).largestComponent(edges, n)
}

// largestComponentRows is largestComponent of the window's CSR network nw (the device's,
// fc.WindowCSR), joining its edges row by row.
func (sc *windowScratch) largestComponentRows(nw *network.Network) int {
	n := nw.N
	if n == 0 {
		return 0
	}
	sc.parent = grow(sc.parent, n)
	sc.size = grow(sc.size, n)
	parent, size := sc.parent, sc.size
	for i := range parent {
		parent[i], size[i] = int32(i), 1
	}
	largest := int32(1)
	for i := 0; i < n; i++ {
		cols, _ := nw.Row(i)
		for _, j := range cols {
			largest = max(largest, union(parent, size, int32(i), int32(j)))
		}
	}
	return int(largest)
}

// union joins the sets of x and y (union by size, path halving) and returns the size of the
// set that holds them.
func union(parent, size []int32, x, y int32) int32 {
	for parent[x] != x {
		parent[x] = parent[parent[x]]
		x = parent[x]
	}
	for parent[y] != y {
		parent[y] = parent[parent[y]]
		y = parent[y]
	}
	if x == y {
		return size[x]
	}
	if size[x] < size[y] {
		x, y = y, x
	}
	parent[y] = x
	size[x] += size[y]
	return size[x]
}

// largestComponent is the size of the largest connected component of the graph of the
// window's edges over n nodes (the size does not depend on the order the edges are joined
// in), with sc's arrays: no CSR rows to walk.
func (sc *windowScratch) largestComponent(edges []fc.Edge, n int) int {
	if n == 0 {
		return 0
	}
	sc.parent = grow(sc.parent, n)
	sc.size = grow(sc.size, n)
	parent, size := sc.parent, sc.size
	for i := range parent {
		parent[i], size[i] = int32(i), 1
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	largest := int32(1)
	for _, ed := range edges {
		a, b := find(int32(ed.I)), find(int32(ed.J))
		if a == b {
			continue
		}
		if size[a] < size[b] {
			a, b = b, a
		}
		parent[b] = a
		size[a] += size[b]
		largest = max(largest, size[a])
	}
	return int(largest)
}
