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
		path string
		axis int
		want string
	}{
		{five, 0, "five.nii: 5D image [4 3 2 2 6]: its volumes lie along axis [4 5], not only axis 4; name the time axis with --time-axis"},
		{five, 5, "five.nii: 5D image [4 3 2 2 6]: axis 4 has 2 entries besides the time axis 5"},
		{five, 4, "axis 5 has 6 entries besides the time axis 4"},
		{single, 0, "single.nii.gz: 5D image [4 3 2 1 6]: its volumes lie along axis [5]"},
		{single, 6, "single.nii.gz: time axis 6 named, but the image has 5 dimensions"},
		{single, 3, "single.nii.gz: time axis 3: the time axis is one of 4 to 7"},
	} {
		_, err := Load(context.Background(), c.path, Options{MaskPath: all, TimeAxis: c.axis}, nil)
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
