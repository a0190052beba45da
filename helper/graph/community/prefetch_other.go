//go:build !amd64 || purego

package community

import "unsafe"

// prefetch4 is a hint only; without the amd64 instruction it does nothing.
func prefetch4(p0, p1, p2, p3 unsafe.Pointer) {}
