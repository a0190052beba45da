package scan

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// epiRefScript reimplements nilearn.masking.compute_epi_mask (nilearn/masking.py,
// nilearn/image/image.py:_compute_mean/smooth_array, nilearn/_utils/ndimage.py:
// largest_connected_component) with numpy + scipy.ndimage, nilearn itself not being
// installed. argv: source kind ("4d" path | "3d" path step | "synthetic" seed), output file
// for the mean image (raw float64, Fortran order), lower, upper. It prints JSON with the
// grid, the smoothed mean's threshold and the mask's flat indices (Fortran order).
const epiRefScript = `
import sys, json
import numpy as np
import nibabel as nib
from scipy import ndimage

kind, src, out, lower, upper = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
if kind == "4d":
    img = nib.load(src)
    mean = np.asanyarray(img.dataobj).mean(axis=-1)      # _compute_mean on the 4D data
elif kind == "3d":
    step = int(sys.argv[6])
    mean = np.asanyarray(nib.load(src).dataobj)[::step, ::step, ::step].astype(np.float64)
else:  # synthetic: a noisy ellipsoid "brain", a detached blob, NaN and Inf voxels
    rng = np.random.default_rng(int(src))
    x, y, z = np.mgrid[0:23, 0:29, 0:19].astype(float)
    brain = ((x - 11) / 9) ** 2 + ((y - 14) / 12) ** 2 + ((z - 9) / 7.5) ** 2 <= 1
    blob = ((x - 20) ** 2 + (y - 3) ** 2 + (z - 3) ** 2) <= 4
    mean = 100 + 10 * rng.standard_normal(x.shape)
    mean[brain] += 800 + 50 * rng.standard_normal(brain.sum())
    mean[blob] += 700
    mean[2, 2, 2] = np.nan
    mean[11, 14, 9] = np.nan
    mean[12, 14, 9] = np.inf
mean = np.asarray(mean, dtype=np.float64)
mean.ravel(order="F").tofile(out)

# _compute_mean(smooth=1): smooth_array(fwhm=1, affine=eye(4)) in place, NaN put back.
arr = mean.copy()
nan_mask = np.isnan(arr)
arr[np.logical_not(np.isfinite(arr))] = 0
sigma = 1.0 / np.sqrt(8 * np.log(2))
for n in range(3):
    ndimage.gaussian_filter1d(arr, sigma, output=arr, axis=n)
arr[nan_mask] = np.nan
# compute_epi_mask, ensure_finite=True, exclude_zeros=False
arr[np.logical_not(np.isfinite(arr))] = 0
s = np.sort(np.ravel(arr))
lo = int(np.floor(lower * len(s)))
up = min(int(np.floor(upper * len(s))), len(s) - 1)
delta = s[lo + 1:up + 1] - s[lo:up]
ia = delta.argmax()
thr = 0.5 * (s[ia + lo] + s[ia + lo + 1])
mask = arr >= thr
# _post_process_mask(opening=2, connected=True)
opening = 2
mask = ndimage.binary_erosion(mask, iterations=opening)
if mask.any():
    labels, nlab = ndimage.label(mask)
    if nlab > 1:
        count = np.bincount(labels.ravel().astype(int))
        count[0] = 0
        mask = labels == count.argmax()
mask = ndimage.binary_dilation(mask, iterations=2 * opening)
mask = ndimage.binary_erosion(mask, iterations=opening)
print(json.dumps({"dims": list(mean.shape), "threshold": float(thr),
                  "smoothed": arr.ravel(order="F").tolist(),
                  "mask": np.flatnonzero(mask.ravel(order="F")).tolist()}))
`

type epiRef struct {
	Dims      []int     `json:"dims"`
	Threshold float64   `json:"threshold"`
	Smoothed  []float64 `json:"smoothed"`
	Mask      []int     `json:"mask"`
	mean      []float64
}

func runEPIRef(t *testing.T, lower, upper float64, source ...string) epiRef {
	t.Helper()
	pyref.Require(t, "numpy", "scipy", "nibabel")
	out := filepath.Join(t.TempDir(), "mean.f64")
	args := []string{source[0], source[1], out, strconv.FormatFloat(lower, 'g', -1, 64), strconv.FormatFloat(upper, 'g', -1, 64)}
	args = append(args, source[2:]...)
	var ref epiRef
	if err := json.Unmarshal(pyref.Run(t, epiRefScript, args...), &ref); err != nil {
		t.Fatalf("reference output: %v", err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ref.mean = make([]float64, len(raw)/8)
	for i := range ref.mean {
		ref.mean[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return ref
}

// TestEPIMaskMatchesNilearnReference compares every step of EPIMask64 with the scipy
// reimplementation of compute_epi_mask, on real scans' mean images, on real templates used
// as mean images (large grids with many components), and on a synthetic image with NaN/Inf.
func TestEPIMaskMatchesNilearnReference(t *testing.T) {
	data := "/work/shared/data"
	if d := os.Getenv("HUBSCOPE_DATA"); d != "" {
		data = d
	}
	cases := []struct {
		name         string
		lower, upper float64
		source       []string
		wantEmpty    bool
	}{
		{"haxby 25mm mean", 0.2, 0.85, []string{"4d", filepath.Join(data, "haxby2001_run001_bold_25mm.nii.gz")}, false},
		// Three slices or one: the opening erodes everything, in nilearn as here.
		{"nipy functional mean", 0.2, 0.85, []string{"4d", filepath.Join(data, "nipy_functional.nii.gz")}, true},
		{"haxby slice mean", 0.2, 0.85, []string{"4d", filepath.Join(data, "haxby2001_slice_bold.nii.gz")}, true},
		{"ICBM T1 /3", 0.2, 0.85, []string{"3d", filepath.Join(data, "nilearn_mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz"), "3"}, false},
		{"ICBM GM /4 cutoffs 0.5 0.9", 0.5, 0.9, []string{"3d", filepath.Join(data, "nilearn_mni_icbm152_gm_tal_nlin_sym_09a_converted.nii.gz"), "4"}, false},
		{"synthetic", 0.2, 0.85, []string{"synthetic", "7"}, false},
		{"synthetic cutoffs 0.3 0.7", 0.3, 0.7, []string{"synthetic", "11"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.source[0] != "synthetic" {
				if _, err := os.Stat(c.source[1]); err != nil {
					if pyref.Strict() {
						t.Fatalf("test data missing: %v", err)
					}
					t.Skipf("test data missing: %v", err)
				}
			}
			ref := runEPIRef(t, c.lower, c.upper, c.source...)
			dims := [3]int{ref.Dims[0], ref.Dims[1], ref.Dims[2]}
			if len(ref.mean) != dims[0]*dims[1]*dims[2] {
				t.Fatalf("mean image has %d values for grid %v", len(ref.mean), dims)
			}

			sm := smoothMean(ref.mean, dims)
			for i := range sm {
				if d := math.Abs(sm[i] - ref.Smoothed[i]); d > 1e-12*math.Max(1, math.Abs(ref.Smoothed[i])) {
					t.Fatalf("smoothed mean at flat %d: got %.17g, scipy %.17g", i, sm[i], ref.Smoothed[i])
				}
			}
			tau, ok := epiThreshold(sm, c.lower, c.upper)
			if !ok || math.Abs(tau-ref.Threshold) > 1e-9*math.Max(1, math.Abs(ref.Threshold)) {
				t.Fatalf("threshold: got %.17g (ok %v), reference %.17g", tau, ok, ref.Threshold)
			}

			m := EPIMask64(ref.mean, dims, c.lower, c.upper)
			var got []int
			for f, in := range m.In {
				if in {
					got = append(got, f)
				}
			}
			if c.wantEmpty != (len(ref.Mask) == 0) {
				t.Fatalf("reference mask has %d voxels; the case expects empty=%v", len(ref.Mask), c.wantEmpty)
			}
			if len(got) != len(ref.Mask) {
				t.Fatalf("mask has %d voxels, reference %d", len(got), len(ref.Mask))
			}
			for i := range got {
				if got[i] != ref.Mask[i] {
					t.Fatalf("mask differs: voxel #%d is flat %d, reference %d", i, got[i], ref.Mask[i])
				}
			}
			t.Logf("%v grid, threshold %.6g, %d voxels in mask", dims, tau, len(got))
		})
	}
}

// TestEPIMaskFloat32 checks that the float32 entry point gives the float64 one's mask.
func TestEPIMaskFloat32(t *testing.T) {
	dims := [3]int{12, 13, 11}
	mean32 := make([]float32, dims[0]*dims[1]*dims[2])
	mean64 := make([]float64, len(mean32))
	for k := 0; k < dims[2]; k++ {
		for j := 0; j < dims[1]; j++ {
			for i := 0; i < dims[0]; i++ {
				d := math.Hypot(math.Hypot(float64(i)-6, float64(j)-6), float64(k)-5)
				v := float32(50 + 7*math.Sin(float64(i*j+k)))
				if d < 4.5 {
					v += 900
				}
				f := i + dims[0]*(j+dims[1]*k)
				mean32[f], mean64[f] = v, float64(v)
			}
		}
	}
	a := EPIMask(mean32, dims, 0, 0)
	b := EPIMask64(mean64, dims, DefaultLowerCutoff, DefaultUpperCutoff)
	if a.Count() == 0 || a.Count() != b.Count() {
		t.Fatalf("float32 mask %d voxels, float64 %d", a.Count(), b.Count())
	}
	for i := range a.In {
		if a.In[i] != b.In[i] {
			t.Fatalf("masks differ at flat %d", i)
		}
	}
}

func TestReflectIndex(t *testing.T) {
	// scipy "reflect" on [a b c]: ... c b a | a b c | c b a ...
	want := map[int]int{-4: 2, -3: 2, -2: 1, -1: 0, 0: 0, 1: 1, 2: 2, 3: 2, 4: 1, 5: 0, 6: 0, 7: 1}
	for p, w := range want {
		if got := reflectIndex(p, 3); got != w {
			t.Errorf("reflectIndex(%d, 3) = %d, want %d", p, got, w)
		}
	}
	for p := -5; p <= 5; p++ {
		if got := reflectIndex(p, 1); got != 0 {
			t.Errorf("reflectIndex(%d, 1) = %d, want 0", p, got)
		}
	}
}
