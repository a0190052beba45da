//go:build !js

package app

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/report"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// helper is a scripted daemon: fixed answers, one scripted run per submitted job, and a
// record of what reached it.
type helper struct {
	mu        sync.Mutex
	submitted []ipc.JobRequest
	jobs      map[string]ipc.Job
	info      ipc.Info
}

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func newHelper() *helper {
	return &helper{jobs: map[string]ipc.Job{
		"old": {ID: "old", Name: "earlier.nii.gz", State: ipc.JobInterrupted, Error: "the helper stopped while it ran", Submitted: t0.Add(-time.Hour)},
	}, info: ipc.Info{App: schema.AppName, Version: schema.Version, API: ipc.Prefix, Backend: "cpu", CPU: "Test CPU", Cores: 2}}
}

func (h *helper) Info(context.Context) (ipc.Info, error) { return h.info, nil }

func (h *helper) Upload(context.Context, string, io.Reader) (ipc.Upload, error) {
	return ipc.Upload{}, ipc.Errorf(ipc.CodeForbidden, "uploads are for the web transport")
}

func (h *helper) Submit(_ context.Context, req ipc.JobRequest) (ipc.Job, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.submitted = append(h.submitted, req)
	j := ipc.Job{ID: "job1", Name: filepath.Base(req.Scan), State: ipc.JobQueued, Settings: settings.Defaults(), Submitted: t0}
	if req.Settings != nil {
		j.Settings = *req.Settings
	}
	h.jobs[j.ID] = j
	return j, nil
}

func (h *helper) Jobs(context.Context) ([]ipc.Job, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []ipc.Job
	for _, j := range h.jobs {
		out = append(out, j)
	}
	return out, nil
}

func (h *helper) Job(_ context.Context, id string) (ipc.Job, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	j, ok := h.jobs[id]
	if !ok {
		return j, ipc.Errorf(ipc.CodeNotFound, "no job %s", id)
	}
	return j, nil
}

// Events plays the job's run: two progress events, then done.
func (h *helper) Events(ctx context.Context, id string) (<-chan ipc.Event, error) {
	j, err := h.Job(ctx, id)
	if err != nil {
		return nil, err
	}
	ch := make(chan ipc.Event)
	go func() {
		defer close(ch)
		steps := []ipc.Job{j}
		if !j.State.Terminal() {
			r := j
			r.State, r.Stage, r.Fraction, r.ETASeconds = ipc.JobRunning, "correlation", 0.5, 20
			d := r
			d.State, d.Stage, d.Fraction, d.ETASeconds = ipc.JobDone, "", 1, 0
			steps = append(steps, r, d)
		}
		for k, s := range steps {
			select {
			case ch <- ipc.Event{Seq: int64(k), Time: t0, Job: s}:
			case <-ctx.Done():
				return
			}
		}
		h.mu.Lock()
		h.jobs[id] = steps[len(steps)-1]
		h.mu.Unlock()
	}()
	return ch, nil
}

func (h *helper) Cancel(ctx context.Context, id string) (ipc.Job, error) { return h.Job(ctx, id) }

const metricsJSON = `{"scan":{"path":"/data/sub-01.nii.gz","nodes":8558,"time_points":200,"tr_seconds":2,"grid":[31,37,31],"mask_voxels":8593},
"network":{"measure":"pearson","threshold_mode":"density","threshold":0.31,"edges":366154,"density":0.01,"mean_degree":85.6,"backend":"cpu"},
"hubs":{"rule":"degree > mean + 1 SD","count":2},
"global":{"clustering_coefficient":0.279,"characteristic_path_length":2.84,"global_efficiency":0.375,
 "small_world":{"gamma":6.33,"lambda":1.19,"sigma":5.31,"sigma_sd":0.03,"random_networks":15}},
"modules":[{"method":"Leiden","q":0.798,"count":2,"modules_of_two_or_more":2,"single_node_modules":0,"sizes":[5000,3558],"q_z_score":41.2}]}`

func (h *helper) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	j, err := h.Job(ctx, id)
	if err != nil {
		return ipc.Summary{}, err
	}
	return ipc.Summary{Job: j, Bundle: "/results/sub-01", Metrics: []byte(metricsJSON),
		Hubs: []ipc.Hub{
			{Node: 1, Voxel: [3]int{19, 26, 15}, MNI: [3]float64{-26, 32, 20}, Degree: 1315, Strength: 487.7, HubZ: 13.5, Module: 1, Role: "connector", Region: "Frontal_Mid_L"},
			{Node: 2, Voxel: [3]int{12, 30, 15}, MNI: [3]float64{16, 56, 20}, Degree: 1301, Strength: 481.7, HubZ: 13.3, Module: 2, Role: "provincial", Region: "Precuneus_R"},
		},
		Files: []ipc.FileInfo{{Name: "degree_distribution.png"}, {Name: "hubs.tsv"}},
		Atlas: &ipc.AtlasInfo{Name: "AAL", Citation: "Tzourio-Mazoyer et al. 2002"}}, nil
}

// Volume serves the mask: a ball of radius 8 voxels on a 6 mm grid centred at the origin.
func (h *helper) Volume(_ context.Context, _, name string) (*ipc.Volume, error) {
	if name != "mask" {
		return nil, ipc.Errorf(ipc.CodeNotFound, "no volume %s in this script", name)
	}
	const n = 20
	v := &ipc.Volume{Header: ipc.VolumeHeader{Name: "mask", Dims: [3]int{n, n, n}, Max: 1, Categorical: true,
		Affine: [4][4]float64{{6, 0, 0, -60}, {0, 6, 0, -60}, {0, 0, 6, -60}, {0, 0, 0, 1}}}, Data: make([]float32, n*n*n)}
	for k := range n {
		for j := range n {
			for i := range n {
				if (i-10)*(i-10)+(j-10)*(j-10)+(k-10)*(k-10) <= 64 {
					v.Data[i+n*(j+n*k)] = 1
				}
			}
		}
	}
	return v, nil
}

func (h *helper) SeedMap(context.Context, string, [3]int) (*ipc.Volume, error) {
	return nil, ipc.Errorf(ipc.CodeNotFound, "no seed maps in this script")
}

func (h *helper) Series(context.Context, string, [3]int) (ipc.Series, error) {
	return ipc.Series{}, ipc.Errorf(ipc.CodeNotFound, "no series in this script")
}

func (h *helper) Files(context.Context, string) ([]ipc.FileInfo, error) { return nil, nil }

func (h *helper) OpenFile(_ context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	if name != "degree_distribution.png" {
		return nil, ipc.FileInfo{}, ipc.Errorf(ipc.CodeNotFound, "no file %s", name)
	}
	img := image.NewNRGBA(image.Rect(0, 0, 80, 60))
	for x := range 80 {
		img.Set(x, 59-x*3/4, color.Black)
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return io.NopCloser(&b), ipc.FileInfo{Name: name, Size: int64(b.Len())}, nil
}

func TestDropAcceptsNIfTIOnly(t *testing.T) {
	test.NewTempApp(t)
	u := New(context.Background(), Options{})
	w := test.NewTempWindow(t, u.Content())
	w.Resize(fyne.NewSize(900, 600))
	u.Dropped(fyne.NewPos(10, 10), []fyne.URI{
		storage.NewFileURI("/data/sub-01_bold.nii.gz"),
		storage.NewFileURI("/data/notes.txt"),
		storage.NewFileURI("/data/sub-02_bold.nii"),
		storage.NewFileURI("/data/sub-01_bold.nii.gz"), // dropped twice: listed once
	})
	got := u.Scans.Paths()
	if len(got) != 2 || got[0] != "/data/sub-01_bold.nii.gz" || got[1] != "/data/sub-02_bold.nii" {
		t.Fatalf("scans %v", got)
	}
	if s := u.Status.Text; s != "2 scan(s) ready. Not a NIfTI scan (.nii, .nii.gz) or DICOM (folder, .zip, DICOMDIR): notes.txt" {
		t.Fatalf("status %q", s)
	}
	if n := u.pending.Length(); n != 2 {
		t.Fatalf("list shows %d rows", n)
	}
	// Not connected yet: nothing can be analysed.
	if u.Analyse.Text != "Analyse 2 scan(s)" || !u.Analyse.Disabled() {
		t.Errorf("analyse button %q disabled=%v", u.Analyse.Text, u.Analyse.Disabled())
	}
	u.Scans.SetMask("/data/sub-02_bold.nii", "/data/brain.nii.gz")
	u.Scans.Remove("/data/sub-01_bold.nii.gz")
	if it := u.Scans.Items(); len(it) != 1 || it[0].Mask != "/data/brain.nii.gz" {
		t.Errorf("items %+v", it)
	}
}

func TestIsScan(t *testing.T) {
	for name, want := range map[string]bool{"a.nii": true, "A.NII.GZ": true, "a.nii.gz.part": false, "a.img": false, "nii": false} {
		if IsScan(name) != want {
			t.Errorf("IsScan(%q) != %v", name, want)
		}
	}
}

func TestSettingsDefaultsAndValidation(t *testing.T) {
	test.NewTempApp(t)
	f := NewSettingsForm()
	test.NewTempWindow(t, f.Content())
	s, err := f.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.Measure != "pearson" || s.Mode != "density" || s.Density != 0.01 || s.Metrics != "full" || s.Random != 15 || s.DFCWindow != 0 {
		t.Fatalf("defaults %+v", s)
	}
	if f.Summary.Text != "Pearson correlation, the strongest 1 % of voxel pairs, 15 random networks." {
		t.Errorf("summary %q", f.Summary.Text)
	}
	cases := []struct {
		mode, value string
		want        string // "" = valid
	}{
		{"Strongest links (density %)", "0", "The density must be a percentage above 0 and at most 100"},
		{"Strongest links (density %)", "lots", `(you typed "lots")`},
		{"Strongest links (density %)", "0,5 %", ""},
		{"Correlation at least (r)", "1.2", "The correlation threshold must be a number between -1 and 1"},
		{"Significant links (α)", "0.05", ""},
		{"Significant links (α)", "5", "The significance level α must be between 0 and 1"},
		{"Strongest links per voxel (k)", "2.5", "The number of links per voxel must be a whole number"},
	}
	for _, c := range cases {
		f.Mode.SetSelected(c.mode)
		f.Value.SetText(c.value)
		_, err := f.Settings()
		switch {
		case c.want == "" && (err != nil || f.Problem.Visible()):
			t.Errorf("%s %q: %v (problem shown: %v)", c.mode, c.value, err, f.Problem.Visible())
		case c.want != "" && (err == nil || !strings.Contains(f.Problem.Text, c.want) || !f.Problem.Visible()):
			t.Errorf("%s %q: problem %q, want %q", c.mode, c.value, f.Problem.Text, c.want)
		}
	}
	f.Mode.SetSelected("Strongest links (density %)")
	if f.Value.Text != "1" {
		t.Errorf("density mode restores its usual value: %q", f.Value.Text)
	}
	f.Value.SetText("0,5")
	if s, _ := f.Settings(); s.Density != 0.005 {
		t.Errorf("0,5 %% read as %v", s.Density)
	}
	test.Type(f.Random, "x")
	if !strings.Contains(f.Problem.Text, "random networks must be a whole number") {
		t.Errorf("random networks: %q", f.Problem.Text)
	}
	f.Random.SetText("15")
	f.DFCWindow.SetText("5")
	if !strings.Contains(f.Problem.Text, "at least 10") {
		t.Errorf("short window: %q", f.Problem.Text)
	}
	f.DFCWindow.SetText("30")
	f.DFCStep.SetText("40")
	if !strings.Contains(f.Problem.Text, "from 1 to the window length 30") {
		t.Errorf("long step: %q", f.Problem.Text)
	}
	f.DFCStep.SetText("5")
	if s, err := f.Settings(); err != nil || s.DFCWindow != 30 || s.DFCStep != 5 {
		t.Errorf("dfc settings %+v, %v", s, err)
	}
	f.Metrics.SetSelected("Basic (clustering, modules)")
	if s, _ := f.Settings(); s.Random != 0 || !f.Random.Disabled() {
		t.Errorf("basic metrics ask for random networks: %+v", s)
	}
	// Cleaning presets and head motion: the defaults are the helper's (auto, no realignment),
	// every preset reaches the request, and every request the form makes passes validation.
	if s, _ := f.Settings(); s.Denoise != settings.DenoiseAuto || s.Realign != settings.RealignOff || s.Register != settings.RealignOff {
		t.Errorf("cleaning defaults %q, realign %q, register %q", s.Denoise, s.Realign, s.Register)
	}
	for _, c := range cleaningChoices {
		f.Cleaning.SetSelected(c.Label)
		s, err := f.Settings()
		if err != nil || s.Denoise != c.Value || f.CleaningNote.Text == "" || f.CleaningNote.Text != cleaningNotes[c.Value] {
			t.Errorf("%q: denoise %q, note %q, %v", c.Label, s.Denoise, f.CleaningNote.Text, err)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%q: %v", c.Label, err)
		}
	}
	f.Realign.SetChecked(true)
	f.Register.SetChecked(true)
	if s, _ := f.Settings(); s.Realign != settings.RealignOn || s.Register != settings.RealignOn {
		t.Errorf("realign %q, register %q, want on", s.Realign, s.Register)
	}
}

func TestUnreachableHelperThenRetry(t *testing.T) {
	test.NewTempApp(t)
	attempts := 0
	h := newHelper()
	h.info.GPU = &ipc.GPU{Name: "NVIDIA H200"}
	connected := make(chan error, 2)
	u := New(context.Background(), Options{
		Connect: func(context.Context) (ipc.Service, error) {
			attempts++
			if attempts == 1 {
				return nil, errors.New("no helper answers at /run/user/1000/hubscope.sock")
			}
			return h, nil
		},
		OnConnect: func(_ ipc.Info, err error) { connected <- err },
	})
	test.NewTempWindow(t, u.Content())
	u.Start()
	if err := <-connected; err == nil {
		t.Fatal("first attempt connected")
	}
	if !strings.Contains(u.Backend.Text, "cannot reach its helper") || !strings.Contains(u.Backend.Text, "/run/user/1000/hubscope.sock") || !strings.Contains(u.Backend.Text, "press Retry") || !u.Retry.Visible() {
		t.Fatalf("unreachable: %q (retry visible %v)", u.Backend.Text, u.Retry.Visible())
	}
	test.Tap(u.Retry)
	if err := <-connected; err != nil {
		t.Fatal(err)
	}
	if u.Backend.Text != "Helper "+schema.Version+" · computing on GPU NVIDIA H200" || u.Retry.Visible() {
		t.Errorf("connected: %q (retry visible %v)", u.Backend.Text, u.Retry.Visible())
	}
	if r, ok := u.Jobs.Get("old"); !ok || r.Job.State != ipc.JobInterrupted {
		t.Errorf("earlier job: %+v %v", r, ok)
	}
}

// The whole flow over the real IPC: the scripted helper behind ipc's server on a Unix
// socket, the app on ipc's client. A scan opened with default settings is submitted, its
// progress followed to the end, and its result opens by itself; the main screen is compared
// with a golden image.
func TestAnalyseOverSocket(t *testing.T) {
	test.NewTempApp(t)
	//lint:ignore SA1019 the golden images are drawn in the light theme, whatever the user prefers
	test.ApplyTheme(t, theme.LightTheme())
	h := newHelper()
	// A normative folder chosen in an earlier session is in the preferences.
	fyne.CurrentApp().Preferences().SetString(NormPreference, "/data/norm")
	sock := filepath.Join(t.TempDir(), "h.sock")
	srv, err := ipc.NewServer(h, ipc.ServerOptions{Socket: sock})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results := make(chan *Result, 1)
	var w fyne.Window
	u := New(ctx, Options{
		Connect:  func(context.Context) (ipc.Service, error) { return ipc.NewUnixClient(sock), nil },
		OnResult: func(r *Result) { results <- r },
		Window:   nil,
	})
	w = test.NewTempWindow(t, u.Content())
	w.Resize(fyne.NewSize(1280, 800))
	u.OpenScans("/data/sub-01.nii.gz")
	u.Start()
	var r *Result
	select {
	case r = <-results:
	case <-time.After(20 * time.Second):
		t.Fatal("no result in 20 s")
	}
	// Everything the result loads by itself, before the test looks at it (Fyne's test driver
	// applies background updates on their own goroutines).
	<-r.Network.Loaded()
	<-r.Ready3D
	<-r.SlicesReady

	h.mu.Lock()
	sub := h.submitted
	h.mu.Unlock()
	if len(sub) != 1 || sub[0].Scan != "/data/sub-01.nii.gz" || sub[0].Settings == nil || sub[0].Settings.Density != 0.01 || sub[0].Settings.Measure != "pearson" || sub[0].Mask != "" || sub[0].Norm != "/data/norm" {
		t.Fatalf("submitted %+v", sub)
	}
	if row, _ := u.Jobs.Get("job1"); row.Job.State != ipc.JobDone {
		t.Errorf("job row %+v", row.Job)
	}
	if got := r.Network.Hubs.Shown(); len(got) != 2 || got[0].Region != "Frontal_Mid_L" {
		t.Errorf("hub table %+v", got)
	}
	var rep bytes.Buffer
	if err := r.WriteReport(&rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Frontal_Mid_L", "data:image/png;base64,", "Tzourio-Mazoyer"} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	path := filepath.Join(t.TempDir(), "r.html")
	if err := r.SaveReport(path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b[:200], rep.Bytes()[:200]) {
		t.Error("saved report differs")
	}
	if r.View3D == nil {
		t.Fatal("no 3D view")
	}
	img := r.View3D.Image()
	found := map[int]bool{}
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y += 2 {
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x += 2 {
			c := img.RGBAAt(x, y)
			for m := 1; m <= 2; m++ {
				p := report.ModuleColor(m)
				if absDiff(c.R, p.R)+absDiff(c.G, p.G)+absDiff(c.B, p.B) < 60 && (c.R != c.G || c.G != c.B) {
					found[m] = true
				}
			}
		}
	}
	if !found[1] || !found[2] {
		t.Errorf("3D view shows module colours %v, want modules 1 and 2", found)
	}
	// Network: the golden image should not depend on the 3D renderer.
	if !r.SelectTab(TabNetwork) {
		t.Fatal("no Network tab")
	}
	test.AssertImageMatches(t, "main_result.png", w.Canvas().Capture())
}

// "Open scan…" opens the NIfTI file dialog over the window (on the desktop; the browser build
// swaps in the page's file chooser).
func TestOpenScanShowsFileDialog(t *testing.T) {
	test.NewTempApp(t)
	w := test.NewTempWindow(t, nil)
	w.Resize(fyne.NewSize(1000, 700))
	u := New(context.Background(), Options{Window: w})
	w.SetContent(u.Content())
	var open *widget.Button
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Button:
			if v.Text == "Open scan…" {
				open = v
			}
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.TempWidgetRenderer(t, v).Objects() {
				walk(c)
			}
		}
	}
	walk(w.Content())
	if open == nil {
		t.Fatal("no \"Open scan…\" button on the main screen")
	}
	if w.Canvas().Overlays().Top() != nil {
		t.Fatal("an overlay is shown before the tap")
	}
	test.Tap(open)
	if w.Canvas().Overlays().Top() == nil {
		t.Fatal("tapping \"Open scan…\" showed no file dialog")
	}
}
