package nifti

import (
	"encoding/binary"
	"math"
	"testing"
)

// rawHeader lays out h as an on-disk NIfTI-1 or NIfTI-2 header in the given byte order, plus
// the 4-byte extension flag for single files. It is written from the nifti1.h and nifti2.h
// field tables independently of encodeNifti1, so tests of the reader do not trust the writer.
func rawHeader(t testing.TB, version int, order binary.ByteOrder, h *Header, pair bool) []byte {
	t.Helper()
	if version == 1 {
		b := make([]byte, 352)
		order.PutUint32(b[0:], 348)
		for i := range 8 {
			order.PutUint16(b[40+2*i:], uint16(int16(h.Dim[i])))
			order.PutUint32(b[76+4*i:], math.Float32bits(float32(h.PixDim[i])))
		}
		order.PutUint16(b[68:], uint16(h.IntentCode))
		order.PutUint16(b[70:], uint16(h.DataType))
		order.PutUint16(b[72:], uint16(8*h.DataType.Size()))
		off := h.VoxOffset
		if pair {
			off = 0
		}
		f := func(o int, v float64) { order.PutUint32(b[o:], math.Float32bits(float32(v))) }
		f(108, float64(off))
		f(112, h.SclSlope)
		f(116, h.SclInter)
		b[123] = h.XYZTUnits
		copy(b[148:227], h.Descrip)
		order.PutUint16(b[252:], uint16(h.QformCode))
		order.PutUint16(b[254:], uint16(h.SformCode))
		for i, v := range []float64{h.QuaternB, h.QuaternC, h.QuaternD, h.QOffsetX, h.QOffsetY, h.QOffsetZ} {
			f(256+4*i, v)
		}
		for i := range 4 {
			f(280+4*i, h.SRowX[i])
			f(296+4*i, h.SRowY[i])
			f(312+4*i, h.SRowZ[i])
		}
		if pair {
			copy(b[344:], "ni1\x00")
			return b[:348]
		}
		copy(b[344:], "n+1\x00")
		return b
	}
	b := make([]byte, 544)
	order.PutUint32(b[0:], 540)
	if pair {
		copy(b[4:], "ni2\x00\r\n\x1a\n")
	} else {
		copy(b[4:], "n+2\x00\r\n\x1a\n")
	}
	order.PutUint16(b[12:], uint16(h.DataType))
	order.PutUint16(b[14:], uint16(8*h.DataType.Size()))
	f := func(o int, v float64) { order.PutUint64(b[o:], math.Float64bits(v)) }
	for i := range 8 {
		order.PutUint64(b[16+8*i:], uint64(h.Dim[i]))
		f(104+8*i, h.PixDim[i])
	}
	off := int64(544)
	if pair {
		off = 0
	}
	order.PutUint64(b[168:], uint64(off))
	f(176, h.SclSlope)
	f(184, h.SclInter)
	copy(b[240:319], h.Descrip)
	order.PutUint32(b[344:], uint32(h.QformCode))
	order.PutUint32(b[348:], uint32(h.SformCode))
	for i, v := range []float64{h.QuaternB, h.QuaternC, h.QuaternD, h.QOffsetX, h.QOffsetY, h.QOffsetZ} {
		f(352+8*i, v)
	}
	for i := range 4 {
		f(400+8*i, h.SRowX[i])
		f(432+8*i, h.SRowY[i])
		f(464+8*i, h.SRowZ[i])
	}
	order.PutUint32(b[500:], uint32(h.XYZTUnits))
	order.PutUint32(b[504:], uint32(h.IntentCode))
	if pair {
		return b[:540]
	}
	return b
}
