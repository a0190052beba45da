package nifti

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// nibabelInfo is what the reference script reports about one image.
type nibabelInfo struct {
	Shape     []int64       `json:"shape"`
	Dtype     string        `json:"dtype"`
	Best      [4][4]float64 `json:"best"`
	Qform     [4][4]float64 `json:"qform"`
	Sform     [4][4]float64 `json:"sform"`
	QformCode int32         `json:"qform_code"`
	SformCode int32         `json:"sform_code"`
	Zooms     []float64     `json:"zooms"`
	TimeUnit  string        `json:"time_unit"`
	Slope     float64       `json:"slope"`
	Inter     float64       `json:"inter"`
	Sum       float64       `json:"sum"`
	Npy       string        `json:"npy"`
	VoxOffset int64         `json:"vox_offset"`
}

// nibabelScript loads each image with nibabel and prints its geometry, scaling and a float64
// copy of the scaled data in file (Fortran) order as .npy.
const nibabelScript = `
import json, sys, os
import numpy as np, nibabel as nib
out = []
outdir = sys.argv[1]
for i, path in enumerate(sys.argv[2:]):
    img = nib.load(path)
    h = img.header
    data = np.asarray(img.get_fdata(dtype=np.float64))
    npy = os.path.join(outdir, "%d.npy" % i)
    np.save(npy, np.ravel(data, order="F"))
    # The image's header copy has scaling and offset reset; the array proxy keeps the file's.
    slope, inter = float(img.dataobj.slope), float(img.dataobj.inter)
    out.append(dict(
        shape=[int(s) for s in img.shape], dtype=str(h.get_data_dtype().newbyteorder("=")),
        best=h.get_best_affine().tolist(), qform=h.get_qform().tolist(), sform=h.get_sform().tolist(),
        qform_code=int(h["qform_code"]), sform_code=int(h["sform_code"]),
        zooms=[float(z) for z in h.get_zooms()], time_unit=str(h.get_xyzt_units()[1]),
        slope=slope, inter=inter, sum=float(data.sum()), npy=npy, vox_offset=int(img.dataobj.offset)))
print(json.dumps(out))
`

func runNibabel(t *testing.T, paths ...string) []nibabelInfo {
	t.Helper()
	pyref.Require(t, "numpy", "nibabel")
	out := pyref.Run(t, nibabelScript, append([]string{t.TempDir()}, paths...)...)
	var infos []nibabelInfo
	if err := json.Unmarshal(out, &infos); err != nil {
		t.Fatalf("reference output: %v\n%s", err, out)
	}
	if len(infos) != len(paths) {
		t.Fatalf("reference returned %d images for %d paths", len(infos), len(paths))
	}
	return infos
}

var numpyName = map[DataType]string{
	Uint8: "uint8", Int8: "int8", Int16: "int16", Uint16: "uint16", Int32: "int32",
	Uint32: "uint32", Int64: "int64", Uint64: "uint64", Float32: "float32", Float64: "float64",
}

// checkAgainstNibabel compares header fields, affines, TR and every scaled voxel value.
func checkAgainstNibabel(t *testing.T, path string, ref nibabelInfo) {
	t.Helper()
	h, data := readAll64(t, path)
	nd := int(h.Dim[0])
	if len(ref.Shape) != nd {
		t.Errorf("%s: %d dimensions, nibabel %d (%v)", path, nd, len(ref.Shape), ref.Shape)
	}
	for i := 0; i < min(nd, len(ref.Shape)); i++ {
		if h.Dim[i+1] != ref.Shape[i] {
			t.Errorf("%s: dim[%d] = %d, nibabel %d", path, i+1, h.Dim[i+1], ref.Shape[i])
		}
	}
	if numpyName[h.DataType] != ref.Dtype {
		t.Errorf("%s: datatype %s, nibabel %s", path, h.DataType, ref.Dtype)
	}
	if h.QformCode != ref.QformCode || h.SformCode != ref.SformCode {
		t.Errorf("%s: codes q%d s%d, nibabel q%d s%d", path, h.QformCode, h.SformCode, ref.QformCode, ref.SformCode)
	}
	if h.VoxOffset != ref.VoxOffset {
		t.Errorf("%s: vox_offset %d, nibabel %d", path, h.VoxOffset, ref.VoxOffset)
	}
	compareAffine(t, path+" sform", h.SformAffine(), ref.Sform, 0)
	compareAffine(t, path+" qform", h.QformAffine(), ref.Qform, 1e-6)
	if h.SformCode > 0 || h.QformCode > 0 {
		compareAffine(t, path+" best affine", h.Affine(), ref.Best, 1e-6)
	}
	if len(ref.Zooms) >= 4 && h.Volumes() > 1 {
		want := ref.Zooms[3]
		switch ref.TimeUnit {
		case "msec":
			want /= 1e3
		case "usec":
			want /= 1e6
		}
		if got := h.TR(); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: TR %g s, nibabel zoom %g %s", path, got, ref.Zooms[3], ref.TimeUnit)
		}
	}
	if slope, inter, _ := h.scaling(); slope != ref.Slope || inter != ref.Inter {
		t.Errorf("%s: scaling %g·x + %g, nibabel %g·x + %g", path, slope, inter, ref.Slope, ref.Inter)
	}
	want := readNpyFloat64(t, ref.Npy)
	if len(want) != len(data) {
		t.Fatalf("%s: %d values, nibabel %d", path, len(data), len(want))
	}
	var sum float64
	bad := 0
	for i := range want {
		sum += data[i]
		if data[i] != want[i] && !(math.IsNaN(data[i]) && math.IsNaN(want[i])) {
			if bad < 5 {
				t.Errorf("%s: value %d = %v, nibabel %v", path, i, data[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ from nibabel", path, bad, len(want))
	}
	if math.Abs(sum-ref.Sum) > 1e-9*math.Max(1, math.Abs(ref.Sum)) {
		t.Errorf("%s: sum %v, nibabel %v", path, sum, ref.Sum)
	}
}

func compareAffine(t *testing.T, what string, got, want [4][4]float64, tol float64) {
	t.Helper()
	for i := range 4 {
		for j := range 4 {
			if d := math.Abs(got[i][j] - want[i][j]); d > tol*math.Max(1, math.Abs(want[i][j])) || math.IsNaN(d) {
				t.Errorf("%s: affine[%d][%d] = %v, nibabel %v\n got %v\nwant %v", what, i, j, got[i][j], want[i][j], got, want)
				return
			}
		}
	}
}

// TestSharedDataMatchesNibabel reads every image in ../shared/data and compares shape, dtype,
// affines, TR and all scaled voxel values with nibabel.
func TestSharedDataMatchesNibabel(t *testing.T) {
	paths := sharedData(t)
	infos := runNibabel(t, paths...)
	for i, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) { checkAgainstNibabel(t, p, infos[i]) })
	}
}
