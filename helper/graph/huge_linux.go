//go:build linux

package graph

import (
	"syscall"
	"unsafe"
)

// hugeWords returns n zeroed words for a table that is read at random places (the rewiring's
// bit matrix and edge list), mapped outside the Go heap and marked for transparent huge pages
// (madvise(MADV_HUGEPAGE)): with 4 KB pages nearly every random read of a 51 MB table also misses
// the TLB and walks the page table, with 2 MB pages the table needs 26 TLB entries
// (docs/algorithms.md, "Random networks"). Where the kernel has no huge pages the advice is
// ignored and the mapping works as ordinary memory. free unmaps it; the slice must not be used
// after. If the mapping fails, the words come from the Go heap.
func hugeWords[T uint32 | uint64](n int) (words []T, free func()) {
	size := n * int(unsafe.Sizeof(T(0)))
	// Below 8 MB the 4 KB pages' TLB reach (a few thousand entries) covers most of the table,
	// and the Go heap can reuse memory between calls without fresh page faults (C2's 6 MB
	// matrix stays there).
	if size < 8<<20 {
		return make([]T, n), func() {}
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]T, n), func() {}
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) // advice only
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), func() { _ = syscall.Munmap(b) }
}
