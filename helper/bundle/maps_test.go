package bundle

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
)

// nibabelMaps loads each image with nibabel and reports its affine, datatype, shape, pixdim[4],
// the values at the nodes' voxels and the largest magnitude anywhere else.
const nibabelMaps = `
import json, sys
import numpy as np, nibabel as nib
d, ijk = sys.argv[1], np.array(json.loads(sys.argv[2]), dtype=int)
out = {}
for name in sys.argv[3:]:
    img = nib.load(d + '/' + name)
    data = np.asanyarray(img.dataobj)
    if data.ndim == 3:
        data = data[..., None]
    at = data[ijk[:, 0], ijk[:, 1], ijk[:, 2], :].astype(float)
    rest = data.copy(); rest[ijk[:, 0], ijk[:, 1], ijk[:, 2], :] = 0
    out[name] = {"affine": img.affine.tolist(), "dtype": str(img.get_data_dtype()), "shape": list(img.shape),
                 "pixdim4": float(img.header['pixdim'][4]), "sform_code": int(img.header['sform_code']),
                 "at": np.where(np.isnan(at), 1e30, at).T.astype(float).tolist(),
                 "elsewhere": float(np.nanmax(np.abs(rest)))}
print(json.dumps(out))
`

type nibMap struct {
	Affine    [4][4]float64 `json:"affine"`
	Dtype     string        `json:"dtype"`
	Shape     []int         `json:"shape"`
	Pixdim4   float64       `json:"pixdim4"`
	SformCode int           `json:"sform_code"`
	At        [][]float64   `json:"at"` // [frame][node]
	Elsewhere float64       `json:"elsewhere"`
}

func TestNodeMapsLoadInNibabel(t *testing.T) {
	pyref.Require(t, "numpy", "nibabel")
	s := smallScan()
	degree := make([]float32, s.N)
	z := make([]float32, s.N)
	hubs := make([]float32, s.N)
	for v := range degree {
		degree[v] = float32(3*v + 1)
		z[v] = float32(v)*0.37 - 1.5
		if v%4 == 1 {
			hubs[v] = 1
		}
	}
	z[2] = float32(math.NaN())
	frames := [][]float32{degree, z, hubs}
	dir := filepath.Join(t.TempDir(), "out")
	w, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name string
		v    []float32
		dt   nifti.DataType
	}{{"degree.nii.gz", degree, nifti.Int16}, {"hub_z.nii.gz", z, nifti.Float32}, {"hubs.nii", hubs, nifti.Uint8}} {
		if err := w.WriteNodeMap(m.name, s, m.v, m.dt); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteNodeSeries("dfc/degree_windows.nii.gz", s, frames, 2.5); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	ijk, _ := json.Marshal(s.IJK)
	out := pyref.Run(t, nibabelMaps, dir, string(ijk), "degree.nii.gz", "hub_z.nii.gz", "hubs.nii", "dfc/degree_windows.nii.gz")
	var got map[string]nibMap
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		dtype  string
		frames [][]float32
		dims   []int
		step   float64
	}{
		"degree.nii.gz":             {"int16", [][]float32{degree}, []int{4, 5, 3}, 0},
		"hub_z.nii.gz":              {"float32", [][]float32{z}, []int{4, 5, 3}, 0},
		"hubs.nii":                  {"uint8", [][]float32{hubs}, []int{4, 5, 3}, 0},
		"dfc/degree_windows.nii.gz": {"float32", frames, []int{4, 5, 3, 3}, 2.5},
	} {
		m, ok := got[name]
		if !ok {
			t.Errorf("%s: not loaded", name)
			continue
		}
		if m.Dtype != want.dtype || !equalInts(m.Shape, want.dims) || m.SformCode == 0 {
			t.Errorf("%s: nibabel sees %s %v (sform_code %d), want %s %v", name, m.Dtype, m.Shape, m.SformCode, want.dtype, want.dims)
		}
		if want.step != 0 && m.Pixdim4 != want.step {
			t.Errorf("%s: pixdim[4] = %g, want %g", name, m.Pixdim4, want.step)
		}
		for r := 0; r < 4; r++ {
			for c := 0; c < 4; c++ {
				// sform rows are float32 on disk.
				if d := math.Abs(m.Affine[r][c] - s.Affine[r][c]); d > 1e-6*(1+math.Abs(s.Affine[r][c])) {
					t.Errorf("%s: affine[%d][%d] = %v, want %v", name, r, c, m.Affine[r][c], s.Affine[r][c])
				}
			}
		}
		if len(m.At) != len(want.frames) {
			t.Fatalf("%s: %d frames, want %d", name, len(m.At), len(want.frames))
		}
		for f, vals := range want.frames {
			for v, x := range vals {
				g := m.At[f][v]
				if math.IsNaN(float64(x)) {
					if g != 1e30 {
						t.Errorf("%s frame %d node %d: %v, want NaN", name, f, v, g)
					}
				} else if g != float64(x) {
					t.Errorf("%s frame %d node %d at %v: %v, want %v", name, f, v, s.IJK[v], g, x)
				}
			}
		}
		if m.Elsewhere != 0 {
			t.Errorf("%s: value %g outside the nodes", name, m.Elsewhere)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestNodeMapRefusals(t *testing.T) {
	s := smallScan()
	ones := make([]float32, s.N)
	for v := range ones {
		ones[v] = 1
	}
	half := append([]float32(nil), ones...)
	half[3] = 2.5
	big := append([]float32(nil), ones...)
	big[4] = 40000
	plain := &scan.Scan{N: 3, L: 10}
	for name, c := range map[string]struct {
		s    *scan.Scan
		v    []float32
		dt   nifti.DataType
		file string
		msg  string
	}{
		"plain matrix":   {plain, []float32{1, 2, 3}, nifti.Float32, "m.nii.gz", "no voxel grid"},
		"non-integer":    {s, half, nifti.Int16, "m.nii.gz", "2.5"},
		"out of range":   {s, big, nifti.Int16, "m.nii.gz", "40000"},
		"wrong length":   {s, ones[1:], nifti.Float32, "m.nii.gz", "values for"},
		"not nifti name": {s, ones, nifti.Float32, "m.png", ".nii.gz"},
	} {
		w, err := Create(filepath.Join(t.TempDir(), "out"), false)
		if err != nil {
			t.Fatal(err)
		}
		err = w.WriteNodeMap(c.file, c.s, c.v, c.dt)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.msg)
		}
		if name == "plain matrix" && !errors.Is(err, ErrNoGrid) {
			t.Errorf("plain matrix: error %v is not ErrNoGrid", err)
		}
		w.Abort()
	}
	w, err := Create(filepath.Join(t.TempDir(), "out"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.WriteNodeMap("m.nii.gz", s, ones, nifti.Uint8); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteNodeMap("m.nii.gz", s, ones, nifti.Uint8); err == nil {
		t.Error("second map of the same name written")
	}
}
