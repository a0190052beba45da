package pipeline

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/dicom"
	"github.com/hubscope/hubscope/helper/dicom/dicomtest"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestDICOMRunsToBundle: a DICOM series long enough for a network (made from the real
// Siemens mosaic: 12 volumes, new instance UIDs, numbers, times and per-voxel noise) goes
// from the folder to a complete bundle holding the converted NIfTI and its sidecar in
// input/, with the conversion in provenance.json, and no file of the bundle or of the
// temporary folder holds the patient's or institution's identity.
func TestDICOMRunsToBundle(t *testing.T) {
	data := dicomtest.Converted(t, dicom.FindTool)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the conversion's private folder lands here: it must be gone after
	src := t.TempDir()
	first, _ := filepath.Glob(filepath.Join(data, "ax_asc_35sl", "MR.*"))
	if _, err := dicomtest.Series(first[0], src, 12, 3, 0.05, 7); err != nil {
		t.Fatal(err)
	}
	ds, err := dicom.Open(src, "")
	if err != nil {
		t.Fatal(err)
	}
	lst, err := dicom.List(t.Context(), ds)
	if err != nil {
		t.Fatal(err)
	}
	var identity []string
	for _, id := range lst.Series[0].Identities() {
		identity = append(identity, id.Values()...)
	}
	// A box in the brain as the mask keeps the test quick under the race detector.
	mask := dicomtest.BoxMask(t, data)
	out := filepath.Join(t.TempDir(), "bundle")
	cfg := Defaults()
	cfg.Scan, cfg.Out, cfg.Backend, cfg.Mask, cfg.Metrics = src, out, "cpu", mask, settings.MetricsBasic
	rec := &noteRecorder{}
	res, err := Run(t.Context(), cfg, rec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics.Scan.Nodes < 2000 || res.Metrics.Scan.TimePoints != 12 || res.Metrics.Scan.TR != 3 || res.Metrics.Scan.Path != src {
		t.Errorf("scan: %+v", res.Metrics.Scan)
	}
	var prov struct {
		Input      bundle.Input
		Parameters struct{ Scan string }
		Conversion *bundle.Conversion
	}
	raw, err := os.ReadFile(filepath.Join(out, "provenance.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &prov); err != nil {
		t.Fatal(err)
	}
	c := prov.Conversion
	if c == nil || c.Series != 6 || c.Volumes != 12 || c.Tool != "dcm2niix" || !strings.HasPrefix(c.ToolVersion, "v1.0.") ||
		c.NIfTI != "input/series_6.nii" || c.Sidecar != "input/series_6.json" || c.Source != src || prov.Parameters.Scan != src ||
		prov.Input.Path != "input/series_6.nii" || !strings.Contains(c.Reason, "most volumes (12)") {
		t.Errorf("provenance: input %+v, parameters.scan %q, conversion %+v", prov.Input, prov.Parameters.Scan, c)
	}
	if sum, err := bundle.SHA256File(filepath.Join(out, "input", "series_6.nii")); err != nil || sum != prov.Input.SHA256 {
		t.Errorf("input/series_6.nii sha256 %s, provenance says %s (%v)", sum, prov.Input.SHA256, err)
	}
	var side struct {
		RepetitionTime float64
		SliceTiming    []float64
	}
	raw, _ = os.ReadFile(filepath.Join(out, "input", "series_6.json"))
	if err := json.Unmarshal(raw, &side); err != nil || side.RepetitionTime != 3 || len(side.SliceTiming) != 35 {
		t.Errorf("sidecar: %+v %v", side, err)
	}
	if !strings.Contains(strings.Join(rec.notes, "\n"), `converting series 6 "ax_asc_35sl"`) {
		t.Errorf("notes %q", rec.notes)
	}
	// Privacy: every file written (bundle, sidecar, provenance) and every note.
	files := 0
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, _ := os.ReadFile(p)
		for _, v := range identity {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds identity value %q", p, v)
			}
		}
		return nil
	})
	for _, v := range identity {
		if strings.Contains(strings.Join(rec.notes, "\n"), v) {
			t.Errorf("a note holds identity value %q", v)
		}
	}
	if notes := strings.Join(rec.notes, "\n"); strings.Contains(notes, "hubscope-dicom-") {
		t.Errorf("a note names the temporary conversion folder:\n%s", notes)
	}
	if files < 6 || len(identity) < 4 {
		t.Errorf("checked %d files for %d identity values", files, len(identity))
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary folder holds %d entries after the run", len(left))
	}
}

// TestDICOMTooShort: the shipped 2-volume series converts and stops with the too-few-volumes
// line, leaving neither a bundle nor a temporary folder.
func TestDICOMTooShort(t *testing.T) {
	data := dicomtest.Converted(t, dicom.FindTool)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out := filepath.Join(t.TempDir(), "bundle")
	cfg := Defaults()
	cfg.Scan, cfg.Out, cfg.Denoise = filepath.Join(data, "sag_int_36sl"), out, CleanNone
	_, err := Run(t.Context(), cfg, nil)
	if err == nil || !strings.HasSuffix(err.Error(), `series 21 "sag_int_36sl": 2 volumes; a network needs at least 3`) {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a bundle was left")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary folder holds %d entries", len(left))
	}
	// With cleaning the minimum is the cleaning's: auto regresses 5 tCompCor components.
	cfg.Denoise = CleanAuto
	if _, err := Run(t.Context(), cfg, nil); err == nil || !strings.Contains(err.Error(), "2 volumes; a network needs at least 7 (the cleaning regresses out 5 confounds") {
		t.Errorf("auto cleaning: %v", err)
	}
	cfg.Denoise = CleanNone
	// A problem found after the conversion names the DICOM and its series, not the temporary
	// NIfTI: a window longer than the series.
	long := t.TempDir()
	first, _ := filepath.Glob(filepath.Join(data, "ax_asc_35sl", "MR.*"))
	if _, err := dicomtest.Series(first[0], long, 4, 3, 0.05, 1); err != nil {
		t.Fatal(err)
	}
	cfg.Scan, cfg.DFCWindow, cfg.DFCStep = long, 10, 1
	_, err = Run(t.Context(), cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "longer than "+long+` (series 6 "ax_asc_35sl")'s 4 time points`) || strings.Contains(err.Error(), "hubscope-dicom-") {
		t.Errorf("window longer than the series: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporary folder holds %d entries", len(left))
	}
	cfg.DFCWindow, cfg.DFCStep = 0, 0
	cfg.Scan, cfg.DICOMSeries = filepath.Join(data, "ref", "ax_asc_35sl_6.nii"), 6
	if _, err := Run(t.Context(), cfg, nil); err == nil || !strings.Contains(err.Error(), "--series chooses a series of DICOM input") {
		t.Errorf("--series with a NIfTI: %v", err)
	}
}

type noteRecorder struct{ notes []string }

func (r *noteRecorder) Start(string, int64) {}
func (r *noteRecorder) Add(int64)           {}
func (r *noteRecorder) Note(m string)       { r.notes = append(r.notes, m) }
