package synth

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/internal/shareddata"
)

func TestDemoMask(t *testing.T) {
	m, a, err := DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	if m.Dims != [3]int{46, 55, 46} || m.Count() != 28971 {
		t.Fatalf("demo mask %v with %d voxels, want 46×55×46 with 28971", m.Dims, m.Count())
	}
	want := [4][4]float64{{-4, 0, 0, 89}, {0, 4, 0, -125}, {0, 0, 4, -71}, {0, 0, 0, 1}}
	if !closeAffine(a, want, 1e-4) {
		t.Fatalf("demo affine %v, want %v", a, want)
	}
	// MNI152 space: the anterior commissure (world origin) lies inside the brain.
	ijk, err := scan.WorldToVoxel(a, [3]float64{0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if !m.In[m.Flat(int(math.Round(ijk[0])), int(math.Round(ijk[1])), int(math.Round(ijk[2])))] {
		t.Errorf("world origin (voxel %v) is outside the demo brain mask", ijk)
	}
}

// TestDefaultMask checks the embedded 2 mm mask against the shared data's file it was
// compressed from.
func TestDefaultMask(t *testing.T) {
	m, a, err := DefaultMask()
	if err != nil {
		t.Fatal(err)
	}
	if m.Dims != [3]int{91, 109, 91} || m.Count() != 228483 {
		t.Fatalf("default mask %v with %d voxels, want 91×109×91 with 228483", m.Dims, m.Count())
	}
	if _, err := os.Stat(mni2mm); err != nil {
		t.Skipf("2 mm MNI mask not present: %v", err)
	}
	want, wa, err := ReadMask(mni2mm, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.In, want.In) || a != wa {
		t.Fatalf("embedded 2 mm mask differs from %s", mni2mm)
	}
}

// TestResampleMaskBlockMajority compares 2 mm → 4 mm against numpy: the source padded to even
// sizes, summed over 2×2×2 blocks, kept where at least 4 of 8 voxels are in the mask.
func TestResampleMaskBlockMajority(t *testing.T) {
	if _, err := os.Stat(mni2mm); err != nil {
		t.Skipf("2 mm MNI mask not present: %v", err)
	}
	pyref.Require(t, "numpy", "nibabel")
	src, sa, err := ReadMask(mni2mm, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, ga := ResampleMask(src, sa, 4)
	out := filepath.Join(t.TempDir(), "ref.u8")
	pyref.Run(t, `
import sys, numpy as np, nibabel as nib
img = nib.load(sys.argv[1]); m = np.asarray(img.dataobj) > 0
p = np.zeros(tuple(s + s % 2 for s in m.shape), bool); p[:m.shape[0], :m.shape[1], :m.shape[2]] = m
n = [s // 2 for s in p.shape]
r = p.reshape(n[0], 2, n[1], 2, n[2], 2).sum(axis=(1, 3, 5)) >= 4
a = img.affine.copy(); a[:3, :3] *= 2; a[:3, 3] = img.affine[:3, :3] @ [0.5, 0.5, 0.5] + img.affine[:3, 3]
np.concatenate([np.array(r.shape, '<u1'), r.reshape(-1, order='F').astype('<u1')]).tofile(sys.argv[2])
np.savetxt(sys.argv[2] + '.affine', a)
`, mni2mm, out)
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := [3]int{int(raw[0]), int(raw[1]), int(raw[2])}; d != got.Dims {
		t.Fatalf("grid %v, numpy %v", got.Dims, d)
	}
	for f, in := range got.In {
		if in != (raw[3+f] == 1) {
			t.Fatalf("voxel %d: ResampleMask %v, numpy block majority %v", f, in, raw[3+f] == 1)
		}
	}
	text, err := os.ReadFile(out + ".affine")
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(text)), "\n")
	for r, row := range rows {
		for c, field := range strings.Fields(row) {
			v, _ := strconv.ParseFloat(field, 64)
			if math.Abs(v-ga[r][c]) > 1e-9 {
				t.Fatalf("affine %v, numpy %s", ga, text)
			}
		}
	}
}

func TestResampleMaskGeometry(t *testing.T) {
	src, sa, err := DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	// Same voxel size: the identity.
	same, sameA := ResampleMask(src, sa, 4)
	if same.Dims != src.Dims || !slices.Equal(same.In, src.In) || sameA != sa {
		t.Fatal("resampling to the same voxel size changed the mask")
	}
	srcVol := float64(src.Count()) * 64
	for _, mm := range []float64{2, 3, 5, 6, 8} {
		m, a := ResampleMask(src, sa, mm)
		// The grid covers the same box: first and last voxel faces within one new voxel.
		for ax := range 3 {
			if got := float64(m.Dims[ax]) * mm; got < float64(src.Dims[ax])*4 || got >= float64(src.Dims[ax])*4+mm {
				t.Errorf("%g mm: axis %d spans %g mm for a %g mm source", mm, ax, got, float64(src.Dims[ax])*4)
			}
			if size := math.Hypot(math.Hypot(a[0][ax], a[1][ax]), a[2][ax]); math.Abs(size-mm) > 1e-9 {
				t.Errorf("%g mm: affine column %d has length %g", mm, ax, size)
			}
		}
		// Outer corner of the box unchanged: voxel (−½, −½, −½) maps to the same world point.
		c0 := scan.VoxelToWorld(sa, [3]float64{-0.5, -0.5, -0.5})
		c1 := scan.VoxelToWorld(a, [3]float64{-0.5, -0.5, -0.5})
		for ax := range 3 {
			if math.Abs(c0[ax]-c1[ax]) > 1e-9 {
				t.Errorf("%g mm: box corner moved from %v to %v", mm, c0, c1)
			}
		}
		// Majority resampling keeps the brain's volume to within a few per cent.
		vol := float64(m.Count()) * mm * mm * mm
		if math.Abs(vol/srcVol-1) > 0.06 {
			t.Errorf("%g mm: brain volume %.0f mm³, source %.0f mm³", mm, vol, srcVol)
		}
	}
}

// TestBinaryClosingScipy compares BinaryClosing with scipy.ndimage.binary_closing on random blobs.
func TestBinaryClosingScipy(t *testing.T) {
	pyref.Require(t, "numpy", "scipy")
	rng := rand.New(rand.NewPCG(7, 7))
	d := [3]int{23, 17, 13}
	m := scan.Mask{Dims: d, In: make([]bool, d[0]*d[1]*d[2])}
	for f := range m.In {
		m.In[f] = rng.Float64() < 0.55
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.u8")
	buf := make([]byte, len(m.In))
	for f, x := range m.In {
		if x {
			buf[f] = 1
		}
	}
	if err := os.WriteFile(in, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, it := range []int{1, 2} {
		got := BinaryClosing(m, it)
		out := pyref.Run(t, `
import sys, numpy as np
from scipy import ndimage
m = np.fromfile(sys.argv[1], np.uint8).reshape(int(sys.argv[4]), int(sys.argv[3]), int(sys.argv[2])) > 0
c = ndimage.binary_closing(m, iterations=int(sys.argv[5]))
sys.stdout.write(''.join('1' if x else '0' for x in c.reshape(-1)))
`, in, strconv.Itoa(d[0]), strconv.Itoa(d[1]), strconv.Itoa(d[2]), strconv.Itoa(it))
		if len(out) != len(got.In) {
			t.Fatalf("scipy returned %d voxels for %d", len(out), len(got.In))
		}
		diff := 0
		for f, x := range got.In {
			if x != (out[f] == '1') {
				diff++
			}
		}
		if diff != 0 || got.Count() == m.Count() {
			t.Errorf("%d iterations: %d voxels differ from scipy (closing kept %d of %d)", it, diff, got.Count(), m.Count())
		}
	}
}

func TestReadMaskErrors(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := ReadMask(filepath.Join(dir, "absent.nii.gz"), 0); err == nil || !strings.Contains(err.Error(), "absent.nii.gz") {
		t.Errorf("missing mask: error %v, want one naming the file", err)
	}
	if _, _, err := GreyMatterMask(filepath.Join(dir, "absent.nii.gz"), 0.2); err == nil {
		t.Error("missing grey-matter map accepted")
	}
}

// gm1mm is the 1 mm ICBM 2009a grey-matter probability map (uint8, 0–255) of the shared data.
var gm1mm = filepath.Join(shareddata.Dir(), "nilearn_mni_icbm152_gm_tal_nlin_sym_09a_converted.nii.gz")

// TestGreyMatterMask checks the 1 mm grey-matter mask against nilearn's recipe as scipy computes
// it: (map / 255 > 0.2) closed with two iterations, 1,524,955 voxels (python3 -c "import numpy
// as np, nibabel as nib; from scipy import ndimage; d = np.asarray(nib.load(F).dataobj);
// print(ndimage.binary_closing(d / 255 > 0.2, iterations=2).sum())").
func TestGreyMatterMask(t *testing.T) {
	if raceEnabled {
		t.Skip("decoding 8.7·10⁶ voxels of gzip under -race takes tens of seconds; TestBinaryClosingScipy covers the closing")
	}
	if _, err := os.Stat(gm1mm); err != nil {
		t.Skipf("grey-matter map not present: %v", err)
	}
	m, a, err := GreyMatterMask(gm1mm, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dims != [3]int{197, 233, 189} || m.Count() != 1524955 || a[0][0] != 1 || a[0][3] != -98 {
		t.Fatalf("grey-matter mask %v with %d voxels, affine %v; want 197×233×189 with 1524955", m.Dims, m.Count(), a)
	}
}
