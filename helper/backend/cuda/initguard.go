//go:build cuda

package cuda

// gorgonia.org/cu calls cuInit from its package init and calls os.Exit(1) when it fails, so
// a helper built with -tags cuda would die before main on any machine whose NVIDIA driver is
// installed but cannot give it a GPU (none present, driver and kernel module mismatched, a
// container without the device): `--backend auto` could never fall back to the CPU. The
// executable therefore defines cuInit itself. Its definition takes precedence over the
// driver library's for every call in this program (ELF symbol interposition: the executable
// comes first in the lookup order), so cu's init reaches this one, which calls the driver's
// own cuInit (the next definition, dlsym RTLD_NEXT), records what it returned, and reports
// success to cu. initError then turns a recorded failure into ErrNoDevice with the driver's
// reason before anything else touches the device.
//
// A machine without libcuda.so.1 at all still cannot load this program (cu links it); the
// desktop app's launcher starts the CPU build instead (ipc.LaunchOptions.Fallback).

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <cuda.h>

static CUresult hubscope_init_result = CUDA_ERROR_NOT_INITIALIZED;

CUresult CUDAAPI cuInit(unsigned int flags) {
	typedef CUresult (CUDAAPI *init_fn)(unsigned int);
	init_fn driver = (init_fn)dlsym(RTLD_NEXT, "cuInit");
	hubscope_init_result = driver ? driver(flags) : CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
	return CUDA_SUCCESS;
}

static CUresult hubscope_cu_init_result(void) { return hubscope_init_result; }

// hubscope_cu_error describes a CUresult ("CUDA_ERROR_NO_DEVICE: no CUDA-capable device is
// detected"); both lookups work without an initialised driver.
static void hubscope_cu_error(CUresult r, const char** name, const char** text) {
	*name = 0;
	*text = 0;
	cuGetErrorName(r, name);
	cuGetErrorString(r, text);
}
*/
import "C"

import "fmt"

// initError is nil when the driver's cuInit succeeded, else an error wrapping ErrNoDevice
// with the driver's reason ("CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected").
func initError() error {
	r := C.hubscope_cu_init_result()
	if r == C.CUDA_SUCCESS {
		return nil
	}
	var name, text *C.char
	C.hubscope_cu_error(r, &name, &text)
	why := fmt.Sprintf("error %d", int(r))
	if name != nil {
		why = C.GoString(name)
	}
	if text != nil {
		why += ": " + C.GoString(text)
	}
	return fmt.Errorf("%w: the NVIDIA driver could not start CUDA (cuInit: %s)", ErrNoDevice, why)
}
