//go:build !amd64 || purego

package graph

import "unsafe"

// prefetch6 reads the words at six addresses (the first two uint32 edge entries, the others
// uint64 matrix words), so that the chain's next reads of them find them in cache: plain
// loads, whose misses overlap each other. It returns the XOR of what it read, for the caller to
// keep.
func prefetch6(p0, p1, p2, p3, p4, p5 unsafe.Pointer) uint64 {
	return uint64(*(*uint32)(p0)) ^ uint64(*(*uint32)(p1)) ^ *(*uint64)(p2) ^ *(*uint64)(p3) ^ *(*uint64)(p4) ^ *(*uint64)(p5)
}
