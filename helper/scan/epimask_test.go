package scan

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/internal/shareddata"
)

// epiRefScript reimplements nilearn.masking.compute_epi_mask (nilearn/masking.py,
// nilearn/image/image.py:_compute_mean/smooth_array, nilearn/_utils/ndimage.py:
// largest_connected_component) with numpy + scipy.ndimage, nilearn itself not being
// installed. argv[1]: a JSON list of cases [kind, source, out, lower, upper, step] with kind
// "4d" (mean of a 4D file), "3d" (a 3D image subsampled by step, used as the mean image) or
// "synthetic" (source = seed). Each case writes its mean image to out and the smoothed mean
// to out+".smoothed" (raw float64, Fortran order) and reports the grid, the threshold and
// the mask's flat indices (Fortran order).
const epiRefScript = `
import sys, json
import numpy as np
import nibabel as nib
from scipy import ndimage

def case(kind, src, out, lower, upper, step):
  if kind == "4d":
      img = nib.load(src)
      mean = np.asanyarray(img.dataobj).mean(axis=-1)      # _compute_mean on the 4D data
  elif kind == "3d":
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
  mask = ndimage.binary_fill_holes(mask)  # HubScope's step 5, after nilearn's steps
  arr.ravel(order="F").tofile(out + ".smoothed")
  return {"dims": list(mean.shape), "threshold": float(thr),
          "mask": np.flatnonzero(mask.ravel(order="F")).tolist()}

print(json.dumps([case(*c) for c in json.loads(sys.argv[1])]))
`

type epiRef struct {
	Dims      []int   `json:"dims"`
	Threshold float64 `json:"threshold"`
	Mask      []int   `json:"mask"`
	mean      []float64
	smoothed  []float64
}

// epiCase is one reference computation: kind, source, cutoffs and subsampling step.
type epiCase struct {
	kind, source string
	lower, upper float64
	step         int
}

// runEPIRef runs every case in one Python process (each start costs most of a second).
func runEPIRef(t *testing.T, cases ...epiCase) []epiRef {
	t.Helper()
	pyref.Require(t, "numpy", "scipy", "nibabel")
	dir := t.TempDir()
	var arg [][]any
	for i, c := range cases {
		arg = append(arg, []any{c.kind, c.source, filepath.Join(dir, strconv.Itoa(i)), c.lower, c.upper, c.step})
	}
	js, err := json.Marshal(arg)
	if err != nil {
		t.Fatal(err)
	}
	var refs []epiRef
	if err := json.Unmarshal(pyref.Run(t, epiRefScript, string(js)), &refs); err != nil {
		t.Fatalf("reference output: %v", err)
	}
	if len(refs) != len(cases) {
		t.Fatalf("reference gave %d results for %d cases", len(refs), len(cases))
	}
	for i := range refs {
		refs[i].mean = readFloat64s(t, filepath.Join(dir, strconv.Itoa(i)))
		refs[i].smoothed = readFloat64s(t, filepath.Join(dir, strconv.Itoa(i)+".smoothed"))
	}
	return refs
}

func readFloat64s(t *testing.T, path string) []float64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(raw)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return out
}

// TestEPIMaskMatchesNilearnReference compares every step of EPIMask64 with the scipy
// reimplementation of compute_epi_mask, on real scans' mean images, on real templates used
// as mean images (large grids with many components), and on a synthetic image with NaN/Inf.
func TestEPIMaskMatchesNilearnReference(t *testing.T) {
	data := shareddata.Dir()
	cases := []struct {
		name      string
		c         epiCase
		wantEmpty bool
	}{
		{"haxby 25mm mean", epiCase{"4d", filepath.Join(data, "haxby2001_run001_bold_25mm.nii.gz"), 0.2, 0.85, 1}, false},
		// Three slices or one: the opening erodes everything, in nilearn as here.
		{"nipy functional mean", epiCase{"4d", filepath.Join(data, "nipy_functional.nii.gz"), 0.2, 0.85, 1}, true},
		{"haxby slice mean", epiCase{"4d", filepath.Join(data, "haxby2001_slice_bold.nii.gz"), 0.2, 0.85, 1}, true},
		{"ICBM T1 /4", epiCase{"3d", filepath.Join(data, "nilearn_mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz"), 0.2, 0.85, 4}, false},
		{"ICBM GM /5 cutoffs 0.5 0.9", epiCase{"3d", filepath.Join(data, "nilearn_mni_icbm152_gm_tal_nlin_sym_09a_converted.nii.gz"), 0.5, 0.9, 5}, false},
		{"synthetic", epiCase{"synthetic", "7", 0.2, 0.85, 1}, false},
		{"synthetic cutoffs 0.3 0.7", epiCase{"synthetic", "11", 0.3, 0.7, 1}, false},
	}
	var todo []epiCase
	for _, c := range cases {
		if c.c.kind != "synthetic" {
			if _, err := os.Stat(c.c.source); err != nil {
				if pyref.Strict() {
					t.Fatalf("test data missing: %v", err)
				}
				t.Skipf("test data missing: %v", err)
			}
		}
		todo = append(todo, c.c)
	}
	refs := runEPIRef(t, todo...)
	for ci, c := range cases {
		ref := refs[ci]
		t.Run(c.name, func(t *testing.T) {
			dims := [3]int{ref.Dims[0], ref.Dims[1], ref.Dims[2]}
			if len(ref.mean) != dims[0]*dims[1]*dims[2] {
				t.Fatalf("mean image has %d values for grid %v", len(ref.mean), dims)
			}

			sm := smoothMean(ref.mean, dims)
			for i := range sm {
				if d := math.Abs(sm[i] - ref.smoothed[i]); d > 1e-12*math.Max(1, math.Abs(ref.smoothed[i])) {
					t.Fatalf("smoothed mean at flat %d: got %.17g, scipy %.17g", i, sm[i], ref.smoothed[i])
				}
			}
			tau, ok := epiThreshold(sm, c.c.lower, c.c.upper)
			if !ok || math.Abs(tau-ref.Threshold) > 1e-9*math.Max(1, math.Abs(ref.Threshold)) {
				t.Fatalf("threshold: got %.17g (ok %v), reference %.17g", tau, ok, ref.Threshold)
			}

			m := EPIMask64(ref.mean, dims, c.c.lower, c.c.upper)
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

// TestLargestComponentTie: two components of equal size, one first in NIfTI (Fortran) order
// and the other first in numpy's C order; scipy.ndimage.label numbers labels in C order and
// np.argmax keeps the first, so nilearn keeps the C-order one. So must we.
func TestLargestComponentTie(t *testing.T) {
	pyref.Require(t, "numpy", "scipy")
	dims := [3]int{8, 7, 3}
	in := make([]bool, dims[0]*dims[1]*dims[2])
	set := func(i0, j0 int) {
		for k := 0; k < 2; k++ {
			for j := j0; j < j0+2; j++ {
				for i := i0; i < i0+2; i++ {
					in[i+dims[0]*(j+dims[1]*k)] = true
				}
			}
		}
	}
	set(0, 5)                          // A: first in C order (i slowest)
	set(5, 0)                          // B: first in Fortran order (i fastest)
	in[7+dims[0]*(6+dims[1]*2)] = true // a lone voxel
	var flat []int
	for f, v := range in {
		if v {
			flat = append(flat, f)
		}
	}
	js, _ := json.Marshal(map[string]any{"dims": dims, "flat": flat})
	out := pyref.Run(t, `
import sys, json
import numpy as np
from scipy import ndimage
a = json.loads(sys.argv[1])
m = np.zeros(int(np.prod(a["dims"])), bool)
m[a["flat"]] = True
m = m.reshape(a["dims"], order="F")
labels, n = ndimage.label(m)
count = np.bincount(labels.ravel().astype(int))
count[0] = 0
keep = labels == count.argmax()
print(json.dumps(np.flatnonzero(keep.ravel(order="F")).tolist()))
`, string(js))
	var want []int
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	got := largestComponent(in, dims)
	var gotFlat []int
	for f, v := range got {
		if v {
			gotFlat = append(gotFlat, f)
		}
	}
	if len(want) != 8 || len(gotFlat) != len(want) {
		t.Fatalf("kept %v, scipy %v", gotFlat, want)
	}
	for i := range want {
		if gotFlat[i] != want[i] {
			t.Fatalf("kept %v, scipy %v", gotFlat, want)
		}
	}
	if !got[0+dims[0]*(5+dims[1]*0)] {
		t.Fatalf("kept the Fortran-order-first component")
	}
}

// TestFillHoles: an enclosed cavity is filled, a tunnel to the border is not, and the result
// equals scipy's binary_fill_holes on the same grid.
func TestFillHoles(t *testing.T) {
	dims := [3]int{7, 7, 7}
	in := make([]bool, 343)
	at := func(i, j, k int) int { return i + 7*(j+7*k) }
	for k := 1; k < 6; k++ {
		for j := 1; j < 6; j++ {
			for i := 1; i < 6; i++ {
				in[at(i, j, k)] = true
			}
		}
	}
	in[at(3, 3, 3)] = false // enclosed: filled
	in[at(2, 2, 2)] = false // enclosed: filled
	for i := 0; i < 4; i++ {
		in[at(i, 4, 4)] = false // tunnel from the border to (3,4,4): stays open
	}
	got := fillHoles(in, dims)
	if !got[at(3, 3, 3)] || !got[at(2, 2, 2)] {
		t.Fatal("enclosed holes not filled")
	}
	if got[at(3, 4, 4)] || got[at(0, 4, 4)] {
		t.Fatal("a tunnel open to the border was filled")
	}
	pyref.Require(t, "numpy", "scipy")
	var idx []string
	for f, v := range in {
		if v {
			idx = append(idx, strconv.Itoa(f))
		}
	}
	out := pyref.Run(t, `
import sys, numpy as np
from scipy import ndimage
m = np.zeros(343, bool); m[[int(x) for x in sys.argv[1].split(",")]] = True
m = ndimage.binary_fill_holes(m.reshape((7, 7, 7), order="F"))
print(",".join(map(str, np.flatnonzero(m.ravel(order="F")))))
`, strings.Join(idx, ","))
	var want []string
	for f, v := range got {
		if v {
			want = append(want, strconv.Itoa(f))
		}
	}
	if strings.TrimSpace(string(out)) != strings.Join(want, ",") {
		t.Fatalf("fillHoles differs from scipy's binary_fill_holes")
	}
}

// TestEPIMaskFillsEnclosedCavity: a bright ball (radius 10) with a dark cavity (radius 4) at its
// centre, too large for nilearn's opening/closing to close, ends up inside the mask.
func TestEPIMaskFillsEnclosedCavity(t *testing.T) {
	dims := [3]int{32, 32, 32}
	mean := make([]float32, 32*32*32)
	for k := 0; k < 32; k++ {
		for j := 0; j < 32; j++ {
			for i := 0; i < 32; i++ {
				r := math.Sqrt(float64((i-16)*(i-16) + (j-16)*(j-16) + (k-16)*(k-16)))
				if r <= 10 && r > 4 {
					mean[i+32*(j+32*k)] = 1000 + float32((i*7+j*13+k*3)%11)
				}
			}
		}
	}
	m := EPIMask(mean, dims, 0, 0)
	centre := 16 + 32*(16+32*16)
	if !m.In[centre] {
		t.Fatal("the enclosed cavity was left out of the mask")
	}
	if m.In[0] || m.In[2+32*(16+32*16)] {
		t.Fatal("background outside the ball is in the mask")
	}
}
