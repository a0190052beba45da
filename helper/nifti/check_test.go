package nifti

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// oddHeader is one header oddity: a change to a clean 4D header and the warnings it must give
// (field and a phrase of the problem, in order).
type oddHeader struct {
	name   string
	edit   func(h *Header)
	fields []string
	phrase []string
}

func oddHeaders() []oddHeader {
	return []oddHeader{
		{"clean", func(h *Header) {}, nil, nil},
		{"qfac 0", func(h *Header) { h.PixDim[0] = 0 }, []string{"pixdim[0]"}, []string{"qfac"}},
		{"qfac 2", func(h *Header) { h.PixDim[0] = 2 }, []string{"pixdim[0]"}, []string{"qfac"}},
		// A voxel size changes the qform (not the sform): the two then disagree too.
		{"zero pixdim", func(h *Header) { h.PixDim[2] = 0 }, []string{"pixdim[1,2,3]", "sform/qform"}, []string{"non-zero", "3 mm apart"}},
		{"negative pixdim", func(h *Header) { h.PixDim[1] = -2 }, []string{"pixdim[1,2,3]"}, []string{"positive"}},
		{"zero and negative pixdim", func(h *Header) { h.PixDim[1], h.PixDim[3] = -2, 0 }, []string{"pixdim[1,2,3]", "sform/qform"}, []string{"non-zero and pixdim[1,2,3] should be positive", "2 mm apart"}},
		{"NaN pixdim", func(h *Header) { h.PixDim[3] = math.NaN() }, []string{"pixdim[1,2,3]", "sform/qform"}, []string{"not finite", "2 mm apart"}},
		{"bad qform code", func(h *Header) { h.QformCode = 9 }, []string{"qform_code"}, []string{"qform_code 9 not valid"}},
		{"bad sform code", func(h *Header) { h.SformCode = -1 }, []string{"sform_code"}, []string{"sform_code -1 not valid"}},
		{"sform qform disagree", func(h *Header) { h.SRowX[3] += 5 }, []string{"sform/qform"}, []string{"up to 5 mm apart"}},
		{"unknown time unit", func(h *Header) { h.XYZTUnits = UnitsMM }, []string{"xyzt_units"}, []string{"time unit unset"}},
		{"unknown time unit, ms value", func(h *Header) { h.XYZTUnits, h.PixDim[4] = UnitsMM, 2000 },
			[]string{"xyzt_units", "pixdim[4]"}, []string{"time unit unset", "TR 2000 s is outside"}},
		{"TR 0", func(h *Header) { h.PixDim[4] = 0 }, []string{"pixdim[4]"}, []string{"pixdim[4] = 0 is not a positive number"}},
		{"TR NaN", func(h *Header) { h.PixDim[4] = math.NaN() }, []string{"pixdim[4]"}, []string{"not a positive number"}},
		{"TR in Hz", func(h *Header) { h.XYZTUnits = UnitsMM | UnitsHz }, []string{"xyzt_units"}, []string{"in Hz"}},
		{"TR tiny", func(h *Header) { h.XYZTUnits = UnitsMM | UnitsMsec; h.PixDim[4] = 2 }, []string{"pixdim[4]"}, []string{"TR 0.002 s"}},
		{"TR 60 s", func(h *Header) { h.PixDim[4] = 60 }, []string{"pixdim[4]"}, []string{"TR 60 s"}},
	}
}

func cleanHeader() Header {
	return NewHeader([]int{4, 3, 2, 5}, Int16, testAffine(), 2)
}

func TestHeaderCheck(t *testing.T) {
	for _, c := range oddHeaders() {
		t.Run(c.name, func(t *testing.T) {
			h := cleanHeader()
			c.edit(&h)
			ws := h.Check()
			if len(ws) != len(c.fields) {
				t.Fatalf("warnings %v; want fields %v", ws, c.fields)
			}
			for i, w := range ws {
				if w.Field != c.fields[i] || !strings.Contains(w.Problem, c.phrase[i]) {
					t.Errorf("warning %d = %+v; want field %s and %q", i, w, c.fields[i], c.phrase[i])
				}
				if w.Fix == "" || w.Level < LevelInfo || w.Level > LevelError {
					t.Errorf("warning %d = %+v: needs a fix and a level on nibabel's scale", i, w)
				}
			}
		})
	}
}

// TestHeaderCheckThroughReader: the warnings reach Reader.Warnings, the affine stays finite
// with a NaN voxel size, and the TR source says what was assumed.
func TestHeaderCheckThroughReader(t *testing.T) {
	h := cleanHeader()
	h.XYZTUnits = UnitsMM
	h.PixDim[3] = math.NaN()
	h.SformCode, h.QformCode = 0, 0
	b := append(rawHeader(t, 1, binary.LittleEndian, &h, false), make([]byte, 4*3*2*5*2)...)
	path := filepath.Join(t.TempDir(), "odd.nii")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var fields []string
	for _, w := range r.Warnings {
		fields = append(fields, w.Field)
	}
	if !slices.Equal(fields, []string{"pixdim[1,2,3]", "xyzt_units"}) {
		t.Errorf("warnings %v", r.Warnings)
	}
	for _, row := range r.Header.Affine() {
		for _, v := range row {
			if !finite(v) {
				t.Fatalf("affine %v not finite with a NaN voxel size", r.Header.Affine())
			}
		}
	}
	if got := r.Header.TRSource(); got != "TR 2 s (header pixdim[4] = 2, time unit unset: assumed seconds)" {
		t.Errorf("TR source %q", got)
	}
}

func TestTRSource(t *testing.T) {
	for _, c := range []struct {
		edit func(h *Header)
		want string
	}{
		{func(h *Header) {}, "TR 2 s (header pixdim[4] = 2 s)"},
		{func(h *Header) { h.XYZTUnits = UnitsMM | UnitsMsec; h.PixDim[4] = 800 }, "TR 0.8 s (header pixdim[4] = 800 ms)"},
		{func(h *Header) { h.PixDim[4] = 0 }, "TR unknown (header pixdim[4] = 0)"},
		{func(h *Header) { h.XYZTUnits = UnitsHz }, "TR unknown (axis 4 is in Hz)"},
		{func(h *Header) { h.Dim[0] = 3 }, "TR unknown (not a time series along axis 4)"},
	} {
		h := cleanHeader()
		c.edit(&h)
		if got := h.TRSource(); got != c.want {
			t.Errorf("TRSource %q; want %q", got, c.want)
		}
	}
}

// TestScalingRefused: infinite and negative slopes are refused with the file and the field
// named; 0 and NaN (nibabel's "unscaled") read unscaled.
func TestScalingRefused(t *testing.T) {
	_, good := validImage(t)
	dir := t.TempDir()
	for _, s := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), -2} {
		path := filepath.Join(dir, "slope.nii")
		os.WriteFile(path, patched(good, 112, lef32(s)), 0o600)
		err := readEverything(path)
		if err == nil || !errors.Is(err, ErrInvalidHeader) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "scl_slope") {
			t.Errorf("slope %g: %v", s, err)
		}
	}
	for _, s := range []float32{0, float32(math.NaN())} {
		path := filepath.Join(dir, "unscaled.nii")
		os.WriteFile(path, patched(patched(good, 112, lef32(s)), 352, le16(7)), 0o600)
		_, data, err := ReadImage(path)
		if err != nil || data[0] != 7 {
			t.Errorf("slope %g: %v, first value %v", s, err, data)
		}
	}
}

// nibabelChecks runs nibabel's own header battery (every Nifti1Header check, with fix=True on
// a copy so the fix message is filled in) on each file and prints its reports.
const nibabelChecks = `
import json, sys
import nibabel as nib
out = []
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        hdr = nib.Nifti1Header.from_fileobj(f, check=False)
    reps = []
    for chk in hdr._get_checks():
        _, rep = chk(hdr.copy(), fix=True)
        if rep.problem_level > 0:
            reps.append(dict(level=int(rep.problem_level), problem=rep.problem_msg, fix=rep.fix_msg))
    out.append(reps)
print(json.dumps(out))
`

// TestHeaderCheckAgainstNibabel: for every oddity, the warnings marked as nibabel's are
// exactly what nibabel's header check reports (level, problem and fix), and nibabel reports
// nothing we miss.
func TestHeaderCheckAgainstNibabel(t *testing.T) {
	pyref.Require(t, "nibabel")
	cases := oddHeaders()
	extra := []oddHeader{
		{"odd vox_offset", func(h *Header) { h.VoxOffset = 360 }, nil, nil},
		{"qfac -1", func(h *Header) { h.PixDim[0] = -1 }, nil, nil},
	}
	cases = append(cases, extra...)
	dir := t.TempDir()
	var paths []string
	var headers []Header
	for i, c := range cases {
		h := cleanHeader()
		c.edit(&h)
		b := rawHeader(t, 1, binary.LittleEndian, &h, false)
		if h.VoxOffset > int64(len(b)) {
			b = append(b, make([]byte, h.VoxOffset-int64(len(b)))...)
		}
		b = append(b, make([]byte, 4*3*2*5*2)...)
		path := filepath.Join(dir, string(rune('a'+i))+".nii")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		headers = append(headers, r.Header)
		r.Close()
		paths = append(paths, path)
	}
	var reports [][]struct {
		Level   int    `json:"level"`
		Problem string `json:"problem"`
		Fix     string `json:"fix"`
	}
	if err := json.Unmarshal(pyref.Run(t, nibabelChecks, paths...), &reports); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for i, c := range cases {
		var ours []string
		for _, w := range headers[i].Check() {
			if w.Source == "nibabel" {
				ours = append(ours, strings.Join([]string{itoa(w.Level), w.Problem, w.Fix}, " | "))
			}
		}
		var theirs []string
		for _, r := range reports[i] {
			theirs = append(theirs, strings.Join([]string{itoa(r.Level), r.Problem, r.Fix}, " | "))
		}
		slices.Sort(ours)
		slices.Sort(theirs)
		if !slices.Equal(ours, theirs) {
			t.Errorf("%s: ours %q, nibabel %q", c.name, ours, theirs)
		}
		compared += len(theirs)
	}
	if compared < 6 {
		t.Errorf("only %d nibabel reports compared", compared)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
