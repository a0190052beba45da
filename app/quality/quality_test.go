package quality

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/settings"
)

// files serves a bundle's files from memory (the rest of ipc.Service is not used).
// Fetches wait for gate (when set), so that the test's window exists before the tab's update
// (Fyne's test driver applies it on the fetching goroutine).
type files struct {
	ipc.Service
	m    map[string][]byte
	gate chan struct{}
}

func (f files) OpenFile(_ context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	if f.gate != nil {
		<-f.gate
	}
	b, ok := f.m[name]
	if !ok || id != "job1" {
		return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeNotFound, "job %s has no file %q", id, name)
	}
	return io.NopCloser(bytes.NewReader(b)), ipc.FileInfo{Name: name, Size: int64(len(b))}, nil
}

func pngOf(t *testing.T, w, h int, c color.Color) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const still = `{"strategy":"detrend, band-pass 0.01–0.08 Hz, 24 motion parameters","tr_seconds":2,"volumes_in":200,"volumes_kept":190,
"dropped_volumes":4,"censored_volumes":[10,11,12,13,14,15],"variance_removed":0.42,"framewise_displacement":[null,0.1,0.2,0.3]}`

func TestAssessStillScan(t *testing.T) {
	a, err := Assess([]byte(still), 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.MeanFD-0.2) > 1e-12 || a.PeakFD != 0.3 || a.MinutesLeft != 190*2.0/60 || len(a.Warnings) != 0 {
		t.Errorf("mean FD %v, peak %v, minutes %v, warnings %q", a.MeanFD, a.PeakFD, a.MinutesLeft, a.Warnings)
	}
	got := strings.Join(a.Lines(), "\n")
	for _, want := range []string{"190 kept of 200 (4 dropped at the start, 6 censored) · 6.3 minutes left", "mean framewise displacement 0.200 mm, largest 0.300 mm", "42 %"} {
		if !strings.Contains(got, want) {
			t.Errorf("lines %q lack %q", got, want)
		}
	}
}

// Each limit alone raises its own warning.
func TestAssessWarnings(t *testing.T) {
	for _, c := range []struct{ name, json, want string }{
		{"mean FD", `{"strategy":"s","tr_seconds":2,"volumes_in":200,"volumes_kept":200,"framewise_displacement":[0.6,0.6,0.6]}`, "Mean head motion 0.60 mm"},
		{"peak FD", `{"strategy":"s","tr_seconds":2,"volumes_in":200,"volumes_kept":200,"framewise_displacement":[0,0,0,0,0,0,0,0,0,0,0,5.5]}`, "moved 5.5 mm"},
		{"minutes", `{"strategy":"s","tr_seconds":2,"volumes_in":200,"volumes_kept":100}`, "Only 3.3 minutes"},
	} {
		a, err := Assess([]byte(c.json), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], c.want) {
			t.Errorf("%s: warnings %q, want one with %q", c.name, a.Warnings, c.want)
		}
	}
	// The scan's TR stands in when the cleaning report has none.
	if a, _ := Assess([]byte(`{"strategy":"s","volumes_in":200,"volumes_kept":200}`), 2); a.MinutesLeft != 200*2.0/60 || len(a.Warnings) != 0 {
		t.Errorf("TR from the scan: %v minutes, warnings %q", a.MinutesLeft, a.Warnings)
	}
	a, _ := Assess([]byte(`{"strategy":"s","volumes_in":10,"volumes_kept":10}`), 0)
	if len(a.Warnings) != 0 || !strings.Contains(strings.Join(a.Lines(), "\n"), "no framewise displacement") {
		t.Errorf("no TR, no FD: warnings %q, lines %q", a.Warnings, a.Lines())
	}
	for _, bad := range []string{"{", `{"volumes_in":0}`, `{"volumes_in":10,"volumes_kept":11}`} {
		if _, err := Assess([]byte(bad), 0); err == nil || !strings.Contains(err.Error(), DenoiseFile) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestTabShowsReportAndFigures(t *testing.T) {
	test.NewTempApp(t)
	moving := strings.Replace(still, `[null,0.1,0.2,0.3]`, `[0.7,0.8]`, 1)
	svc := files{m: map[string][]byte{DenoiseFile: []byte(moving), FDFile: pngOf(t, 40, 10, color.White), CarpetFile: pngOf(t, 40, 20, color.Black)},
		gate: make(chan struct{})}
	all := ipc.Summary{Job: ipc.Job{ID: "job1"}, Files: []ipc.FileInfo{{Name: DenoiseFile}, {Name: FDFile}, {Name: CarpetFile}}}
	tab := NewTab(context.Background(), svc, all, 0)
	w := test.NewTempWindow(t, tab)
	w.Resize(fyne.NewSize(700, 700))
	close(svc.gate)
	<-tab.Loaded()
	if tab.Assessment == nil || !strings.Contains(tab.Summary.Text, "190 kept of 200") {
		t.Fatalf("summary %q", tab.Summary.Text)
	}
	if !tab.Warning.Visible() || !strings.Contains(tab.Warning.Text, "Mean head motion 0.75 mm") {
		t.Errorf("warning shown %v: %q", tab.Warning.Visible(), tab.Warning.Text)
	}
	if tab.FD.Image == nil || tab.FD.Image.Bounds().Dx() != 40 || tab.Carpet.Image == nil || tab.Carpet.Image.Bounds().Dy() != 20 {
		t.Error("FD trace or carpet not shown")
	}
	// A bundle that lists no FD trace: it is not asked for (the browser logs every 404).
	delete(svc.m, FDFile)
	tab = NewTab(context.Background(), svc, ipc.Summary{Job: ipc.Job{ID: "job1"}, Files: []ipc.FileInfo{{Name: DenoiseFile}, {Name: CarpetFile}}}, 0)
	<-tab.Loaded()
	if tab.FD.Image != nil || tab.Carpet.Image == nil || tab.Assessment == nil {
		t.Error("FD trace shown without the file, or the rest missing")
	}
	// A bundle without its report: one line saying so, no figures.
	tab = NewTab(context.Background(), files{m: map[string][]byte{}}, ipc.Summary{Job: ipc.Job{ID: "job1"}}, 0)
	<-tab.Loaded()
	if tab.Assessment != nil || !strings.Contains(tab.Summary.Text, "could not be read") || !strings.Contains(tab.Summary.Text, DenoiseFile) {
		t.Errorf("missing report: %q", tab.Summary.Text)
	}
}

// The DVARS traces: standardised DVARS from the confounds table with the scrubbing preset's
// threshold dashed, or, without it, the series' DVARS before cleaning; after cleaning beside.
func TestTabShowsDVARS(t *testing.T) {
	test.NewTempApp(t)
	withStd := `{"strategy":"s","tr_seconds":2,"volumes_in":4,"volumes_kept":4,"std_dvars":[null,1.2,3.4,0.9],"dvars_before":[0,5,6,4],"dvars_after":[0,1,1.1,0.9]}`
	svc := files{m: map[string][]byte{DenoiseFile: []byte(withStd)}, gate: make(chan struct{})}
	s := ipc.Summary{Job: ipc.Job{ID: "job1"}, Files: []ipc.FileInfo{{Name: DenoiseFile}}}
	s.Job.Settings.Denoise = settings.DenoiseScrubbing
	tab := NewTab(context.Background(), svc, s, 0)
	test.NewTempWindow(t, tab)
	close(svc.gate) // the window is built before the report arrives
	<-tab.Loaded()
	x, y := tab.DVARS.Data()
	level, ok := tab.DVARS.Level()
	if len(x) != 4 || x[3] != 6 || !math.IsNaN(y[0]) || y[2] != 3.4 || !ok || level != 3 {
		t.Fatalf("standardised DVARS x %v y %v, threshold %v %g", x, y, ok, level)
	}
	if _, after := tab.DVARSAfter.Data(); len(after) != 4 || after[2] != 1.1 {
		t.Fatalf("DVARS after cleaning %v", after)
	}
	// No confounds table: the series' DVARS before cleaning, no threshold (none was set).
	svc.m[DenoiseFile] = []byte(`{"strategy":"s","volumes_in":3,"volumes_kept":3,"dvars_before":[0,5,6],"dvars_after":[0,1,1]}`)
	s.Job.Settings.Denoise = settings.DenoiseAuto
	svc.gate = make(chan struct{})
	tab = NewTab(context.Background(), svc, s, 0)
	test.NewTempWindow(t, tab)
	close(svc.gate)
	<-tab.Loaded()
	x, y = tab.DVARS.Data()
	if _, ok := tab.DVARS.Level(); ok || len(y) != 3 || y[2] != 6 || x[2] != 2 {
		t.Fatalf("DVARS before cleaning x %v y %v (threshold %v)", x, y, ok)
	}
	if DVARSThreshold(ipc.Summary{Job: ipc.Job{Settings: settings.Settings{Cleaning: settings.Cleaning{DVARS: 1.5}}}}) != 1.5 {
		t.Error("the threshold set is not the one drawn")
	}
}
