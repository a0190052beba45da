package nifti

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// writtenCases are images as the bundle and phantom code write them: scaled integers, masks,
// float maps and 4D series, compressed and not.
func writtenCases(t *testing.T, dir string) (paths []string, headers []Header) {
	rng := rand.New(rand.NewPCG(5, 6))
	add := func(name string, dims []int, dt DataType, slope, inter float64) {
		h := NewHeader(dims, dt, testAffine(), 2)
		h.SclSlope, h.SclInter = slope, inter
		h.Descrip = "written by " + name
		n := 1
		for _, d := range dims {
			n *= d
		}
		data := valuesFor(dt, n, rng)
		if slope != 1 || inter != 0 {
			for i := range data {
				data[i] = float32(rng.NormFloat64() * 100)
			}
		}
		path := filepath.Join(dir, name)
		if err := WriteImage(path, h, data); err != nil {
			t.Fatal(err)
		}
		paths, headers = append(paths, path), append(headers, h)
	}
	for _, dt := range allTypes {
		add("all_"+dt.String()+".nii.gz", []int{3, 4, 2, 2}, dt, 1, 0)
	}
	add("scaled_int16.nii.gz", []int{5, 4, 3, 4}, Int16, 0.25, -10)
	add("scaled_uint8.nii", []int{5, 4, 3}, Uint8, 2, 100)
	add("mask.nii", []int{6, 5, 4}, Uint8, 1, 0)
	add("map_2d.nii.gz", []int{7, 5}, Float32, 1, 0)
	add("series_5d.nii.gz", []int{2, 3, 2, 3, 2}, Float32, 1, 0)
	return paths, headers
}

// TestWrittenFilesMatchNibabel: nibabel reads back what we wrote with the same geometry,
// scaling and values.
func TestWrittenFilesMatchNibabel(t *testing.T) {
	paths, headers := writtenCases(t, t.TempDir())
	infos := runNibabel(t, paths...)
	for i, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			checkAgainstNibabel(t, p, infos[i])
			compareAffine(t, "sform vs written", SformOf(infos[i]), float32Affine(testAffine()), 0)
			compareAffine(t, "qform vs written", infos[i].Qform, testAffine(), 1e-6)
			if want := float64(float32(headers[i].SclSlope)); infos[i].Slope != want && headers[i].SclSlope != 1 {
				t.Errorf("nibabel slope %v, wrote %v", infos[i].Slope, want)
			}
		})
	}
}

// SformOf is the sform nibabel reported.
func SformOf(info nibabelInfo) [4][4]float64 { return info.Sform }

// TestWrittenFilesMatchNiftiTool: the NIfTI reference library's nifti_tool shows the header
// fields we meant to write.
func TestWrittenFilesMatchNiftiTool(t *testing.T) {
	tool, err := exec.LookPath("nifti_tool")
	if err != nil {
		if pyref.Strict() {
			t.Fatal("nifti_tool not found (Debian package nifti-bin)")
		}
		t.Skip("nifti_tool not found (Debian package nifti-bin)")
	}
	paths, headers := writtenCases(t, t.TempDir())
	for i, p := range paths {
		h := headers[i]
		t.Run(filepath.Base(p), func(t *testing.T) {
			out, err := exec.Command(tool, "-disp_hdr", "-infiles", p).CombinedOutput()
			if err != nil {
				t.Fatalf("nifti_tool: %v\n%s", err, out)
			}
			f := niftiToolFields(out)
			wantDims := []float64{float64(h.Dim[0])}
			for j := 1; j < 8; j++ {
				wantDims = append(wantDims, float64(normalisedDims(h)[j]))
			}
			checkField(t, f, "dim", wantDims...)
			checkField(t, f, "datatype", float64(h.DataType))
			checkField(t, f, "bitpix", float64(8*h.DataType.Size()))
			checkField(t, f, "pixdim", h.PixDim[:]...)
			checkField(t, f, "vox_offset", 352)
			checkField(t, f, "scl_slope", h.SclSlope)
			checkField(t, f, "scl_inter", h.SclInter)
			checkField(t, f, "xyzt_units", float64(h.XYZTUnits))
			checkField(t, f, "qform_code", float64(h.QformCode))
			checkField(t, f, "sform_code", float64(h.SformCode))
			checkField(t, f, "quatern_b", h.QuaternB)
			checkField(t, f, "quatern_c", h.QuaternC)
			checkField(t, f, "quatern_d", h.QuaternD)
			checkField(t, f, "qoffset_x", h.QOffsetX)
			checkField(t, f, "srow_x", h.SRowX[:]...)
			checkField(t, f, "srow_y", h.SRowY[:]...)
			checkField(t, f, "srow_z", h.SRowZ[:]...)
			if m := f["magic"]; len(m) != 1 || m[0] != "n+1" {
				t.Errorf("magic %q, want n+1", m)
			}
			if d := strings.Join(f["descrip"], " "); d != h.Descrip {
				t.Errorf("descrip %q, want %q", d, h.Descrip)
			}
		})
	}
}

// niftiToolFields parses "name offset nvals values..." rows of nifti_tool -disp_hdr.
func niftiToolFields(out []byte) map[string][]string {
	fields := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) < 3 {
			continue
		}
		if _, err := strconv.Atoi(w[1]); err != nil {
			continue
		}
		fields[w[0]] = w[3:]
	}
	return fields
}

func checkField(t *testing.T, f map[string][]string, name string, want ...float64) {
	t.Helper()
	got := f[name]
	if len(got) != len(want) {
		t.Errorf("%s: nifti_tool shows %q, want %v", name, got, want)
		return
	}
	for i, s := range got {
		v, err := strconv.ParseFloat(s, 64)
		w := float64(float32(want[i]))
		if err != nil || math.Abs(v-w) > 1e-5*math.Max(1, math.Abs(w)) {
			t.Errorf("%s[%d]: nifti_tool shows %s, want %v", name, i, s, w)
		}
	}
}

// TestWriterIntegerRounding: inverse scaling, rounding half away from zero, clamping and NaN.
func TestWriterIntegerRounding(t *testing.T) {
	in := []float32{0.5, -0.5, 1.5, -1.5, 2.4999, 40000, -40000, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	cases := []struct {
		dt           DataType
		slope, inter float64
		want         []float64
	}{
		{Int16, 1, 0, []float64{1, -1, 2, -2, 2, 32767, -32768, 0, 32767, -32768}},
		{Uint8, 1, 0, []float64{1, 0, 2, 0, 2, 255, 0, 0, 255, 0}},
		{Int8, 1, 0, []float64{1, -1, 2, -2, 2, 127, -128, 0, 127, -128}},
		{Uint16, 1, 0, []float64{1, 0, 2, 0, 2, 40000, 0, 0, 65535, 0}},
		{Int32, 1, 0, []float64{1, -1, 2, -2, 2, 40000, -40000, 0, math.MaxInt32, math.MinInt32}},
		{Uint32, 1, 0, []float64{1, 0, 2, 0, 2, 40000, 0, 0, math.MaxUint32, 0}},
		{Int64, 1, 0, []float64{1, -1, 2, -2, 2, 40000, -40000, 0, math.MaxInt64, math.MinInt64}},
		{Uint64, 1, 0, []float64{1, 0, 2, 0, 2, 40000, 0, 0, math.MaxUint64, 0}},
		// Stored x = round((v − 1)/2); read back 2x + 1.
		{Int16, 2, 1, []float64{1, -1, 1, -1, 3, 40001, -40001, 1, 65535, -65535}},
	}
	for _, c := range cases {
		h := NewHeader([]int{len(in)}, c.dt, testAffine(), 0)
		h.SclSlope, h.SclInter = c.slope, c.inter
		path := filepath.Join(t.TempDir(), "r.nii")
		if err := WriteImage(path, h, in); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(in))
		if err := r.ReadVolume64(got); err != nil {
			t.Fatal(err)
		}
		r.Close()
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v slope %g inter %g: %v stored as %v, want %v", c.dt, c.slope, c.inter, in[i], got[i], c.want[i])
			}
		}
	}
}

// TestWriterAtomic: nothing carries the final name until Close succeeds; short writes and
// Abort leave no file and no temporary behind.
func TestWriterAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "series.nii.gz")
	h := NewHeader([]int{2, 2, 2, 3}, Float32, testAffine(), 2)
	w, err := Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	vol := make([]float32, 8)
	if err := w.WriteVolume(vol); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("final name exists before Close: %v", err)
	}
	if err := w.WriteVolume(make([]float32, 7)); err == nil || !strings.Contains(err.Error(), "series.nii.gz") {
		t.Errorf("wrong-size volume: %v", err)
	}
	err = w.Close()
	if err == nil || !strings.Contains(err.Error(), "wrote 1 of the 3 volumes") || !strings.Contains(err.Error(), "series.nii.gz") {
		t.Errorf("Close after 1 of 3 volumes: %v", err)
	}
	assertEmptyDir(t, dir)

	w, err = Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteVolume(vol)
	w.Abort()
	assertEmptyDir(t, dir)
	if err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}

	w, err = Create(path, h)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := w.WriteVolume(vol); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteVolume(vol); err == nil {
		t.Error("a fourth volume was accepted for a 3-volume header")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "series.nii.gz" {
		t.Errorf("directory after Close: %v", ents)
	}
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestCreateRejectsBadHeaders: the writer validates as the reader does, and refuses sizes
// NIfTI-1 cannot store.
func TestCreateRejectsBadHeaders(t *testing.T) {
	dir := t.TempDir()
	for name, h := range map[string]Header{
		"unsupported datatype":   NewHeader([]int{2, 2, 2}, DataType(128), testAffine(), 0),
		"dim[2] = 0":             NewHeader([]int{2, 0, 2}, Int16, testAffine(), 0),
		"does not fit a NIfTI-1": NewHeader([]int{40000, 2, 2}, Int16, testAffine(), 0),
		"dim[0] = 8":             NewHeader([]int{1, 1, 1, 1, 1, 1, 1, 1}, Int16, testAffine(), 0),
	} {
		path := filepath.Join(dir, "bad.nii")
		_, err := Create(path, h)
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "bad.nii") {
			t.Errorf("%s: %v", name, err)
		}
	}
	assertEmptyDir(t, dir)
}

// TestNewHeaderQformMatchesNibabel: the quaternion, qfac and voxel sizes NewHeader derives from
// an affine equal those of nibabel's Nifti1Header.set_qform, including sheared affines (whose
// rotation is the polar factor), left-handed ones (qfac −1), 180° rotations (quaternion a = 0)
// and permuted axes.
func TestNewHeaderQformMatchesNibabel(t *testing.T) {
	pyref.Require(t, "numpy", "nibabel")
	affines := [][4][4]float64{
		testAffine(),
		{{2, 0, 0, -90}, {0, 2, 0, -126}, {0, 0, 2, -72}, {0, 0, 0, 1}},
		{{-2, 0, 0, 90}, {0, 2, 0, -126}, {0, 0, 2, -72}, {0, 0, 0, 1}},
		{{2, 0.3, 0.1, 1}, {0.2, 2.5, -0.4, 2}, {0, 0.1, 3, 3}, {0, 0, 0, 1}},
		{{-1, 0, 0, 0}, {0, -1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}},
		{{2, 0, 0, 0}, {0, -2, 0.01, 0}, {0, 0, -2, 0}, {0, 0, 0, 1}},
		{{-2, 0, 0, 0}, {0, 2, 0, 0}, {0.01, 0, -2, 0}, {0, 0, 0, 1}},
		{{0, 0, 3, 5}, {2, 0, 0, 6}, {0, 2.5, 0, 7}, {0, 0, 0, 1}},
		{{0, -1.5, 0, 5}, {-1.5, 0, 0, 6}, {0, 0, -4, 7}, {0, 0, 0, 1}},
	}
	var args []string
	for _, a := range affines {
		for i := 0; i < 3; i++ {
			for j := 0; j < 4; j++ {
				args = append(args, strconv.FormatFloat(a[i][j], 'g', -1, 64))
			}
		}
	}
	out := pyref.Run(t, `
import sys, numpy as np, nibabel as nib
v = [float(x) for x in sys.argv[1:]]
for k in range(0, len(v), 12):
    a = np.eye(4); a[:3, :] = np.reshape(v[k:k+12], (3, 4))
    h = nib.Nifti1Header(); h.set_qform(a, code=1)
    print(" ".join(repr(float(x)) for x in [h["quatern_b"], h["quatern_c"], h["quatern_d"], h["pixdim"][0],
        h["pixdim"][1], h["pixdim"][2], h["pixdim"][3], h["qoffset_x"], h["qoffset_y"], h["qoffset_z"]]))
`, args...)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(affines) {
		t.Fatalf("reference printed %d lines for %d affines", len(lines), len(affines))
	}
	for k, a := range affines {
		h := NewHeader([]int{2, 2, 2}, Float32, a, 0)
		got := []float64{h.QuaternB, h.QuaternC, h.QuaternD, h.PixDim[0], h.PixDim[1], h.PixDim[2], h.PixDim[3], h.QOffsetX, h.QOffsetY, h.QOffsetZ}
		for i, s := range strings.Fields(lines[k]) {
			want, _ := strconv.ParseFloat(s, 64)
			// nibabel stores the fields as float32.
			if math.Abs(got[i]-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("affine %d field %d: %v, nibabel %v (got %v, nibabel %s)", k, i, got[i], want, got, lines[k])
				break
			}
		}
	}
}

// TestWriteImageLength: data must hold exactly the header's volumes; nothing is left behind.
func TestWriteImageLength(t *testing.T) {
	dir := t.TempDir()
	h := NewHeader([]int{2, 2, 2, 3}, Int16, testAffine(), 2)
	err := WriteImage(filepath.Join(dir, "short.nii"), h, make([]float32, 8*3-1))
	if err == nil || !strings.Contains(err.Error(), "short.nii") || !strings.Contains(err.Error(), "23 values") {
		t.Errorf("short data: %v", err)
	}
	assertEmptyDir(t, dir)
}
