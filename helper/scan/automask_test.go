package scan

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestAutoMaskRules builds one image for each rule: a head in noisy background
// (compute_epi_mask stands), a pre-masked slab three voxels thick (the opening erodes it
// all; the threshold alone keeps it) and an image whose bright voxels are constant (the
// threshold keeps none that change; every changing voxel is taken).
func TestAutoMaskRules(t *testing.T) {
	type img struct {
		dims     [3]int
		mean     []float64
		changing []bool
	}
	build := func(dims [3]int, f func(i, j, k int) (float64, bool)) img {
		m := img{dims: dims, mean: make([]float64, dims[0]*dims[1]*dims[2]), changing: make([]bool, dims[0]*dims[1]*dims[2])}
		for k := 0; k < dims[2]; k++ {
			for j := 0; j < dims[1]; j++ {
				for i := 0; i < dims[0]; i++ {
					f0 := i + dims[0]*(j+dims[1]*k)
					m.mean[f0], m.changing[f0] = f(i, j, k)
				}
			}
		}
		return m
	}
	head := build([3]int{24, 24, 24}, func(i, j, k int) (float64, bool) {
		r := math.Sqrt(float64((i-12)*(i-12) + (j-12)*(j-12) + (k-12)*(k-12)))
		if r < 8 {
			return 1000, true
		}
		return 20 + float64((i*7+j*3+k)%5), true // Rician-like background noise: changes too
	})
	slab := build([3]int{20, 20, 3}, func(i, j, k int) (float64, bool) {
		if i >= 3 && i < 17 && j >= 3 && j < 17 {
			return 800 + float64(i+j), true
		}
		return 0, false
	})
	flatBright := build([3]int{10, 10, 10}, func(i, j, k int) (float64, bool) {
		if k < 5 {
			return 1000, false // a constant bright floor
		}
		return 100, true
	})
	cases := []struct {
		name string
		im   img
		rule string
		n    int // expected voxels, -1: only more than 0
	}{
		{"head in noise", head, MaskRuleEPI, -1},
		{"pre-masked slab", slab, MaskRuleThreshold, 14 * 14 * 3},
		{"constant bright floor", flatBright, MaskRuleSignal, 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, rule, note := AutoMask(c.im.mean, c.im.changing, c.im.dims, 0, 0)
			t.Log(note)
			if rule != c.rule {
				t.Fatalf("rule %q, want %q (%s)", rule, c.rule, note)
			}
			n := m.Count()
			if (c.n >= 0 && n != c.n) || n == 0 {
				t.Errorf("%d voxels, want %d", n, c.n)
			}
			if !strings.Contains(note, rule) || !strings.Contains(note, itoa(n)+" voxels") {
				t.Errorf("note %q does not name the rule and the count %d", note, n)
			}
			for f, in := range m.In {
				if in && !c.im.changing[f] && rule != MaskRuleEPI {
					t.Fatalf("voxel %d kept without a changing signal", f)
				}
			}
		})
	}
	// On the head, the rule is nilearn's mask unchanged.
	m, _, _ := AutoMask(head.mean, head.changing, head.dims, 0, 0)
	want := EPIMask64(head.mean, head.dims, 0, 0)
	for f := range m.In {
		if m.In[f] != want.In[f] {
			t.Fatalf("voxel %d differs from compute_epi_mask", f)
		}
	}
}

// TestLoadShippedScansWithoutMask: each shipped 4D scan loads without a mask file; nilearn's
// compute_epi_mask finds 0, 0 and 18 voxels on them (cropped or already masked images), so a
// fallback rule must take over and keep more.
func TestLoadShippedScansWithoutMask(t *testing.T) {
	files := []string{"nipy_functional.nii.gz", "haxby2001_slice_bold.nii.gz", "haxby2001_run001_bold_25mm.nii.gz"}
	dir := dataDir(t, files...)
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			rec := &recorder{}
			s, err := Load(context.Background(), filepath.Join(dir, f), Options{}, rec)
			if err != nil {
				t.Fatal(err)
			}
			if s.MaskRule == MaskRuleEPI || s.MaskRule == "" {
				t.Errorf("rule %q: compute_epi_mask should have been passed over", s.MaskRule)
			}
			if s.N <= 18 {
				t.Errorf("%d nodes: no more than compute_epi_mask's", s.N)
			}
			found := false
			for _, n := range rec.notes {
				found = found || strings.Contains(n, s.MaskRule)
			}
			if !found {
				t.Errorf("no note names the rule %q: %q", s.MaskRule, rec.notes)
			}
			t.Logf("%s: %d nodes (%d in mask): %s", f, s.N, s.Dropped.MaskVoxels, s.MaskRule)
		})
	}
}
