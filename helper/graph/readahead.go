package graph

// readAheadEdges reads edges[idx[q]] for every q, so that the chain's next reads of those
// entries find them in cache: plain loads, independent of each other, whose misses overlap.
// It returns the XOR of what it read, for the caller to keep.
func readAheadEdges(edges []uint32, idx []uint64) uint64 {
	var x uint64
	for _, i := range idx {
		x ^= uint64(edges[i])
	}
	return x
}

// readAheadWords reads words[idx[q]] for every q, as readAheadEdges does.
func readAheadWords(words []uint64, idx []int64) uint64 {
	var x uint64
	for _, i := range idx {
		x ^= words[i]
	}
	return x
}
