package dfc

import (
	"context"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/network"
)

// serialTriangles is graph.CPU with the triangles counted on one goroutine. Run's incremental
// path measures several windows at once, and on a window's sparse network clearing
// graph.Triangles' per-worker arrays (GOMAXPROCS × N counts) costs more than the count itself.
// The counts are the same integers: the same forward algorithm (Schank & Wagner 2005) orients
// every edge from the lower- to the higher-ranked end, rank = (degree, index), so each triangle
// is found once, from its lowest-ranked node.
type serialTriangles struct{ graph.CPU }

func (serialTriangles) Triangles(ctx context.Context, g *graph.Graph) ([]int64, error) {
	n := g.N
	deg := make([]int32, n)
	for i := range deg {
		deg[i] = int32(g.Offsets[i+1] - g.Offsets[i])
	}
	outOff := make([]int64, n+1)
	out := make([]int32, 0, g.Edges())
	for i := 0; i < n; i++ {
		di := deg[i]
		for _, j := range g.Neighbors(i) {
			if dj := deg[j]; dj > di || (dj == di && int(j) > i) {
				out = append(out, int32(j))
			}
		}
		outOff[i+1] = int64(len(out))
	}
	t := make([]int64, n)
	mark := make([]bool, n)
	for i := 0; i < n; i++ {
		if i&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		oi := out[outOff[i]:outOff[i+1]]
		if len(oi) < 2 {
			continue
		}
		for _, k := range oi {
			mark[k] = true
		}
		for _, j := range oi {
			for _, k := range out[outOff[j]:outOff[j+1]] {
				if mark[k] {
					t[i]++
					t[j]++
					t[k]++
				}
			}
		}
		for _, k := range oi {
			mark[k] = false
		}
	}
	return t, nil
}

// largestComponent is the size of the largest connected component of nw, by a sequential
// union–find (union by size, path halving): the quantity fc.Components reports, computed on
// one goroutine for the same reason as serialTriangles.
func largestComponent(nw *network.Network) int {
	n := nw.N
	if n == 0 {
		return 0
	}
	parent := make([]int32, n)
	size := make([]int32, n)
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
	for i := 0; i < n; i++ {
		cols, _ := nw.Row(i)
		for _, j := range cols {
			a, b := find(int32(i)), find(int32(j))
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
	}
	return int(largest)
}
