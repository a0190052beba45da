//go:build !linux

package graph

// hugeWords returns n zeroed words from the Go heap (huge pages are asked for on Linux only).
func hugeWords[T uint32 | uint64](n int) (words []T, free func()) { return make([]T, n), func() {} }
