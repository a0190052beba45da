//go:build !linux || !cgo || purego

package nifti

// libdeflateBuilt: this build has no whole-member inflater (inflate_libdeflate.go); every
// gzip file is streamed through klauspost/compress.
const libdeflateBuilt = false

func inflateWhole(dst, src []byte) bool { return false }
