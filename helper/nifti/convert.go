package nifti

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"
)

// nativeLittle reports whether this machine is little-endian; raw values in the file's byte
// order are swapped in place when it differs, then reinterpreted without copying.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// swapBytes reverses the byte order of every size-byte value in b, in place.
func swapBytes(b []byte, size int) {
	switch size {
	case 2:
		for i := 0; i+1 < len(b); i += 2 {
			binary.LittleEndian.PutUint16(b[i:], bits.ReverseBytes16(binary.LittleEndian.Uint16(b[i:])))
		}
	case 4:
		for i := 0; i+3 < len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], bits.ReverseBytes32(binary.LittleEndian.Uint32(b[i:])))
		}
	case 8:
		for i := 0; i+7 < len(b); i += 8 {
			binary.LittleEndian.PutUint64(b[i:], bits.ReverseBytes64(binary.LittleEndian.Uint64(b[i:])))
		}
	}
}

type rawValue interface {
	~uint8 | ~int8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// view reinterprets native-order bytes as values; b comes from make([]byte) or a slice of it
// at a multiple of the value size, so it is suitably aligned.
func view[T rawValue](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(zero)))
}

// scaleInto converts raw values to floats, applying y = slope·x + inter in float64 as nibabel's
// get_fdata does (the product is rounded before the sum: the explicit conversion forbids an FMA).
func scaleInto[T rawValue, D float32 | float64](dst []D, src []T, slope, inter float64, scaled bool) {
	dst = dst[:len(src)]
	var zero T
	if !scaled && (unsafe.Sizeof(zero) < 8 || isFloat[T]()) {
		for i, v := range src {
			dst[i] = D(v)
		}
		return
	}
	if !scaled {
		// (u)int64 → float32 goes through float64, like the scaled path and nibabel's
		// get_fdata().astype(float32), so ReadVolume is always ReadVolume64 rounded once more.
		for i, v := range src {
			dst[i] = D(float64(v))
		}
		return
	}
	for i, v := range src {
		dst[i] = D(float64(float64(v)*slope) + inter)
	}
}

func isFloat[T rawValue]() bool {
	var zero T
	switch any(zero).(type) {
	case float32, float64:
		return true
	}
	return false
}

// decode converts one chunk of raw native-order bytes of datatype dt into dst.
func decode[D float32 | float64](dst []D, raw []byte, dt DataType, slope, inter float64, scaled bool) {
	switch dt {
	case Uint8:
		scaleInto(dst, view[uint8](raw), slope, inter, scaled)
	case Int8:
		scaleInto(dst, view[int8](raw), slope, inter, scaled)
	case Int16:
		scaleInto(dst, view[int16](raw), slope, inter, scaled)
	case Uint16:
		scaleInto(dst, view[uint16](raw), slope, inter, scaled)
	case Int32:
		scaleInto(dst, view[int32](raw), slope, inter, scaled)
	case Uint32:
		scaleInto(dst, view[uint32](raw), slope, inter, scaled)
	case Int64:
		scaleInto(dst, view[int64](raw), slope, inter, scaled)
	case Uint64:
		scaleInto(dst, view[uint64](raw), slope, inter, scaled)
	case Float32:
		scaleInto(dst, view[float32](raw), slope, inter, scaled)
	case Float64:
		scaleInto(dst, view[float64](raw), slope, inter, scaled)
	}
}

// encode converts float32 values to datatype dt in native order into raw (len(src)·size bytes):
// x = (v − inter)/slope when scaled (the inverse of the read scaling); integer types round half
// away from zero, clamp to their range and store NaN as 0 (as nibabel does).
func encode(raw []byte, src []float32, dt DataType, slope, inter float64, scaled bool) {
	switch dt {
	case Float32:
		dst := view[float32](raw)
		if !scaled {
			copy(dst, src)
			return
		}
		for i, v := range src {
			dst[i] = float32((float64(v) - inter) / slope)
		}
	case Float64:
		dst := view[float64](raw)
		for i, v := range src {
			x := float64(v)
			if scaled {
				x = (x - inter) / slope
			}
			dst[i] = x
		}
	case Uint8:
		encodeInt(view[uint8](raw), src, dt, slope, inter, scaled)
	case Int8:
		encodeInt(view[int8](raw), src, dt, slope, inter, scaled)
	case Int16:
		encodeInt(view[int16](raw), src, dt, slope, inter, scaled)
	case Uint16:
		encodeInt(view[uint16](raw), src, dt, slope, inter, scaled)
	case Int32:
		encodeInt(view[int32](raw), src, dt, slope, inter, scaled)
	case Uint32:
		encodeInt(view[uint32](raw), src, dt, slope, inter, scaled)
	case Int64:
		dst := view[int64](raw)
		for i, v := range src {
			x := toRounded(v, slope, inter, scaled)
			switch {
			case x >= 0x1p63:
				dst[i] = math.MaxInt64
			case x <= -0x1p63:
				dst[i] = math.MinInt64
			default:
				dst[i] = int64(x)
			}
		}
	case Uint64:
		dst := view[uint64](raw)
		for i, v := range src {
			x := toRounded(v, slope, inter, scaled)
			switch {
			case x >= 0x1p64:
				dst[i] = math.MaxUint64
			case x <= 0:
				dst[i] = 0
			default:
				dst[i] = uint64(x)
			}
		}
	}
}

// toRounded is the inverse-scaled value rounded half away from zero, NaN mapped to 0.
func toRounded(v float32, slope, inter float64, scaled bool) float64 {
	x := float64(v)
	if scaled {
		x = (x - inter) / slope
	}
	if x != x {
		return 0
	}
	return math.Round(x)
}

// encodeInt handles the integer types up to 32 bits, whose whole range is exact in float64.
func encodeInt[T ~uint8 | ~int8 | ~int16 | ~uint16 | ~int32 | ~uint32](dst []T, src []float32, dt DataType, slope, inter float64, scaled bool) {
	lo, hi := dt.intRange()
	for i, v := range src {
		dst[i] = T(max(lo, min(hi, toRounded(v, slope, inter, scaled))))
	}
}
