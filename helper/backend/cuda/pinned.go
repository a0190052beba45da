//go:build cuda

package cuda

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
import "C"

import (
	"fmt"
	"unsafe"
)

// gorgonia.org/cu v0.9.6 leaves page-locked host memory out (it suggests C.malloc, which the
// DMA engines cannot read at full speed: pageable device→host copies ran at 1.6 GB/s against
// 55 GB/s pinned on an H200, BENCHMARKS.md), so the two calls are wrapped here.

func driverError(what string, r C.CUresult) error {
	var name *C.char
	C.cuGetErrorName(r, &name)
	s := fmt.Sprintf("CUresult %d", int(r))
	if name != nil {
		s = C.GoString(name)
	}
	return fmt.Errorf("cuda backend: %s: %s", what, s)
}

// pinnedAlloc returns bytes of page-locked host memory (cuMemAllocHost) usable by async copies.
func pinnedAlloc(bytes int) (unsafe.Pointer, error) {
	if bytes <= 0 {
		bytes = 1
	}
	var p unsafe.Pointer
	if r := C.cuMemAllocHost(&p, C.size_t(bytes)); r != C.CUDA_SUCCESS {
		return nil, driverError(fmt.Sprintf("allocating %d bytes of pinned host memory", bytes), r)
	}
	return p, nil
}

// pinnedFree releases memory from pinnedAlloc.
func pinnedFree(p unsafe.Pointer) {
	if p != nil {
		C.cuMemFreeHost(p)
	}
}
