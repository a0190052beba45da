package graph

// Components labels the connected components of g: label[i] is the component of node i,
// numbered 0, 1, … in order of each component's smallest node, and sizes[c] its node count.
// Isolated nodes are components of size one, as igraph counts them.
func Components(g *Graph) (label []int32, sizes []int) {
	label = make([]int32, g.N)
	for i := range label {
		label[i] = -1
	}
	queue := make([]int32, 0, g.N)
	for s := 0; s < g.N; s++ {
		if label[s] >= 0 {
			continue
		}
		c := int32(len(sizes))
		label[s] = c
		queue = append(queue[:0], int32(s))
		for h := 0; h < len(queue); h++ {
			for _, u := range g.Neighbors(int(queue[h])) {
				if label[u] < 0 {
					label[u] = c
					queue = append(queue, u)
				}
			}
		}
		sizes = append(sizes, len(queue))
	}
	return label, sizes
}

// LargestComponent returns the number of components, the size of the largest and its share
// of all nodes (0 for an empty graph).
func LargestComponent(g *Graph) (components, largest int, share float64) {
	_, sizes := Components(g)
	for _, s := range sizes {
		largest = max(largest, s)
	}
	if g.N > 0 {
		share = float64(largest) / float64(g.N)
	}
	return len(sizes), largest, share
}
