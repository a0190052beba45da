//go:build linux && cgo && !purego

package nifti

/*
#cgo LDFLAGS: -l:libdeflate.a
#include <libdeflate.h>
*/
import "C"

import "unsafe"

// libdeflateBuilt says whether this build inflates whole gzip members with libdeflate
// (Linux with cgo, without the purego tag; scripts/setup-deps.sh installs Debian's
// libdeflate-dev, whose static library is linked in, so the program needs no libdeflate where
// it runs). Other builds stream every file through klauspost/compress (gzip.go).
const libdeflateBuilt = true

// inflateWhole inflates the gzip stream src into dst and reports whether src is exactly one
// gzip member whose data fill dst exactly and whose CRC-32 and size trailer match them.
// libdeflate decodes a whole buffer in one call, without a stream's window copies and
// bookkeeping: 0.10–0.12 s for W7's 130 MB phantom against klauspost's 0.24–0.29 s
// (BENCHMARKS.md, "Loading one scan"). On false, dst holds nothing of use.
func inflateWhole(dst, src []byte) bool {
	if len(dst) == 0 || len(src) == 0 {
		return false
	}
	d := C.libdeflate_alloc_decompressor()
	if d == nil {
		return false
	}
	defer C.libdeflate_free_decompressor(d)
	var in, out C.size_t
	res := C.libdeflate_gzip_decompress_ex(d, unsafe.Pointer(&src[0]), C.size_t(len(src)),
		unsafe.Pointer(&dst[0]), C.size_t(len(dst)), &in, &out)
	return res == C.LIBDEFLATE_SUCCESS && int(in) == len(src) && int(out) == len(dst)
}
