package nifti

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Header is a NIfTI-1 or NIfTI-2 header with the fields HubScope uses, widened to the
// NIfTI-2 types (int64 sizes, float64 geometry) so both versions share one representation.
type Header struct {
	Version   int        // 1 or 2
	Dim       [8]int64   // Dim[0] = number of dimensions, Dim[1..] sizes (≥1)
	PixDim    [8]float64 // PixDim[0] = qfac, PixDim[1..3] voxel size, PixDim[4] time step (units per XYZTUnits)
	DataType  DataType
	VoxOffset int64
	SclSlope  float64
	SclInter  float64
	XYZTUnits uint8

	QformCode, SformCode                                       int32
	QuaternB, QuaternC, QuaternD, QOffsetX, QOffsetY, QOffsetZ float64
	SRowX, SRowY, SRowZ                                        [4]float64

	Descrip      string
	IntentCode   int32
	LittleEndian bool
}

// Transform codes for QformCode and SformCode (nifti1.h NIFTI_XFORM_*).
const (
	XformUnknown       = 0
	XformScannerAnat   = 1
	XformAlignedAnat   = 2
	XformTalairach     = 3
	XformMNI152        = 4
	XformTemplateOther = 5
)

// Unit codes packed into XYZTUnits (nifti1.h NIFTI_UNITS_*): bits 0–2 space, bits 3–5 time.
const (
	UnitsUnknown = 0
	UnitsMeter   = 1
	UnitsMM      = 2
	UnitsMicron  = 3
	UnitsSec     = 8
	UnitsMsec    = 16
	UnitsUsec    = 24
	UnitsHz      = 32
	UnitsPPM     = 40
	UnitsRads    = 48
)

// Header sizes and the byte offsets at which single-file data may start.
const (
	nifti1HeaderSize = 348
	nifti2HeaderSize = 540
	nifti1DataOffset = 352 // header + 4-byte extension flag
	nifti2DataOffset = 544
)

// Limits that keep a corrupt or hostile header from sizing allocations or loops. The volume
// limit keeps every voxel index within int32 (the Scan's ijk list and CSR indices are 32-bit);
// the total and offset limits are far beyond any real scan yet small enough that their products
// with element sizes never overflow int64.
const (
	MaxVoxelsPerVolume = 1<<31 - 1
	MaxDataBytes       = 1 << 44 // 16 TiB
	MaxVoxOffset       = 1 << 30 // 1 GiB of header extensions
)

// Errors a caller may test for with errors.Is; messages add the file and the details.
var (
	ErrNotNifti            = errors.New("not a NIfTI file")
	ErrTruncated           = errors.New("truncated")
	ErrUnsupportedDatatype = errors.New("unsupported datatype")
	ErrInvalidHeader       = errors.New("invalid header")
	ErrCorruptGzip         = errors.New("corrupt gzip stream")
	ErrTooLarge            = errors.New("image too large")
)

// headerError is a header problem of a given kind; the reader prefixes the operation and file.
type headerError struct {
	kind error
	msg  string
}

func (e *headerError) Error() string { return e.msg }
func (e *headerError) Unwrap() error { return e.kind }

func invalid(kind error, format string, args ...any) error {
	return &headerError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// Nx is the number of voxels along i (1 when the image has no such axis); Ny and Nz likewise.
func (h *Header) Nx() int { return h.dimOrOne(1) }

// Ny is the number of voxels along j.
func (h *Header) Ny() int { return h.dimOrOne(2) }

// Nz is the number of voxels along k.
func (h *Header) Nz() int { return h.dimOrOne(3) }

func (h *Header) dimOrOne(i int64) int {
	if i > h.Dim[0] || h.Dim[i] < 1 {
		return 1
	}
	return int(h.Dim[i])
}

// Volumes is the number of 3D volumes: the product of Dim[4..Dim[0]] (1 for a 3D image).
func (h *Header) Volumes() int {
	n := 1
	for i := int64(4); i <= h.Dim[0] && i < 8; i++ {
		n *= h.dimOrOne(i)
	}
	return n
}

// VoxelsPerVolume is Nx·Ny·Nz.
func (h *Header) VoxelsPerVolume() int { return h.Nx() * h.Ny() * h.Nz() }

// Affine is the voxel (i,j,k) → world (x,y,z) mm transform the NIfTI-1 standard defines, with
// nibabel's precedence (Nifti1Header.get_best_affine): the sform (method 3) when SformCode > 0,
// else the qform (method 2) when QformCode > 0, else method 1, diag(PixDim[1..3]) with zero
// offset (nibabel would centre an Analyze-style grid there; the NIfTI standard does not).
func (h *Header) Affine() [4][4]float64 {
	switch {
	case validXformCode(h.SformCode):
		return h.SformAffine()
	case validXformCode(h.QformCode):
		return h.QformAffine()
	}
	var a [4][4]float64
	z := h.spatialZooms()
	for i := 0; i < 3; i++ {
		a[i][i] = z[i]
	}
	a[3][3] = 1
	return a
}

// validXformCode reports whether a transform code names a space; unknown codes are ignored as
// nibabel's header check does (it resets them to 0 on load).
func validXformCode(c int32) bool { return c > 0 && c <= XformTemplateOther }

// SformAffine is the affine whose first three rows are SRowX, SRowY, SRowZ (nibabel get_sform).
func (h *Header) SformAffine() [4][4]float64 {
	return [4][4]float64{h.SRowX, h.SRowY, h.SRowZ, {0, 0, 0, 1}}
}

// QformAffine is the affine from the quaternion (b,c,d), qfac = PixDim[0] and the offsets,
// computed as nibabel's get_qform does: R from the unit quaternion with a = √(1−b²−c²−d²),
// then R·diag(dx, dy, qfac·dz) and the translation (QOffsetX, QOffsetY, QOffsetZ).
//
// Like nibabel's header check on load, qfac values other than ±1 count as 1 and zero or
// negative voxel sizes as 1 or |size|. When b²+c²+d² exceeds 1 (rounding in a float32 header)
// the quaternion is renormalised with a = 0, as nifti1_io does.
func (h *Header) QformAffine() [4][4]float64 {
	b, c, d := h.QuaternB, h.QuaternC, h.QuaternD
	a2 := 1 - (b*b + c*c + d*d)
	var a float64
	if a2 > 0 {
		a = math.Sqrt(a2)
	} else if n := math.Sqrt(b*b + c*c + d*d); n > 0 {
		b, c, d = b/n, c/n, d/n
	}
	// nibabel quaternions.quat2mat.
	var r [3][3]float64
	if nq := a*a + b*b + c*c + d*d; nq >= 2.220446049250313e-16 {
		s := 2 / nq
		x, y, z := b*s, c*s, d*s
		wx, wy, wz := a*x, a*y, a*z
		xx, xy, xz := b*x, b*y, b*z
		yy, yz, zz := c*y, c*z, d*z
		r = [3][3]float64{
			{1 - (yy + zz), xy - wz, xz + wy},
			{xy + wz, 1 - (xx + zz), yz - wx},
			{xz - wy, yz + wx, 1 - (xx + yy)},
		}
	} else {
		r = [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	}
	z := h.spatialZooms()
	if h.PixDim[0] == -1 {
		z[2] = -z[2]
	}
	var m [4][4]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			m[i][j] = r[i][j] * z[j]
		}
	}
	m[0][3], m[1][3], m[2][3] = h.QOffsetX, h.QOffsetY, h.QOffsetZ
	m[3][3] = 1
	return m
}

// spatialZooms are PixDim[1..3] after nibabel's pixdim check: |size|, and 1 for a zero size
// (and, beyond nibabel, for a NaN or infinite one, which would make every coordinate NaN).
func (h *Header) spatialZooms() [3]float64 {
	var z [3]float64
	for i := range z {
		v := math.Abs(h.PixDim[i+1])
		if v == 0 || !finite(v) {
			v = 1
		}
		z[i] = v
	}
	return z
}

// TR is the repetition time in seconds: PixDim[4] converted from the time unit in XYZTUnits
// (ms → /1000, µs → /1e6; an unset unit is taken as seconds, as SPM and nilearn do). It is 0
// when the image is not a time series (fewer than two volumes along axis 4), when the time
// axis is in Hz, ppm or rad/s, or when PixDim[4] is not a positive finite number.
func (h *Header) TR() float64 {
	if h.Dim[0] < 4 || h.Dim[4] < 2 {
		return 0
	}
	t := h.PixDim[4]
	if !(t > 0) || !finite(t) {
		return 0
	}
	switch h.XYZTUnits & 0x38 {
	case UnitsUnknown, UnitsSec:
		return t
	case UnitsMsec:
		return t / 1e3
	case UnitsUsec:
		return t / 1e6
	}
	return 0
}

// scaling returns the slope and intercept to apply on read, and whether to apply them at all
// (NIfTI-1: a slope of 0 means no scaling; nibabel also ignores NaN slopes; Validate refuses
// infinite and negative ones).
func (h *Header) scaling() (slope, inter float64, ok bool) {
	if h.SclSlope == 0 || !finite(h.SclSlope) {
		return 1, 0, false
	}
	if h.SclSlope == 1 && h.SclInter == 0 {
		return 1, 0, false
	}
	return h.SclSlope, h.SclInter, true
}

// volumeBytes is the size of one volume's raw data; dataBytes that of all volumes. Both are
// only meaningful on a validated header.
func (h *Header) volumeBytes() int64 { return int64(h.VoxelsPerVolume()) * int64(h.DataType.Size()) }
func (h *Header) dataBytes() int64   { return h.volumeBytes() * int64(h.Volumes()) }

// Validate checks everything about a header that does not depend on the file it came from:
// version, dimensions, datatype, the size they imply, scaling and the data offset. It is the
// gate before anything is allocated from the header's numbers.
func (h *Header) Validate() error {
	if h.Version != 1 && h.Version != 2 {
		return invalid(ErrInvalidHeader, "NIfTI version %d, want 1 or 2", h.Version)
	}
	if h.Dim[0] < 1 || h.Dim[0] > 7 {
		return invalid(ErrInvalidHeader, "dim[0] = %d, want 1 to 7", h.Dim[0])
	}
	// Products in uint64 with overflow checks: a NIfTI-2 header can claim 2^63 along one axis.
	var perVolume, total uint64 = 1, 1
	for i := int64(1); i <= h.Dim[0]; i++ {
		n := h.Dim[i]
		if n < 1 {
			return invalid(ErrInvalidHeader, "dim[%d] = %d, want ≥ 1", i, n)
		}
		hi, lo := bits.Mul64(total, uint64(n))
		if hi != 0 || lo > math.MaxInt64 {
			return invalid(ErrTooLarge, "dimensions %v overflow a 64-bit voxel count", h.Dim[1:h.Dim[0]+1])
		}
		total = lo
		if i <= 3 {
			perVolume = lo
		}
	}
	if !h.DataType.supported() {
		return invalid(ErrUnsupportedDatatype, "unsupported datatype %d (%s); HubScope reads (u)int8/16/32/64 and float32/64", int16(h.DataType), h.DataType)
	}
	if perVolume > MaxVoxelsPerVolume {
		return invalid(ErrTooLarge, "%d voxels per volume (dimensions %v) exceed the limit of %d", perVolume, h.Dim[1:h.Dim[0]+1], MaxVoxelsPerVolume)
	}
	size := uint64(h.DataType.Size())
	if total > MaxDataBytes/size {
		return invalid(ErrTooLarge, "%d voxels of %s (dimensions %v) exceed the limit of %d bytes", total, h.DataType, h.Dim[1:h.Dim[0]+1], uint64(MaxDataBytes))
	}
	if h.VoxOffset < 0 || h.VoxOffset > MaxVoxOffset {
		return invalid(ErrInvalidHeader, "vox_offset %d outside 0 to %d", h.VoxOffset, MaxVoxOffset)
	}
	// Scaling: 0 and NaN mean "no scaling" (the NIfTI-1 standard; nibabel writes NaN for
	// unscaled images). An infinite slope would turn every value into ±Inf and a negative one
	// would flip every series' sign silently: both are refused rather than reinterpreted.
	if s := h.SclSlope; math.IsInf(s, 0) || s < 0 {
		return invalid(ErrInvalidHeader, "scl_slope %g: the scaling slope must be positive and finite (0 or NaN for none)", s)
	}
	if s, i := h.SclSlope, h.SclInter; s != 0 && finite(s) && !finite(i) {
		return invalid(ErrInvalidHeader, "valid scl_slope %g but invalid scl_inter %g", s, i)
	}
	return nil
}

// headerSize is the byte length of the on-disk header for version v.
func headerSize(v int) int {
	if v == 2 {
		return nifti2HeaderSize
	}
	return nifti1HeaderSize
}

// sniffHeader reads sizeof_hdr (the first 4 bytes) in either byte order and returns the
// NIfTI version and byte order it implies.
func sniffHeader(b []byte) (version int, order binary.ByteOrder, err error) {
	if len(b) < 4 {
		return 0, nil, invalid(ErrTruncated, "truncated header: got %d of %d bytes", len(b), nifti1HeaderSize)
	}
	switch {
	case binary.LittleEndian.Uint32(b) == nifti1HeaderSize:
		return 1, binary.LittleEndian, nil
	case binary.BigEndian.Uint32(b) == nifti1HeaderSize:
		return 1, binary.BigEndian, nil
	case binary.LittleEndian.Uint32(b) == nifti2HeaderSize:
		return 2, binary.LittleEndian, nil
	case binary.BigEndian.Uint32(b) == nifti2HeaderSize:
		return 2, binary.BigEndian, nil
	}
	return 0, nil, invalid(ErrNotNifti, "not a NIfTI header: sizeof_hdr is %d, want 348 (NIfTI-1) or 540 (NIfTI-2) in either byte order", int32(binary.LittleEndian.Uint32(b)))
}

// decodeHeader parses and validates a complete NIfTI-1 (348-byte) or NIfTI-2 (540-byte)
// header. pair says whether the header came from a .hdr file (magic "ni1"/"ni2", data in the
// .img) rather than a single .nii (magic "n+1"/"n+2", data after the header).
func decodeHeader(b []byte) (h Header, pair bool, err error) {
	version, order, err := sniffHeader(b)
	if err != nil {
		return h, false, err
	}
	if need := headerSize(version); len(b) < need {
		return h, false, invalid(ErrTruncated, "truncated header: got %d of %d bytes", len(b), need)
	}
	h.Version = version
	h.LittleEndian = order == binary.LittleEndian
	f32 := func(off int) float64 { return float64(math.Float32frombits(order.Uint32(b[off:]))) }
	f64 := func(off int) float64 { return math.Float64frombits(order.Uint64(b[off:])) }
	var bitpix int
	if version == 1 {
		switch m := string(b[344:348]); m {
		case "n+1\x00":
		case "ni1\x00":
			pair = true
		default:
			return h, false, invalid(ErrNotNifti, "wrong magic %q for a NIfTI-1 header, want \"n+1\\0\" or \"ni1\\0\"", m)
		}
		for i := range 8 {
			h.Dim[i] = int64(int16(order.Uint16(b[40+2*i:])))
			h.PixDim[i] = f32(76 + 4*i)
		}
		h.IntentCode = int32(int16(order.Uint16(b[68:])))
		h.DataType = DataType(order.Uint16(b[70:]))
		bitpix = int(int16(order.Uint16(b[72:])))
		off := f32(108)
		if off != math.Trunc(off) || off < 0 || off > MaxVoxOffset {
			return h, false, invalid(ErrInvalidHeader, "vox_offset %g is not a whole number of bytes from 0 to %d", off, MaxVoxOffset)
		}
		h.VoxOffset = int64(off)
		h.SclSlope, h.SclInter = f32(112), f32(116)
		h.XYZTUnits = b[123]
		h.Descrip = cString(b[148:228])
		h.QformCode = int32(int16(order.Uint16(b[252:])))
		h.SformCode = int32(int16(order.Uint16(b[254:])))
		h.QuaternB, h.QuaternC, h.QuaternD = f32(256), f32(260), f32(264)
		h.QOffsetX, h.QOffsetY, h.QOffsetZ = f32(268), f32(272), f32(276)
		for i := range 4 {
			h.SRowX[i], h.SRowY[i], h.SRowZ[i] = f32(280+4*i), f32(296+4*i), f32(312+4*i)
		}
	} else {
		// NIfTI-2 magic is 8 bytes: "n+2\0" or "ni2\0" then "\r\n\032\n" to catch text-mode
		// transfers, as in PNG.
		switch m := string(b[4:12]); m {
		case "n+2\x00\r\n\x1a\n":
		case "ni2\x00\r\n\x1a\n":
			pair = true
		default:
			return h, false, invalid(ErrNotNifti, "wrong magic %q for a NIfTI-2 header, want \"n+2\\0\\r\\n\\032\\n\" or \"ni2\\0\\r\\n\\032\\n\"", m)
		}
		h.DataType = DataType(order.Uint16(b[12:]))
		bitpix = int(int16(order.Uint16(b[14:])))
		for i := range 8 {
			h.Dim[i] = int64(order.Uint64(b[16+8*i:]))
			h.PixDim[i] = f64(104 + 8*i)
		}
		h.VoxOffset = int64(order.Uint64(b[168:]))
		h.SclSlope, h.SclInter = f64(176), f64(184)
		h.Descrip = cString(b[240:320])
		h.QformCode = int32(order.Uint32(b[344:]))
		h.SformCode = int32(order.Uint32(b[348:]))
		h.QuaternB, h.QuaternC, h.QuaternD = f64(352), f64(360), f64(368)
		h.QOffsetX, h.QOffsetY, h.QOffsetZ = f64(376), f64(384), f64(392)
		for i := range 4 {
			h.SRowX[i], h.SRowY[i], h.SRowZ[i] = f64(400+8*i), f64(432+8*i), f64(464+8*i)
		}
		units := int32(order.Uint32(b[500:]))
		if units < 0 || units > 255 {
			return h, false, invalid(ErrInvalidHeader, "xyzt_units %d out of range", units)
		}
		h.XYZTUnits = uint8(units)
		h.IntentCode = int32(order.Uint32(b[504:]))
	}
	if err := h.Validate(); err != nil {
		return h, pair, err
	}
	if want := 8 * h.DataType.Size(); bitpix != want {
		return h, pair, invalid(ErrInvalidHeader, "bitpix %d does not match datatype %s (%d bits)", bitpix, h.DataType, want)
	}
	if min := int64(nifti1DataOffset); version == 2 {
		min = nifti2DataOffset
		if !pair && h.VoxOffset < min {
			return h, pair, invalid(ErrInvalidHeader, "vox_offset %d lies inside the header (single-file NIfTI-2 data start at ≥ %d)", h.VoxOffset, min)
		}
	} else if !pair && h.VoxOffset < min {
		return h, pair, invalid(ErrInvalidHeader, "vox_offset %d lies inside the header (single-file NIfTI-1 data start at ≥ %d)", h.VoxOffset, min)
	}
	return h, pair, nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// encodeNifti1 lays the header out as a little-endian single-file NIfTI-1 header followed by
// the 4-byte extension flag (no extensions), so data start at VoxOffset = 352.
func encodeNifti1(h *Header) ([]byte, error) {
	for i := int64(0); i <= h.Dim[0] && i < 8; i++ {
		if h.Dim[i] > math.MaxInt16 {
			return nil, invalid(ErrTooLarge, "dim[%d] = %d does not fit a NIfTI-1 header (max %d)", i, h.Dim[i], math.MaxInt16)
		}
	}
	// NIfTI-1 stores scaling as float32: a slope or intercept that does not survive the
	// narrowing would silently change every value read back.
	if s, i := h.SclSlope, h.SclInter; s != 0 && finite(s) &&
		(float32(s) == 0 || !finite(float64(float32(s))) || !finite(float64(float32(i)))) {
		return nil, invalid(ErrInvalidHeader, "scl_slope %g / scl_inter %g do not fit the float32 fields of a NIfTI-1 header", s, i)
	}
	b := make([]byte, nifti1DataOffset)
	le := binary.LittleEndian
	put32 := func(off int, v float64) { le.PutUint32(b[off:], math.Float32bits(float32(v))) }
	le.PutUint32(b[0:], nifti1HeaderSize)
	b[38] = 'r' // "regular", as nibabel and nifti1_io write it
	for i := range 8 {
		if int64(i) <= h.Dim[0] {
			le.PutUint16(b[40+2*i:], uint16(int16(h.Dim[i])))
		} else {
			le.PutUint16(b[40+2*i:], 1) // unused axes conventionally hold 1
		}
		put32(76+4*i, h.PixDim[i])
	}
	le.PutUint16(b[68:], uint16(int16(h.IntentCode)))
	le.PutUint16(b[70:], uint16(h.DataType))
	le.PutUint16(b[72:], uint16(8*h.DataType.Size()))
	put32(108, nifti1DataOffset)
	put32(112, h.SclSlope)
	put32(116, h.SclInter)
	b[123] = h.XYZTUnits
	copy(b[148:227], h.Descrip) // keep a terminating NUL
	le.PutUint16(b[252:], uint16(int16(h.QformCode)))
	le.PutUint16(b[254:], uint16(int16(h.SformCode)))
	put32(256, h.QuaternB)
	put32(260, h.QuaternC)
	put32(264, h.QuaternD)
	put32(268, h.QOffsetX)
	put32(272, h.QOffsetY)
	put32(276, h.QOffsetZ)
	for i := range 4 {
		put32(280+4*i, h.SRowX[i])
		put32(296+4*i, h.SRowY[i])
		put32(312+4*i, h.SRowZ[i])
	}
	copy(b[344:], "n+1\x00")
	return b, nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
