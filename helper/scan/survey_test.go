package scan

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
)

// TestSurveyMatchesLoad: a cohort's first pass (SurveyScan) predicts exactly the nodes Load
// keeps — its mask, less the voxels with a NaN or ±Inf (in any volume, the first included) or a
// constant series — with the automatic mask and with a mask file; and Load given the surveyed
// mask (Options.Mask) gives the same scan as Load's own two passes.
func TestSurveyMatchesLoad(t *testing.T) {
	dims := []int{12, 10, 8, 20}
	G := 12 * 10 * 8
	data := make([]float32, G*dims[3])
	in := func(f int) bool {
		i, j, k := f%12, (f/12)%10, f/120
		x, y, z := (float64(i)-5.5)/5, (float64(j)-4.5)/4, (float64(k)-3.5)/3
		return x*x+y*y+z*z <= 1
	}
	for t := 0; t < dims[3]; t++ {
		for f := 0; f < G; f++ {
			v := 20 + float32((f*7+t*13)%5)
			if in(f) {
				v = 1000 + 50*float32(math.Sin(float64(t)*0.7+float64(f)))
			}
			data[t*G+f] = v
		}
	}
	centre := 6 + 12*(5+10*4)
	nan, inf0, flat := centre, centre+1, centre+12
	data[5*G+nan] = float32(math.NaN())
	data[0*G+inf0] = float32(math.Inf(1))
	for t := 0; t < dims[3]; t++ {
		data[t*G+flat] = 1000
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "scan.nii.gz")
	if err := nifti.WriteImage(path, nifti.NewHeader(dims, nifti.Float32, testAffine, 2), data); err != nil {
		t.Fatal(err)
	}
	m := make([]float32, G)
	for f := range m {
		if in(f) || f%5 == 0 {
			m[f] = 1
		}
	}
	maskPath := filepath.Join(dir, "mask.nii.gz")
	if err := nifti.WriteImage(maskPath, nifti.NewHeader(dims[:3], nifti.Uint8, testAffine, 0), m); err != nil {
		t.Fatal(err)
	}
	for _, mp := range []string{"", maskPath} {
		sv, err := SurveyScan(context.Background(), path, mp)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Load(context.Background(), path, Options{MaskPath: mp}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []int{nan, inf0, flat} {
			if sv.Usable[f] || s.Mask.In[f] {
				t.Errorf("mask %q: bad voxel %d usable %v, kept by Load %v", mp, f, sv.Usable[f], s.Mask.In[f])
			}
		}
		for f := range sv.Usable {
			if got := sv.Mask.In[f] && sv.Usable[f]; got != s.Mask.In[f] {
				t.Fatalf("mask %q: voxel %d surveyed %v, Load %v", mp, f, got, s.Mask.In[f])
			}
		}
		if sv.L != s.L || sv.TR != s.TR || sv.Dims != s.Dims || sv.MaskRule != s.MaskRule {
			t.Errorf("mask %q: survey %d volumes TR %g %v %q, Load %d TR %g %v %q", mp, sv.L, sv.TR, sv.Dims, sv.MaskRule, s.L, s.TR, s.Dims, s.MaskRule)
		}
		given, err := Load(context.Background(), path, Options{Mask: &sv.Mask, MaskRule: sv.MaskRule, MaskPath: mp}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if given.N != s.N || given.Passes != 1 || len(given.Data) != len(s.Data) {
			t.Fatalf("mask %q: Load with the surveyed mask: %d nodes in %d pass(es), own passes %d nodes", mp, given.N, given.Passes, s.N)
		}
		for i := range s.Data {
			if given.Data[i] != s.Data[i] {
				t.Fatalf("mask %q: value %d differs", mp, i)
			}
		}
	}
}
