package bundle

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/npy"
)

// TestSeriesRoundTrip writes series.npy and mean.nii.gz and reads them back: every value of
// the series (whole and row by row) and of the full-grid image equals what was written, and
// the image keeps the scan's grid and affine.
func TestSeriesRoundTrip(t *testing.T) {
	s := smallScan()
	s.L = 7
	rng := rand.New(rand.NewPCG(3, 4))
	s.Data = make([]float32, s.N*s.L)
	for i := range s.Data {
		s.Data[i] = float32(rng.NormFloat64() * 100)
	}
	mean := make([]float32, s.Dims[0]*s.Dims[1]*s.Dims[2])
	for i := range mean {
		mean[i] = float32(i)*1.5 - 3
	}
	mean[5] = float32(math.NaN())
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSeries(s); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteGridImage(MeanFile, s, mean); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}

	r, err := OpenSeries(filepath.Join(dir, SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.N != s.N || r.L != s.L {
		t.Fatalf("shape %d×%d, want %d×%d", r.N, r.L, s.N, s.L)
	}
	all, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range all {
		if x != s.Data[i] {
			t.Fatalf("value %d: %g, want %g", i, x, s.Data[i])
		}
	}
	row := make([]float32, s.L)
	for v := 0; v < s.N; v++ {
		if err := r.Row(v, row); err != nil {
			t.Fatal(err)
		}
		for k, x := range row {
			if x != s.Series(v)[k] {
				t.Fatalf("row %d[%d]: %g, want %g", v, k, x, s.Series(v)[k])
			}
		}
	}
	if err := r.Row(s.N, row); err == nil {
		t.Fatal("row past the end read without error")
	}

	h, got, err := nifti.ReadImage(filepath.Join(dir, MeanFile))
	if err != nil {
		t.Fatal(err)
	}
	if h.Nx() != s.Dims[0] || h.Ny() != s.Dims[1] || h.Nz() != s.Dims[2] || h.Volumes() != 1 {
		t.Fatalf("mean image %v, want the %v grid", h.Dim, s.Dims)
	}
	a := h.Affine()
	for i := 0; i < 3; i++ {
		for j := 0; j < 4; j++ {
			if math.Abs(a[i][j]-s.Affine[i][j]) > 1e-5 {
				t.Fatalf("affine %v, want %v", a, s.Affine)
			}
		}
	}
	for i, x := range got {
		if !(x == mean[i] || math.IsNaN(float64(x)) && math.IsNaN(float64(mean[i]))) {
			t.Fatalf("mean voxel %d: %g, want %g", i, x, mean[i])
		}
	}
}

// TestOpenSeriesRefusesDamage checks that a truncated or foreign series.npy is refused by name.
func TestOpenSeriesRefusesDamage(t *testing.T) {
	s := smallScan()
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSeries(s); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, SeriesFile)
	b, _ := os.ReadFile(p)
	cut := filepath.Join(t.TempDir(), "cut.npy")
	os.WriteFile(cut, b[:len(b)-4], 0o644)
	if _, err := OpenSeries(cut); err == nil {
		t.Fatal("truncated series accepted")
	}
	i4 := filepath.Join(t.TempDir(), "i4.npy")
	os.WriteFile(i4, append(npy.EncodeHeader("<i4", []int64{int64(s.N), int64(s.L)}), b[len(b)-4*s.N*s.L:]...), 0o644)
	if _, err := OpenSeries(i4); err == nil {
		t.Fatal("int32 array accepted as a float32 series")
	}
}
