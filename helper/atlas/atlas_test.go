package atlas

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
)

// A 4×3×2 atlas at 2 mm with origin (−10, −20, 30): label = 1 + i + 4j (+ 12 in slice k = 1),
// 0 in voxel (0, 0, 0).
func writeToyAtlas(t *testing.T, dir string) string {
	t.Helper()
	aff := [4][4]float64{{2, 0, 0, -10}, {0, 2, 0, -20}, {0, 0, 2, 30}, {0, 0, 0, 1}}
	h := nifti.NewHeader([]int{4, 3, 2}, nifti.Int16, aff, 0)
	data := make([]float32, 24)
	for k := 0; k < 2; k++ {
		for j := 0; j < 3; j++ {
			for i := 0; i < 4; i++ {
				data[i+4*(j+3*k)] = float32(1 + i + 4*j + 12*k)
			}
		}
	}
	data[0] = 0
	p := filepath.Join(dir, "toy.nii.gz")
	if err := nifti.WriteImage(p, h, data); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRegionLookup(t *testing.T) {
	dir := t.TempDir()
	p := writeToyAtlas(t, dir)
	os.WriteFile(filepath.Join(dir, "toy.nii.txt"), []byte("# index name code\n2 Precentral_L 2001\n14 Cuneus_R 5002\n"), 0o644)
	a, err := Load(p, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		xyz  [3]float64
		id   int
		name string
	}{
		{[3]float64{-8, -20, 30}, 2, "Precentral_L"},       // voxel (1,0,0)
		{[3]float64{-7.1, -20.9, 30.9}, 2, "Precentral_L"}, // rounds to the same voxel
		{[3]float64{-8, -20, 32}, 14, "Cuneus_R"},          // voxel (1,0,1)
		{[3]float64{-4, -16, 30}, 12, "region 12"},         // voxel (3,2,0), unnamed
		{[3]float64{-10, -20, 30}, 0, ""},                  // label 0
		{[3]float64{-12.5, -20, 30}, 0, ""},                // outside the grid
	} {
		id, name := a.Region(c.xyz)
		if id != c.id || name != c.name {
			t.Errorf("Region(%v) = %d %q, want %d %q", c.xyz, id, name, c.id, c.name)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	p := writeToyAtlas(t, dir)
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("Precentral_L 1\n"), 0o644)
	if _, err := Load(p, bad); err == nil || !strings.Contains(err.Error(), "bad.txt:1") {
		t.Errorf("bad names file: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "none.nii.gz"), ""); err == nil || !strings.Contains(err.Error(), "none.nii.gz") {
		t.Errorf("missing atlas: %v", err)
	}
	frac := filepath.Join(dir, "prob.nii.gz")
	h := nifti.NewHeader([]int{2, 1, 1}, nifti.Float32, [4][4]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}, 0)
	nifti.WriteImage(frac, h, []float32{0.5, 1})
	if _, err := Load(frac, ""); err == nil || !strings.Contains(err.Error(), "non-negative integers") {
		t.Errorf("probability map accepted as an atlas: %v", err)
	}
}

// TestAALAgainstNibabel looks up random MNI positions in MRIcron's AAL atlas and compares with
// nibabel: inverse affine, nearest voxel, label, name from aal.nii.txt.
func TestAALAgainstNibabel(t *testing.T) {
	const aal = "/usr/share/mricron/templates/aal.nii.gz"
	if _, err := os.Stat(aal); err != nil {
		if pyref.Strict() {
			t.Fatalf("%s missing: run scripts/setup-deps.sh test (package mricron-data)", aal)
		}
		t.Skip("mricron-data not installed")
	}
	pyref.Require(t, "numpy", "nibabel")
	out := pyref.Run(t, `
import sys, numpy as np, nibabel as nib
img = nib.load(sys.argv[1]); d = np.asarray(img.dataobj); inv = np.linalg.inv(img.affine)
names = {int(l.split()[0]): l.split()[1] for l in open(sys.argv[1][:-3] + ".txt") if l.strip()}
rng = np.random.default_rng(7)
for xyz in rng.uniform([-80, -110, -60], [80, 80, 90], (400, 3)):
    v = np.floor(nib.affines.apply_affine(inv, xyz) + 0.5).astype(int)
    lab = int(d[tuple(v)]) if all(0 <= v[i] < d.shape[i] for i in range(3)) else 0
    print(xyz[0], xyz[1], xyz[2], lab, names.get(lab, "") if lab else "-")
`, aal)
	a, err := Load(aal, "")
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var xyz [3]float64
		for d := 0; d < 3; d++ {
			xyz[d], _ = strconv.ParseFloat(f[d], 64)
		}
		want, _ := strconv.Atoi(f[3])
		id, name := a.Region(xyz)
		if id != want || (want != 0 && name != f[4]) {
			t.Fatalf("Region(%v) = %d %q, nibabel says %d %q", xyz, id, name, want, f[4])
		}
		if id != 0 {
			named++
		}
	}
	if named < 50 {
		t.Fatalf("only %d of 400 random brain-box positions fell in an AAL region", named)
	}
}
