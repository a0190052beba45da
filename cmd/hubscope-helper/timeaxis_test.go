package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
)

// TestTimeAxisIndexRun runs `run --time-axis 5 --index 4=I` on a 6×5×4×2×12 image whose
// axis 4 holds two series per voxel: entry 0 constant, entry 1 varying. --index 4=1 makes a
// bundle of 12 time points (also with --realign on, which must realign the same 12 volumes);
// --index 4=0 is refused as constant — the entry chosen is the one read.
func TestTimeAxisIndexRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "echoes.nii.gz")
	h := nifti.NewHeader([]int{6, 5, 4, 2, 12}, nifti.Float32, [4][4]float64{{3, 0, 0, -9}, {0, 3, 0, -7}, {0, 0, 3, -5}, {0, 0, 0, 1}}, 1)
	h.PixDim[5] = 2.5
	n := 6 * 5 * 4
	data := make([]float32, n*24)
	for i := range data {
		v, vol := i%n, i/n
		x, y, z := float64(v%6)-2.5, float64(v/6%5)-2, float64(v/30)-1.5
		// A smooth blob (something for realignment to register) ...
		data[i] = 100 + float32(400*math.Exp(-(x*x+y*y+z*z)/4))
		if vol%2 == 1 { // ... that varies over time in entry 1 of axis 4: volume 1 + 2t
			data[i] += float32(math.Sin(float64(vol / 2 * (v%7 + 1))))
		}
	}
	if err := nifti.WriteImage(path, h, data); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--realign", "on"}} {
		out := filepath.Join(t.TempDir(), "bundle")
		args := append([]string{"run", path, "--out", out, "--backend", "cpu", "--metrics", "none", "--denoise", "none", "--time-axis", "5", "--index", "4=1"}, extra...)
		code, stdout, stderr := runHelper(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", extra, code, stdout, stderr)
		}
		for _, want := range []string{"× 12 time points, TR 2.5 s (header pixdim[", "time series along axis 5 of 5D image [6 5 4 2 12]: 12 volumes, entry 1 of axis 4"} {
			if !strings.Contains(stdout+stderr, want) {
				t.Errorf("%v: output lacks %q:\n%s\n%s", extra, want, stdout, stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(out, "network.npz")); err != nil {
			t.Errorf("%v: %v", extra, err)
		}
	}
	code, _, stderr := runHelper(t, "run", path, "--out", filepath.Join(dir, "b0"), "--backend", "cpu", "--metrics", "none", "--denoise", "none", "--time-axis", "5", "--index", "4=0")
	if code != 1 || !strings.Contains(stderr, "constant") {
		t.Errorf("--index 4=0 (the constant entry): exit %d, %s; want 1 and a constant-series refusal", code, stderr)
	}
}
