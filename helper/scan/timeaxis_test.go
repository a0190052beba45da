package scan

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
)

// write5D writes a float32 image of the given dims (5 or more) with distinct series.
func write5D(t *testing.T, path string, dims []int, pixdim5 float64) {
	t.Helper()
	h := nifti.NewHeader(dims, nifti.Float32, testAffine, 2)
	h.PixDim[5] = pixdim5
	n := h.VoxelsPerVolume() * h.Volumes()
	data := make([]float32, n)
	for v := range data {
		data[v] = synthValue(v%4, v/4%3, v/12%2, v/24)
	}
	if err := nifti.WriteImage(path, h, data); err != nil {
		t.Fatal(err)
	}
}

// TestTimeAxis: a 5D image is never read as one long series by accident (issue: a
// 4×3×2×2×6 image was read as 12 volumes at "TR 1 s"); naming the time axis reads an image
// whose other extra axes have length 1, with the TR of that axis.
func TestTimeAxis(t *testing.T) {
	dir := t.TempDir()
	five := filepath.Join(dir, "five.nii")
	write5D(t, five, []int{4, 3, 2, 2, 6}, 1.5)
	single := filepath.Join(dir, "single.nii.gz")
	write5D(t, single, []int{4, 3, 2, 1, 6}, 1.5)
	all := filepath.Join(dir, "all.nii")
	writeScan(t, all, []int{4, 3, 2}, testAffine, func(i, j, k, _ int) float32 { return 1 })

	for _, c := range []struct {
		path  string
		axis  int
		want  string
		index map[int]int
	}{
		{five, 0, "five.nii: 5D image [4 3 2 2 6]: its volumes lie along axis [4 5], not only axis 4; name the time axis with --time-axis", nil},
		{five, 5, "five.nii: 5D image [4 3 2 2 6]: axis 4 has 2 entries besides the time axis 5", nil},
		{five, 4, "axis 5 has 6 entries besides the time axis 4", nil},
		{single, 0, "single.nii.gz: 5D image [4 3 2 1 6]: its volumes lie along axis [5]", nil},
		{single, 6, "single.nii.gz: time axis 6 named, but the image has 5 dimensions", nil},
		{single, 3, "single.nii.gz: time axis 3: the time axis is one of 4 to 7", nil},
		{five, 5, "five.nii: --index 4=2: axis 4 has 2 entries (0 to 1)", map[int]int{4: 2}},
		{five, 5, "five.nii: --index 4=-1: axis 4 has 2 entries (0 to 1)", map[int]int{4: -1}},
		{five, 5, "five.nii: --index 5=0: axis 5 is the time axis", map[int]int{4: 0, 5: 0}},
		{five, 0, "five.nii: --index 4=0: axis 4 is the time axis", map[int]int{4: 0}},
		{five, 5, "five.nii: --index 6=0: the image has 5 dimensions [4 3 2 2 6]", map[int]int{4: 0, 6: 0}},
		{five, 5, "five.nii: --index 8=0: the axis is one of 4 to 7", map[int]int{8: 0}},
		{five, 4, "five.nii: 5D image [4 3 2 2 6]: axis 5 has 6 entries besides the time axis 4; choose one with --index 5=I (0 to 5)", nil},
	} {
		_, err := Load(context.Background(), c.path, Options{MaskPath: all, TimeAxis: c.axis, Index: c.index}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s axis %d: %v; want %q", filepath.Base(c.path), c.axis, err, c.want)
		}
	}
	s, err := Load(context.Background(), single, Options{MaskPath: all, TimeAxis: 5}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 24 || s.L != 6 || s.TR != 1.5 || s.TRSource != "TR 1.5 s (header pixdim[5] = 1.5 s)" {
		t.Errorf("read %d×%d, TR %g (%s); want 24×6 at 1.5 s from pixdim[5]", s.N, s.L, s.TR, s.TRSource)
	}
	for v := 0; v < s.N; v++ {
		for tt := 0; tt < s.L; tt++ {
			if got, want := s.Series(v)[tt], synthValue(v%4, v/4%3, v/12, tt); got != want {
				t.Fatalf("node %d t %d = %g, want %g", v, tt, got, want)
			}
		}
	}
}

// TestTimeAxisIndex reads one entry of another extra axis (issue 17: a 5D x×y×z×2×60 image
// is two series per voxel; --time-axis 5 --index 4=1 reads the second): the series are the
// volumes i₄ + n₄·t of the file, through gzip too (where the others are read and passed
// over) and with the automatic mask's first pass, and the TR is the time axis's.
func TestTimeAxisIndex(t *testing.T) {
	dir := t.TempDir()
	all := filepath.Join(dir, "all.nii")
	writeScan(t, all, []int{4, 3, 2}, testAffine, func(i, j, k, _ int) float32 { return 1 })
	for _, name := range []string{"echoes.nii", "echoes.nii.gz"} {
		path := filepath.Join(dir, name)
		write5D(t, path, []int{4, 3, 2, 2, 6}, 1.5)
		for _, c := range []struct {
			mask  string
			axis  int
			index map[int]int
			l     int
			file  func(tt int) int // the file volume of time point tt
		}{
			{all, 5, map[int]int{4: 1}, 6, func(tt int) int { return 1 + 2*tt }},
			{all, 5, map[int]int{4: 0}, 6, func(tt int) int { return 2 * tt }},
			{"", 5, map[int]int{4: 1}, 6, func(tt int) int { return 1 + 2*tt }},
		} {
			s, err := Load(context.Background(), path, Options{MaskPath: c.mask, TimeAxis: c.axis, Index: c.index}, nil)
			if err != nil {
				t.Fatalf("%s %v: %v", name, c.index, err)
			}
			if s.L != c.l || s.TR != 1.5 {
				t.Errorf("%s %v: %d volumes at TR %g, want %d at 1.5", name, c.index, s.L, s.TR, c.l)
			}
			for v := 0; v < s.N; v++ {
				ijk := s.IJK[v]
				for tt := 0; tt < s.L; tt++ {
					if got, want := s.Series(v)[tt], synthValue(int(ijk[0]), int(ijk[1]), int(ijk[2]), c.file(tt)); got != want {
						t.Fatalf("%s %v mask %q: voxel %v t %d = %g, want %g (file volume %d)", name, c.index, c.mask, ijk, tt, got, want, c.file(tt))
					}
				}
			}
		}
	}
}

// TestSelectVolumes checks the volume arithmetic on a 7D header: entries (i₄, i₅, i₆, i₇)
// lie at i₄ + n₄·(i₅ + n₅·(i₆ + n₆·i₇)).
func TestSelectVolumes(t *testing.T) {
	h := nifti.NewHeader([]int{2, 2, 2, 3, 4, 5, 2}, nifti.Float32, testAffine, 1)
	sel, err := SelectVolumes(&h, 6, map[int]int{4: 2, 5: 1, 7: 1})
	if err != nil {
		t.Fatal(err)
	}
	for tt, v := range sel {
		if want := 2 + 3*(1+4*(tt+5*1)); v != want {
			t.Errorf("t %d: volume %d, want %d", tt, v, want)
		}
	}
	if len(sel) != 5 {
		t.Errorf("%d volumes, want 5", len(sel))
	}
	four := nifti.NewHeader([]int{2, 2, 2, 7}, nifti.Float32, testAffine, 1)
	if sel, err := SelectVolumes(&four, 0, nil); sel != nil || err != nil {
		t.Errorf("4D: %v, %v; want every volume (nil)", sel, err)
	}
}
