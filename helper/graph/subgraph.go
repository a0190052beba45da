package graph

import "fmt"

// InducedSubgraph returns the subgraph on the given nodes (distinct, any order), renumbered
// 0..len(nodes)−1 in the order given, with weights kept. Used to analyse the largest component
// alone, as studies reporting L_p on the giant component do.
func InducedSubgraph(g *Graph, nodes []int32) (*Graph, error) {
	local := make([]int32, g.N) // local index + 1
	for li, v := range nodes {
		if v < 0 || int(v) >= g.N {
			return nil, fmt.Errorf("graph: subgraph node %d outside 0..%d", v, g.N-1)
		}
		if local[v] != 0 {
			return nil, fmt.Errorf("graph: subgraph node %d listed twice", v)
		}
		local[v] = int32(li + 1)
	}
	h := &Graph{N: len(nodes), Offsets: make([]int64, len(nodes)+1)}
	for li, v := range nodes {
		for _, u := range g.Neighbors(int(v)) {
			if local[u] != 0 {
				h.Offsets[li+1]++
			}
		}
	}
	for i := 0; i < h.N; i++ {
		h.Offsets[i+1] += h.Offsets[i]
	}
	h.Adj = make([]int32, h.Offsets[h.N])
	if g.Weights != nil {
		h.Weights = make([]float32, h.Offsets[h.N])
	}
	for li, v := range nodes {
		p := h.Offsets[li]
		for q := g.Offsets[v]; q < g.Offsets[v+1]; q++ {
			if lu := local[g.Adj[q]]; lu != 0 {
				h.Adj[p] = lu - 1
				if g.Weights != nil {
					h.Weights[p] = g.Weights[q]
				}
				p++
			}
		}
	}
	h.sortRows()
	return h, nil
}

// LargestComponentSubgraph returns the largest connected component as its own graph (ties go
// to the component holding the smallest node) and the original index of each of its nodes.
func LargestComponentSubgraph(g *Graph) (*Graph, []int32, error) {
	label, sizes := Components(g)
	best := 0
	for c, s := range sizes {
		if s > sizes[best] {
			best = c
		}
	}
	var nodes []int32
	if len(sizes) > 0 {
		nodes = make([]int32, 0, sizes[best])
		for i, c := range label {
			if int(c) == best {
				nodes = append(nodes, int32(i))
			}
		}
	}
	h, err := InducedSubgraph(g, nodes)
	return h, nodes, err
}
