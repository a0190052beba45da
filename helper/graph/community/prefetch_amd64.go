//go:build amd64 && !purego

package community

import "unsafe"

// prefetch4 hints the cache lines at four addresses into cache (prefetch_amd64.s).
//
//go:noescape
func prefetch4(p0, p1, p2, p3 unsafe.Pointer)
