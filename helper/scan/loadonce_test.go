package scan

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
)

// TestLoadOnceMatchesTwoPasses: with the automatic mask, Load decodes the file once and keeps
// the stored volumes (loadOnce); the scan it gives — nodes, series, mask and rule, drop
// counts, mean image, header facts, digests — and its notes are those of the two passes
// (mean image, then series) that a scan over loadOnceLimit still takes, bit for bit. Stored
// int16 (plain and scaled), uint16, float32 with NaN, ±Inf and constant voxels, float64, a
// 5D image read along axis 5, and the real Haxby runs (int16, gzip).
func TestLoadOnceMatchesTwoPasses(t *testing.T) {
	dims := []int{12, 10, 8, 21}
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
	type file struct {
		path  string
		axis  int
		index map[int]int
		mask  string // a user mask: the series from one inflation without any statistics
	}
	var files []file
	for _, fl := range []struct {
		name  string
		dt    nifti.DataType
		slope float64
		bad   bool
	}{{"int16.nii.gz", nifti.Int16, 0, false}, {"uint16.nii", nifti.Uint16, 0, false}, {"int16-scaled.nii.gz", nifti.Int16, 0.5, false},
		{"float32.nii.gz", nifti.Float32, 0, true}, {"float64.nii", nifti.Float64, 0, true}} {
		d := append([]float32(nil), data...)
		if fl.bad {
			d[5*G+centre] = float32(math.NaN())
			d[0*G+centre+1] = float32(math.Inf(1))
			d[7*G+centre+3] = float32(math.Inf(-1))
			d[3*G+centre+2] += 0.25
		}
		h := nifti.NewHeader(dims, fl.dt, testAffine, 2)
		if fl.slope != 0 {
			h.SclSlope, h.SclInter = fl.slope, 3
			for i := range d {
				d[i] = float32(float64(d[i])*fl.slope + 3)
			}
		}
		path := filepath.Join(dir, fl.name)
		if err := nifti.WriteImage(path, h, d); err != nil {
			t.Fatal(err)
		}
		files = append(files, file{path: path})
	}
	maskPath := filepath.Join(dir, "mask.nii.gz")
	m := make([]float32, G)
	for f := range m {
		if in(f) || f%5 == 0 {
			m[f] = 1
		}
	}
	if err := nifti.WriteImage(maskPath, nifti.NewHeader(dims[:3], nifti.Uint8, testAffine, 0), m); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		files = append(files, file{path: f.path, mask: maskPath})
	}
	echoes := filepath.Join(dir, "echoes.nii.gz")
	write5D(t, echoes, []int{4, 3, 2, 2, 6}, 1.5)
	files = append(files, file{path: echoes, axis: 5, index: map[int]int{4: 1}})
	load := func(t *testing.T, f file, mean bool, limit int64) (*Scan, *recorder) {
		t.Helper()
		defer func(old int64) { loadOnceLimit = old }(loadOnceLimit)
		loadOnceLimit = limit
		rep := &recorder{}
		rep.onAdd = func(int64) { rep.mu.Lock(); rep.calls++; rep.mu.Unlock() }
		s, err := Load(context.Background(), f.path, Options{Mean: mean, TimeAxis: f.axis, Index: f.index, MaskPath: f.mask}, rep)
		if err != nil {
			t.Fatal(err)
		}
		return s, rep
	}
	check := func(t *testing.T, f file) {
		for _, mean := range []bool{false, true} {
			once, orep := load(t, f, mean, KeepLimit)
			twice, trep := load(t, f, mean, -1)
			if passes := 3 - min(len(f.mask), 1); once.Passes != 1 || twice.Passes != passes-1 || once.BytesRead*int64(passes-1) != twice.BytesRead {
				t.Fatalf("%s: %d bytes in %d passes and %d in %d; want %d passes without the stored volumes kept",
					f.path, once.BytesRead, once.Passes, twice.BytesRead, twice.Passes, passes-1)
			}
			if len(once.Mean) != len(twice.Mean) {
				t.Fatalf("%s: mean image of %d voxels, two passes %d", f.path, len(once.Mean), len(twice.Mean))
			}
			for i, m := range once.Mean { // NaN where a series has one: compared by its bits
				if math.Float32bits(m) != math.Float32bits(twice.Mean[i]) {
					t.Fatalf("%s: mean of voxel %d %g, two passes %g", f.path, i, m, twice.Mean[i])
				}
			}
			once.BytesRead, once.Passes, once.Mean = twice.BytesRead, twice.Passes, twice.Mean
			if !reflect.DeepEqual(once, twice) {
				t.Fatalf("%s (mean %v): the scan from one decoding differs from the two passes'", f.path, mean)
			}
			if mean && once.Mean == nil {
				t.Fatalf("%s: no mean image", f.path)
			}
			if !reflect.DeepEqual(orep.notes, trep.notes) {
				t.Fatalf("%s: notes %q, two passes %q", f.path, orep.notes, trep.notes)
			}
			if len(orep.stages) != 1 || orep.stages[0] != "load" || orep.adds[0] != int64(once.L) {
				t.Fatalf("%s: progress stages %v adds %v; want one load stage of %d volumes", f.path, orep.stages, orep.adds, once.L)
			}
			// With a user mask, an inflated file's series come at once (one progress step).
			if f.mask != "" && inflates(t, f.path) != (orep.calls == 1) {
				t.Fatalf("%s: %d progress steps; the file inflates at once: %v", f.path, orep.calls, inflates(t, f.path))
			}
		}
	}
	for _, f := range files {
		check(t, f)
	}
	t.Run("haxby", func(t *testing.T) {
		const slice, run = "haxby2001_slice_bold.nii.gz", "haxby2001_run001_bold_25mm.nii.gz"
		d := dataDir(t, slice, run)
		check(t, file{path: filepath.Join(d, slice)})
		check(t, file{path: filepath.Join(d, run)})
		if _, err := os.Stat(filepath.Join(d, "haxby2001_mask_25mm_brain.nii.gz")); err == nil {
			check(t, file{path: filepath.Join(d, run), mask: filepath.Join(d, "haxby2001_mask_25mm_brain.nii.gz")})
			check(t, file{path: filepath.Join(d, slice), mask: filepath.Join(d, "haxby2001_slice_mask.nii.gz")})
		}
	})
}

// inflates reports whether path is inflated in one call by this build (nifti.Reader.InflateAll).
func inflates(t *testing.T, path string) bool {
	t.Helper()
	r, err := nifti.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v, _ := r.InflateAll(nil)
	return v != nil
}
