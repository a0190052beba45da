package nifti

import "fmt"

// DataType is a NIfTI datatype code (nifti1.h, NIFTI_TYPE_*), shared by NIfTI-1 and NIfTI-2.
type DataType int16

// The datatypes HubScope reads and writes. Complex, RGB, float128 and the bit type are
// rejected with an "unsupported datatype" error.
const (
	Uint8   DataType = 2
	Int16   DataType = 4
	Int32   DataType = 8
	Float32 DataType = 16
	Float64 DataType = 64
	Int8    DataType = 256
	Uint16  DataType = 512
	Uint32  DataType = 768
	Int64   DataType = 1024
	Uint64  DataType = 1280
)

// String gives the numpy-style name of a supported type, or the nifti1.h name of a known
// unsupported one, so errors say what the file holds.
func (d DataType) String() string {
	switch d {
	case Uint8:
		return "uint8"
	case Int8:
		return "int8"
	case Int16:
		return "int16"
	case Uint16:
		return "uint16"
	case Int32:
		return "int32"
	case Uint32:
		return "uint32"
	case Int64:
		return "int64"
	case Uint64:
		return "uint64"
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case 1:
		return "binary"
	case 32:
		return "complex64"
	case 128:
		return "RGB24"
	case 1536:
		return "float128"
	case 1792:
		return "complex128"
	case 2048:
		return "complex256"
	case 2304:
		return "RGBA32"
	}
	return fmt.Sprintf("datatype(%d)", int16(d))
}

// Size is the number of bytes per value, or 0 for a datatype this package does not support.
func (d DataType) Size() int {
	switch d {
	case Uint8, Int8:
		return 1
	case Int16, Uint16:
		return 2
	case Int32, Uint32, Float32:
		return 4
	case Int64, Uint64, Float64:
		return 8
	}
	return 0
}

// supported reports whether this package can convert the datatype to float.
func (d DataType) supported() bool { return d.Size() > 0 }

// isInteger reports whether the datatype stores integers (the writer rounds and clamps them).
func (d DataType) isInteger() bool { return d.supported() && d != Float32 && d != Float64 }

// intRange is the closed range of an integer datatype, as float64 (for clamping on write).
func (d DataType) intRange() (lo, hi float64) {
	switch d {
	case Uint8:
		return 0, 255
	case Int8:
		return -128, 127
	case Int16:
		return -32768, 32767
	case Uint16:
		return 0, 65535
	case Int32:
		return -2147483648, 2147483647
	case Uint32:
		return 0, 4294967295
	case Int64:
		return -9223372036854775808, 9223372036854775807
	case Uint64:
		return 0, 18446744073709551615
	}
	return 0, 0
}
