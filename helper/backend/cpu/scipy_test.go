package cpu

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/internal/shareddata"
)

// scipyScript loads a real scan with nibabel (masked series, constant voxels dropped), or
// makes tie-heavy integer data, and writes the float32 series plus scipy's spearmanr and
// kendalltau (τ-b) for all pairs of the first nk rows.
const scipyScript = `
import sys, numpy as np, nibabel as nib
from scipy import stats
kind, out, nk = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == "ties":
    x = np.random.default_rng(7).integers(0, 5, size=(nk, 30)).astype(np.float32)
else:
    img, mask = nib.load(sys.argv[4]), nib.load(sys.argv[5])
    d = np.asarray(img.dataobj).astype(np.float32)
    m = np.asarray(mask.dataobj) != 0
    x = d[m]  # voxels in C order of (i, j, k) × time
x = x[np.ptp(x, axis=1) > 0][:nk]
n, l = x.shape
rho = np.zeros((n, n)); tau = np.zeros((n, n))
for i in range(n):
    for j in range(i + 1, n):
        rho[i, j] = stats.spearmanr(x[i], x[j])[0]
        tau[i, j] = stats.kendalltau(x[i], x[j], variant="b")[0]
x.astype("<f4").tofile(out + "/x.bin")
rho.astype("<f8").tofile(out + "/rho.bin")
tau.astype("<f8").tofile(out + "/tau.bin")
print(n, l)
`

// TestScipyRanks cross-checks Spearman's ρ and Kendall's τ-b with scipy.stats on a real scan
// (Haxby et al. 2001: one slice with 1452 time points and a 25 mm whole-brain run with 121,
// int16 with ties) and on integer data with five levels, to 1e-6.
func TestScipyRanks(t *testing.T) {
	pyref.Require(t, "numpy", "scipy", "nibabel")
	data := shareddata.Dir()
	cases := []struct {
		name string
		args []string
	}{
		{"ties", []string{"ties", "", "40"}},
		{"haxby-slice", []string{"scan", "", "45", filepath.Join(data, "haxby2001_slice_bold.nii.gz"), filepath.Join(data, "haxby2001_slice_mask.nii.gz")}},
		{"haxby-25mm", []string{"scan", "", "60", filepath.Join(data, "haxby2001_run001_bold_25mm.nii.gz"), filepath.Join(data, "haxby2001_mask_25mm_brain.nii.gz")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.args) > 3 {
				if _, err := os.Stat(c.args[3]); err != nil {
					if pyref.Strict() {
						t.Fatalf("test scan missing: %v", err)
					}
					t.Skipf("test scan missing: %v", err)
				}
			}
			dir := t.TempDir()
			c.args[1] = dir
			f := strings.Fields(string(pyref.Run(t, scipyScript, c.args...)))
			n, _ := strconv.Atoi(f[0])
			l, _ := strconv.Atoi(f[1])
			x := readF32(t, filepath.Join(dir, "x.bin"), n*l)
			for _, mc := range []struct {
				m    fc.Measure
				file string
			}{{fc.Spearman, "rho.bin"}, {fc.Kendall, "tau.bin"}} {
				want := readF64(t, filepath.Join(dir, mc.file), n*n)
				be := New(Options{})
				nw, _, err := fc.Build(context.Background(), be, x, n, l,
					fc.Config{Measure: mc.m, Mode: fc.Strength, Threshold: math.Inf(-1), BlockRows: 16}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if nw.Edges() != int64(n*(n-1)/2) {
					t.Fatalf("%s: %d edges, want all %d pairs", mc.m, nw.Edges(), n*(n-1)/2)
				}
				worst := 0.0
				for i := 0; i < n; i++ {
					cols, ws := nw.Row(i)
					for k, j := range cols {
						d := math.Abs(float64(ws[k]) - want[i*n+int(j)])
						worst = max(worst, d)
						if d > 1e-6 {
							t.Fatalf("%s (%d,%d) = %v, scipy %v (L = %d)", mc.m, i, j, ws[k], want[i*n+int(j)], l)
						}
					}
				}
				t.Logf("%s: N=%d L=%d, largest difference from scipy %.2g", mc.m, n, l, worst)
			}
		})
	}
}

func readF32(t *testing.T, path string, n int) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) != 4*n {
		t.Fatalf("read %s: %v (%d bytes, want %d)", path, err, len(b), 4*n)
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x
}

func readF64(t *testing.T, path string, n int) []float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) != 8*n {
		t.Fatalf("read %s: %v (%d bytes, want %d)", path, err, len(b), 8*n)
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return x
}
