package nifti

import (
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var allTypes = []DataType{Uint8, Int8, Int16, Uint16, Int32, Uint32, Int64, Uint64, Float32, Float64}

// testAffine is an oblique, left-handed (radiological) affine with anisotropic voxels, so
// that qfac, rotation and translation all matter.
func testAffine() [4][4]float64 {
	c, s := math.Cos(0.3), math.Sin(0.3)
	return [4][4]float64{
		{-2 * c, 0, 3 * s, 90.5},
		{0, 2.5, 0, -126.25},
		{-2 * s, 0, -3 * c, -72},
		{0, 0, 0, 1},
	}
}

// valuesFor draws values every datatype represents exactly in float32, covering its extremes.
func valuesFor(dt DataType, n int, rng *rand.Rand) []float32 {
	v := make([]float32, n)
	lo, hi := dt.intRange()
	if !dt.isInteger() {
		lo, hi = -1e6, 1e6
	}
	// float32 holds integers exactly up to 2^24.
	lo, hi = math.Max(lo, -1<<24), math.Min(hi, 1<<24)
	for i := range v {
		switch i {
		case 0:
			v[i] = float32(lo)
		case 1:
			v[i] = float32(hi)
		default:
			x := lo + rng.Float64()*(hi-lo)
			if dt.isInteger() {
				x = math.Round(x)
			}
			v[i] = float32(x)
		}
	}
	return v
}

func TestRoundTripEveryDatatype(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dt := range allTypes {
		for _, name := range []string{"img.nii.gz", "img.nii"} {
			t.Run(dt.String()+"/"+name, func(t *testing.T) {
				dims := []int{5, 4, 3, 6}
				h := NewHeader(dims, dt, testAffine(), 2.5)
				data := valuesFor(dt, 5*4*3*6, rng)
				path := filepath.Join(t.TempDir(), name)
				if err := WriteImage(path, h, data); err != nil {
					t.Fatal(err)
				}
				r, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				g := r.Header
				if g.DataType != dt || g.Dim != h.Dim || g.VoxOffset != 352 || g.Version != 1 {
					t.Errorf("header: got %v %v off %d v%d, want %v %v", g.DataType, g.Dim, g.VoxOffset, g.Version, dt, h.Dim)
				}
				compareAffine(t, "sform", g.Affine(), float32Affine(testAffine()), 0)
				compareAffine(t, "qform", g.QformAffine(), testAffine(), 1e-6)
				if g.TR() != 2.5 {
					t.Errorf("TR %v, want 2.5", g.TR())
				}
				vol := make([]float32, g.VoxelsPerVolume())
				for v := 0; v < 6; v++ {
					if err := r.ReadVolume(vol); err != nil {
						t.Fatalf("volume %d: %v", v, err)
					}
					for i, x := range vol {
						if want := data[v*len(vol)+i]; x != want {
							t.Fatalf("volume %d voxel %d: %v, wrote %v", v, i, x, want)
						}
					}
				}
				if err := r.ReadVolume(vol); err != io.EOF {
					t.Errorf("after the last volume: %v, want io.EOF", err)
				}
			})
		}
	}
}

// float32Affine rounds an affine as storing it in a NIfTI-1 header does.
func float32Affine(a [4][4]float64) [4][4]float64 {
	for i := range a {
		for j := range a[i] {
			a[i][j] = float64(float32(a[i][j]))
		}
	}
	return a
}

// TestInt64ReadVolumeIsFloat64Rounded: ReadVolume is ReadVolume64 rounded to float32, also
// for 64-bit integers where direct rounding would differ: 2^60 + 2^36 + 1 is 2^60 + 2^36 in
// float64, a float32 tie that rounds to even (2^60), while direct rounding gives 2^60 + 2^37.
func TestInt64ReadVolumeIsFloat64Rounded(t *testing.T) {
	for _, dt := range []DataType{Int64, Uint64} {
		h := NewHeader([]int{1}, dt, testAffine(), 0)
		b := rawHeader(t, 1, binary.LittleEndian, &h, false)
		b = binary.LittleEndian.AppendUint64(b, 1<<60+1<<36+1)
		path := filepath.Join(t.TempDir(), "big.nii")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, data, err := ReadImage(path)
		if err != nil {
			t.Fatal(err)
		}
		_, data64 := readAll64(t, path)
		if data64[0] != 1<<60+1<<36 || data[0] != 1<<60 {
			t.Errorf("%v: float64 %v, float32 %v; want 2^60+2^36 and 2^60", dt, data64[0], data[0])
		}
	}
}
