package scan

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
)

// TestLoadMean checks Options.Mean against the temporal mean computed directly from the
// whole image, over the full grid (NaN included where a series holds one), on both loading
// paths: a user mask (summed during the load stream) and the automatic mask (taken from its
// first pass).
func TestLoadMean(t *testing.T) {
	dir := t.TempDir()
	dims := []int{9, 8, 7, 23}
	// A bright ellipsoid on a dark background, so that the automatic mask finds a "brain".
	value := func(i, j, k, tt int) float32 {
		x, y, z := float64(i-4)/3.5, float64(j-4)/3, float64(k-3)/2.5
		base := 50.0
		if x*x+y*y+z*z < 1 {
			base = 1000
		}
		if i == 1 && j == 1 && k == 1 && tt == 5 {
			return float32(math.NaN())
		}
		return float32(base + 10*math.Sin(0.3*float64(tt)+float64(i*j+k)))
	}
	path := filepath.Join(dir, "scan.nii.gz")
	writeScan(t, path, dims, testAffine, value)
	maskPath := filepath.Join(dir, "mask.nii.gz")
	writeScan(t, maskPath, dims[:3], testAffine, func(i, j, k, _ int) float32 {
		if (i+j+k)%3 == 0 {
			return 1
		}
		return 0
	})
	h, all, err := nifti.ReadImage(path)
	if err != nil {
		t.Fatal(err)
	}
	nv := h.VoxelsPerVolume()
	want := make([]float64, nv)
	for tt := 0; tt < dims[3]; tt++ {
		for f := 0; f < nv; f++ {
			want[f] += float64(all[tt*nv+f])
		}
	}
	for _, c := range []struct {
		name string
		opt  Options
	}{{"user-mask", Options{MaskPath: maskPath, Mean: true}}, {"epi-mask", Options{Mean: true}}} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Load(context.Background(), path, c.opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Mean) != nv {
				t.Fatalf("Mean has %d values for a %d-voxel grid", len(s.Mean), nv)
			}
			for f, m := range want {
				m /= float64(dims[3])
				got := float64(s.Mean[f])
				if math.IsNaN(m) != math.IsNaN(got) || (!math.IsNaN(m) && math.Abs(got-m) > 1e-6*math.Abs(m)) {
					t.Fatalf("voxel %d: mean %g, want %g", f, got, m)
				}
			}
			c.opt.Mean = false
			s, err = Load(context.Background(), path, c.opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.Mean != nil {
				t.Fatal("Mean computed without Options.Mean")
			}
		})
	}
}
