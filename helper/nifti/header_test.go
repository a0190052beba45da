package nifti

import (
	"encoding/binary"
	"testing"
)

// TestTR: the time step in seconds from PixDim[4] and the time unit, 0 when there is no
// time series or the fourth axis is not time.
func TestTR(t *testing.T) {
	cases := []struct {
		dims  []int
		pix4  float64
		units uint8
		want  float64
	}{
		{[]int{2, 2, 2, 10}, 2.5, UnitsMM | UnitsSec, 2.5},
		{[]int{2, 2, 2, 10}, 2500, UnitsMM | UnitsMsec, 2.5},
		{[]int{2, 2, 2, 10}, 2.5e6, UnitsMM | UnitsUsec, 2.5},
		{[]int{2, 2, 2, 10}, 2.5, UnitsMM, 2.5}, // unset time unit: seconds
		{[]int{2, 2, 2, 10}, 2.5, UnitsMM | UnitsHz, 0},
		{[]int{2, 2, 2, 10}, 2.5, UnitsMM | UnitsPPM, 0},
		{[]int{2, 2, 2, 1}, 2.5, UnitsMM | UnitsSec, 0}, // one volume
		{[]int{2, 2, 2}, 2.5, UnitsMM | UnitsSec, 0},    // 3D
		{[]int{2, 2, 2, 10}, -2, UnitsMM | UnitsSec, 0},
		{[]int{2, 2, 2, 10}, 0, UnitsMM | UnitsSec, 0},
	}
	for _, c := range cases {
		h := NewHeader(c.dims, Int16, testAffine(), 0)
		h.PixDim[4], h.XYZTUnits = c.pix4, c.units
		if got := h.TR(); got != c.want {
			t.Errorf("dims %v pixdim[4] %g units %d: TR %g, want %g", c.dims, c.pix4, c.units, got, c.want)
		}
	}
}

// TestShape: axis sizes and volume counts for 1D to 5D images.
func TestShape(t *testing.T) {
	cases := []struct {
		dims              []int
		nx, ny, nz, nvols int
	}{
		{[]int{7}, 7, 1, 1, 1},
		{[]int{7, 5}, 7, 5, 1, 1},
		{[]int{7, 5, 3}, 7, 5, 3, 1},
		{[]int{7, 5, 3, 4}, 7, 5, 3, 4},
		{[]int{7, 5, 3, 4, 2}, 7, 5, 3, 8},
		{[]int{7, 5, 3, 1, 6}, 7, 5, 3, 6},
	}
	for _, c := range cases {
		h := NewHeader(c.dims, Uint8, testAffine(), 1)
		// Axes beyond dim[0] carry junk in some files; they must not count.
		for i := len(c.dims) + 1; i < 8; i++ {
			h.Dim[i] = 0
		}
		if h.Nx() != c.nx || h.Ny() != c.ny || h.Nz() != c.nz || h.Volumes() != c.nvols || h.VoxelsPerVolume() != c.nx*c.ny*c.nz {
			t.Errorf("dims %v: %d×%d×%d, %d volumes; want %d×%d×%d, %d", c.dims, h.Nx(), h.Ny(), h.Nz(), h.Volumes(), c.nx, c.ny, c.nz, c.nvols)
		}
		if err := h.Validate(); err != nil {
			t.Errorf("dims %v: %v", c.dims, err)
		}
	}
}

// TestAffinePrecedence: sform when its code is set, else qform, else the NIfTI method-1
// diagonal of the voxel sizes; unknown codes (6, −1) count as unset, as nibabel's load fixes
// them to 0.
func TestAffinePrecedence(t *testing.T) {
	h := NewHeader([]int{2, 2, 2}, Int16, testAffine(), 0)
	h.SRowX[3] += 10 // tell the sform from the qform
	sform, qform := h.SformAffine(), h.QformAffine()
	check := func(what string, got, want [4][4]float64) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	check("both codes", h.Affine(), sform)
	h.SformCode = 0
	check("qform only", h.Affine(), qform)
	h.SformCode = 6
	check("sform code 6", h.Affine(), qform)
	h.QformCode, h.SformCode = -1, 0
	check("no codes", h.Affine(), [4][4]float64{{h.PixDim[1], 0, 0, 0}, {0, h.PixDim[2], 0, 0}, {0, 0, h.PixDim[3], 0}, {0, 0, 0, 1}})
	h.PixDim[1], h.PixDim[2] = -3, 0 // nibabel's fixes: |size|, zero → 1
	check("fixed pixdims", h.Affine(), [4][4]float64{{3, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, h.PixDim[3], 0}, {0, 0, 0, 1}})
}

// TestDecodeHeaderBothOrders: the same header laid out little- and big-endian, NIfTI-1 and
// NIfTI-2, decodes to the same fields.
func TestDecodeHeaderBothOrders(t *testing.T) {
	h := NewHeader([]int{9, 8, 7, 6}, Uint16, testAffine(), 0.8)
	h.SclSlope, h.SclInter, h.IntentCode, h.Descrip = 0.5, 4, 2001, "both orders"
	var first Header
	for _, v := range []int{1, 2} {
		for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			g, pair, err := decodeHeader(rawHeader(t, v, o, &h, false))
			if err != nil || pair {
				t.Fatalf("v%d %v: %v (pair %v)", v, o, err, pair)
			}
			if g.Version != v || g.LittleEndian != (o == binary.LittleEndian) {
				t.Errorf("v%d %v: version %d little-endian %v", v, o, g.Version, g.LittleEndian)
			}
			// Compare at float32 precision, what NIfTI-1 holds.
			g.Version, g.LittleEndian, g.VoxOffset = 0, false, 0
			g.PixDim, g.SRowX, g.SRowY, g.SRowZ = f32s(g.PixDim[:]), f32a(g.SRowX), f32a(g.SRowY), f32a(g.SRowZ)
			g.QuaternB, g.QuaternC, g.QuaternD = float64(float32(g.QuaternB)), float64(float32(g.QuaternC)), float64(float32(g.QuaternD))
			g.QOffsetX, g.QOffsetY, g.QOffsetZ = float64(float32(g.QOffsetX)), float64(float32(g.QOffsetY)), float64(float32(g.QOffsetZ))
			if v == 1 && o == binary.LittleEndian {
				first = g
				continue
			}
			if g != first {
				t.Errorf("v%d %v decodes to\n%+v\nv1 little-endian to\n%+v", v, o, g, first)
			}
		}
	}
	if first.Dim != h.Dim || first.IntentCode != 2001 || first.Descrip != "both orders" || first.SclSlope != 0.5 || first.SclInter != 4 {
		t.Errorf("decoded %+v from %+v", first, h)
	}
}

func f32s(p []float64) [8]float64 {
	var out [8]float64
	for i, v := range p {
		out[i] = float64(float32(v))
	}
	return out
}

func f32a(p [4]float64) [4]float64 {
	for i := range p {
		p[i] = float64(float32(p[i]))
	}
	return p
}
