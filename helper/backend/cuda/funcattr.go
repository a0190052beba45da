//go:build cuda

package cuda

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// gorgonia.org/cu v0.9.6 has no cuFuncSetAttribute: a kernel that wants more than 48 KiB of
// dynamic shared memory (the group mean's 256 × 128 tiles, kernels/group_wide_tile.cuh) must
// be allowed it first, so the two driver calls are wrapped here.

// cu.Function is a struct holding the driver's CUfunction and nothing else.
const _ = uint(unsafe.Sizeof(cu.Function{}) - unsafe.Sizeof(C.CUfunction(nil)))

// sharedOptin is the most dynamic shared memory a kernel of the context's device may ask
// for (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 227 KiB on sm_90, 163 on sm_80).
func sharedOptin() (int, error) {
	var dev C.CUdevice
	if r := C.cuCtxGetDevice(&dev); r != C.CUDA_SUCCESS {
		return 0, driverError("reading the context's device", r)
	}
	var v C.int
	if r := C.cuDeviceGetAttribute(&v, C.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev); r != C.CUDA_SUCCESS {
		return 0, driverError("reading the shared memory limit", r)
	}
	return int(v), nil
}

// allowShared lets fn launch with up to bytes of dynamic shared memory.
func allowShared(name string, fn cu.Function, bytes int) error {
	f := *(*C.CUfunction)(unsafe.Pointer(&fn))
	if r := C.cuFuncSetAttribute(f, C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(bytes)); r != C.CUDA_SUCCESS {
		return driverError(fmt.Sprintf("allowing %s %d bytes of shared memory", name, bytes), r)
	}
	return nil
}
