package scan

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
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

// TestSurveyKeepGivesLoad: SurveyKeep's survey is SurveyScan's, and Survey.Load gives exactly
// the scan Load gives with the same mask — nodes, series, mask, drop counts, header facts,
// digests — from the kept series (own mask, a mask file, a smaller mask) or by reading the file
// again (a mask beyond the scan's own); SurveyRead gives the own mask's scan from one decoding.
// Stored int16 (plain and scaled), uint16, float32 with NaN, ±Inf and constant voxels, and
// float64.
func TestSurveyKeepGivesLoad(t *testing.T) {
	dims := []int{12, 10, 8, 20}
	G := 12 * 10 * 8
	in := func(f int) bool {
		i, j, k := f%12, (f/12)%10, f/120
		x, y, z := (float64(i)-5.5)/5, (float64(j)-4.5)/4, (float64(k)-3.5)/3
		return x*x+y*y+z*z <= 1
	}
	centre := 6 + 12*(5+10*4)
	data := make([]float32, G*dims[3])
	for t := 0; t < dims[3]; t++ {
		for f := 0; f < G; f++ {
			v := 20 + float32((f*7+t*13)%5)
			if in(f) {
				v = 1000 + float32(math.Round(50*math.Sin(float64(t)*0.7+float64(f))))
			}
			data[t*G+f] = v
		}
	}
	for t := 0; t < dims[3]; t++ {
		data[t*G+centre+12] = 1000 // constant
	}
	dir := t.TempDir()
	m := make([]float32, G)
	small := Mask{Dims: [3]int{12, 10, 8}, In: make([]bool, G)}
	for f := range m {
		if in(f) || f%5 == 0 {
			m[f] = 1
		}
		small.In[f] = in(f) && f%3 != 0
	}
	maskPath := filepath.Join(dir, "mask.nii.gz")
	if err := nifti.WriteImage(maskPath, nifti.NewHeader(dims[:3], nifti.Uint8, testAffine, 0), m); err != nil {
		t.Fatal(err)
	}
	big := Mask{Dims: [3]int{12, 10, 8}, In: make([]bool, G)}
	for f := range big.In {
		big.In[f] = m[f] != 0
	}
	type file struct {
		name  string
		dt    nifti.DataType
		slope float64
		bad   bool
	}
	for _, fl := range []file{{"int16", nifti.Int16, 0, false}, {"uint16", nifti.Uint16, 0, false}, {"int16-scaled", nifti.Int16, 0.5, false}, {"float32", nifti.Float32, 0, true}, {"float64", nifti.Float64, 0, true}} {
		d := append([]float32(nil), data...)
		if fl.bad {
			d[5*G+centre] = float32(math.NaN())
			d[0*G+centre+1] = float32(math.Inf(1))
			d[3*G+centre+2] += 0.25
		}
		h := nifti.NewHeader(dims, fl.dt, testAffine, 2)
		if fl.slope != 0 {
			h.SclSlope, h.SclInter = fl.slope, 3
			for i := range d {
				d[i] = float32(float64(d[i])*fl.slope + 3)
			}
		}
		path := filepath.Join(dir, fl.name+".nii.gz")
		if err := nifti.WriteImage(path, h, d); err != nil {
			t.Fatal(err)
		}
		var scratch Scratch
		for _, mp := range []string{"", maskPath} {
			sv, err := SurveyKeep(context.Background(), path, mp, &scratch)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := SurveyScan(context.Background(), path, mp)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sv.Usable, ref.Usable) || !reflect.DeepEqual(sv.Mask, ref.Mask) || sv.MaskRule != ref.MaskRule || sv.Note != ref.Note || sv.L != ref.L || sv.TR != ref.TR {
				t.Fatalf("%s mask %q: SurveyKeep's survey differs from SurveyScan's", fl.name, mp)
			}
			if sv.KeptBytes() == 0 {
				t.Fatalf("%s mask %q: nothing kept", fl.name, mp)
			}
			for _, c := range []struct {
				name string
				mask *Mask
				rule string
			}{{"own", &sv.Mask, sv.MaskRule}, {"smaller", &small, "a smaller mask"}, {"larger", &big, "union"}} {
				want, err := Load(context.Background(), path, Options{Mask: c.mask, MaskRule: c.rule, MaskPath: mp}, nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err := sv.Load(context.Background(), c.mask, c.rule)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s mask %q, %s mask: Survey.Load gives %d nodes %+v, Load %d nodes %+v", fl.name, mp, c.name, got.N, got.Dropped, want.N, want.Dropped)
				}
			}
			// SurveyRead: the same survey and the own mask's scan, from one decoding.
			rs, got, err := SurveyRead(context.Background(), path, mp, &scratch)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Load(context.Background(), path, Options{Mask: &sv.Mask, MaskRule: sv.MaskRule, MaskPath: mp}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(rs.Usable, ref.Usable) || !reflect.DeepEqual(rs.Mask, ref.Mask) || rs.KeptBytes() != 0 {
				t.Errorf("%s mask %q: SurveyRead's scan or survey differs from Load's (kept %d bytes)", fl.name, mp, rs.KeptBytes())
			}
			if fl.bad && (sv.Usable[centre] || sv.Usable[centre+1] || sv.Usable[centre+12]) {
				t.Errorf("%s: a NaN, Inf or constant voxel is usable", fl.name)
			}
			sv.Release()
			if sv.KeptBytes() != 0 {
				t.Errorf("released, still %d bytes", sv.KeptBytes())
			}
		}
	}
}
