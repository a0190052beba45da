//go:build amd64 && !purego

package graph

import "unsafe"

// prefetch6 hints the cache lines at six addresses into cache (prefetch_amd64.s); it returns 0
// (the portable version returns what it read).
//
//go:noescape
func prefetch6(p0, p1, p2, p3, p4, p5 unsafe.Pointer) uint64
