//go:build !js

package app

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/slices/slicestest"
	"github.com/hubscope/hubscope/ipc"
)

// phantomHelper is the scripted helper of these tests serving slicestest's phantom job, whose
// every volume value is known (mean EPI, degree, hubs, modules, atlas, seed maps, series and,
// with dfc, the sliding-window maps), with the network metrics and degree plot of helper.
type phantomHelper struct {
	*slicestest.Service
	dfc bool
}

func (p *phantomHelper) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	s, err := p.Service.Summary(ctx, id)
	if err != nil {
		return s, err
	}
	s.Metrics = []byte(metricsJSON)
	s.Bundle = "/results/phantom"
	s.Files = []ipc.FileInfo{{Name: "degree_distribution.png"}, {Name: "hubs.tsv"}}
	roles := []string{"connector", "provincial", "connector"}
	for n := range s.Hubs {
		h := &s.Hubs[n]
		h.Node, h.Role = n+1, roles[n%len(roles)]
		h.MNI = slices.World(slicestest.Affine, h.Voxel)
		h.Region = slicestest.AtlasLabels[slicestest.Region(h.Voxel)]
	}
	if !p.dfc {
		s.DFC = nil
		var vols []string
		for _, v := range s.Volumes {
			if !strings.HasPrefix(v, slices.DFCPrefix) {
				vols = append(vols, v)
			}
		}
		s.Volumes = vols
	}
	return s, nil
}

func (p *phantomHelper) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	return newHelper().OpenFile(ctx, id, name)
}

// changes receives what OnSlicesChanged reports.
type changes chan [2]any

func (c changes) next(t *testing.T, what string) error {
	t.Helper()
	for {
		select {
		case ch := <-c:
			if ch[0] == what {
				err, _ := ch[1].(error)
				return err
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("gave up waiting for the %s to change", what)
			return nil
		}
	}
}

// openPhantom shows the phantom job's result in a 1280 × 800 main window, reached over the
// real IPC (ipc's server on a Unix socket, ipc's client), and waits until its Slices (and
// Dynamics) tabs are loaded.
func openPhantom(t *testing.T, dfc bool) (*UI, *Result, fyne.Window, *slicestest.Service, changes) {
	t.Helper()
	test.NewTempApp(t)
	//lint:ignore SA1019 the golden images are drawn in the light theme, whatever the user prefers
	test.ApplyTheme(t, theme.LightTheme())
	svc := slicestest.NewService()
	sock := filepath.Join(t.TempDir(), "h.sock")
	srv, err := ipc.NewServer(&phantomHelper{Service: svc, dfc: dfc}, ipc.ServerOptions{Socket: sock,
		Handler: ipc.HandlerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	results := make(chan *Result, 1)
	connected := make(chan error, 1)
	u := New(ctx, Options{
		Connect:   func(context.Context) (ipc.Service, error) { return ipc.NewUnixClient(sock), nil },
		OnResult:  func(r *Result) { results <- r },
		OnConnect: func(_ ipc.Info, err error) { connected <- err },
	})
	w := test.NewTempWindow(t, u.Content())
	w.Resize(fyne.NewSize(1280, 800))
	u.Start()
	if err := <-connected; err != nil {
		t.Fatal(err)
	}
	row, ok := u.Jobs.Get(slicestest.JobID)
	if !ok {
		t.Fatal("the phantom job is not listed")
	}
	u.open(row.Job) // what the job row's Open button does
	var r *Result
	select {
	case r = <-results:
	case <-time.After(20 * time.Second):
		t.Fatal("no result in 20 s")
	}
	select {
	case <-r.SlicesReady:
	case <-time.After(20 * time.Second):
		t.Fatal("the Slices tab did not load in 20 s")
	}
	c := make(changes, 16)
	r.OnSlicesChanged = func(what string, err error) { c <- [2]any{what, err} }
	return u, r, w, svc, c
}

func tabNames(r *Result) []string {
	var names []string
	for _, it := range r.Tabs.Items {
		names = append(names, it.Text)
	}
	return names
}

// A hub picked in the 3D view moves the slices' crosshair (Slices and Dynamics) to its voxel,
// fills the inspector and highlights the sphere; the 3D tab stays on show until the user asks
// for the slices.
func TestHubFrom3DMovesCrosshairAndFillsInspector(t *testing.T) {
	u, r, w, svc, c := openPhantom(t, true)
	if r.View3D == nil {
		t.Fatal("no 3D view")
	}
	if got := r.Slices.Crosshair(); got != slicestest.Hubs[0] {
		t.Fatalf("the slices open at %v, want the strongest hub %v", got, slicestest.Hubs[0])
	}
	hub := 1
	voxel := slicestest.Hubs[hub] // (9, 10, 16): right posterior → module 4
	r.View3D.OnSelect(hub)        // what a tap on its sphere calls (sphere IDs index Summary.Hubs)
	if err := c.next(t, ChangedInspector); err != nil {
		t.Fatal(err)
	}
	if got := r.Slices.Crosshair(); got != voxel {
		t.Errorf("slice crosshair at %v, want %v", got, voxel)
	}
	if got := r.Dynamics.Viewer.Crosshair(); got != voxel {
		t.Errorf("Dynamics crosshair at %v, want %v", got, voxel)
	}
	d := r.Inspector.Details()
	if d == nil || d.Voxel != voxel || d.Hub == nil || d.Region != "Occipital_R" || d.Module != 4 || d.Degree != 250 || !d.InMask {
		t.Fatalf("inspector shows %+v", d)
	}
	if n := len(d.Series.Values); n != slicestest.SeriesLength {
		t.Errorf("inspector series has %d points", n)
	}
	if svc.Count(fmt.Sprintf("series %d,%d,%d", voxel[0], voxel[1], voxel[2])) != 1 {
		t.Errorf("requests %v", svc.Requests())
	}
	if got := r.View3D.Highlighted(); got != hub {
		t.Errorf("3D highlights sphere %d, want %d", got, hub)
	}
	if s := r.selected.Text; !strings.HasPrefix(s, "Hub 2: Occipital_R") {
		t.Errorf("3D caption %q", s)
	}
	if s := r.Tabs.Selected().Text; s != Tab3D {
		t.Errorf("tab %q on show after a pick in 3D", s)
	}
	test.Tap(r.showInSlices)
	if s := r.Tabs.Selected().Text; s != TabSlices {
		t.Errorf("Show in slices went to %q", s)
	}
	// The slices and the inspector take the window's width: the scan list folds away.
	if u.left.Visible() || u.ListToggle.Text != "Show the scan list" {
		t.Errorf("scan list visible %v with the Slices tab, toggle %q", u.left.Visible(), u.ListToggle.Text)
	}
	test.AssertImageMatches(t, "slices_tab.png", w.Canvas().Capture())
	// Every volume came through the one cache: fetched once for the slices, the inspector,
	// the Dynamics tab and the report figure together.
	for _, v := range []string{"mean", "hubs", "modules", "degree", "mask"} {
		if n := svc.Count("volume " + v); n != 1 {
			t.Errorf("volume %s fetched %d times", v, n)
		}
	}
}

// A voxel tapped in the axial view fills the inspector; the 3D view highlights no hub.
func TestSliceTapFillsInspector(t *testing.T) {
	_, r, w, _, c := openPhantom(t, false)
	r.SelectTab(TabSlices)
	before := r.Slices.Crosshair()
	// The first of the three views is the axial one; its image is centred in its column.
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(r.Slices)
	size := r.Slices.Size()
	test.TapCanvas(w.Canvas(), pos.Add(fyne.NewPos(size.Width/6, size.Height/2)))
	if err := c.next(t, ChangedInspector); err != nil {
		t.Fatal(err)
	}
	got := r.Slices.Crosshair()
	if got == before || got[2] != before[2] {
		t.Fatalf("tap in the axial view moved the crosshair from %v to %v", before, got)
	}
	d := r.Inspector.Details()
	if d == nil || d.Voxel != got {
		t.Fatalf("inspector shows %+v, crosshair at %v", d, got)
	}
	if !slicestest.InMask(got) {
		t.Fatalf("the middle of the axial view, %v, is outside the phantom's brain", got)
	}
	if d.Degree != slicestest.Degree(got) || d.Module != slicestest.Module(got) || d.Region != slicestest.AtlasLabels[slicestest.Region(got)] {
		t.Errorf("voxel %v: degree %v module %d region %q", got, d.Degree, d.Module, d.Region)
	}
	if h := r.View3D.Highlighted(); h != r.hubAt(got) {
		t.Errorf("3D highlights %d for voxel %v", h, got)
	}
}

// findButton returns the button with this text among the objects laid out in o.
func findButton(t *testing.T, o fyne.CanvasObject, text string) *widget.Button {
	t.Helper()
	for _, obj := range test.LaidOutObjects(o) {
		if b, ok := obj.(*widget.Button); ok && b.Text == text {
			return b
		}
	}
	t.Fatalf("no button %q", text)
	return nil
}

// The inspector's Seed map button installs the voxel's seed map as the slices' overlay; the
// button below the inspector brings the hubs in module colours back.
func TestSeedMapInstallsOverlayAndBack(t *testing.T) {
	_, r, w, svc, c := openPhantom(t, false)
	r.SelectTab(TabSlices)
	back := findButton(t, w.Canvas().Content(), "Back to hubs and modules")
	if !back.Disabled() {
		t.Error("the way back is open while the hubs are shown")
	}
	seed := slicestest.Hubs[0]
	r.SelectHub(0)
	if err := c.next(t, ChangedInspector); err != nil {
		t.Fatal(err)
	}
	test.Tap(findButton(t, w.Canvas().Content(), "Seed map"))
	if err := c.next(t, ChangedOverlay); err != nil {
		t.Fatal(err)
	}
	vol, name := r.Slices.Overlay()
	if vol == nil || vol.Header.Seed == nil || *vol.Header.Seed != seed || !strings.HasPrefix(name, "seed map") {
		t.Fatalf("overlay %q after the seed map: %+v", name, vol)
	}
	if svc.Count(fmt.Sprintf("seed %d,%d,%d", seed[0], seed[1], seed[2])) != 1 {
		t.Errorf("requests %v", svc.Requests())
	}
	// The seed voxel correlates 1 with itself: the viewer reads the map at the crosshair.
	if x := vol.At(seed[0], seed[1], seed[2]); math.Abs(float64(x)-1) > 1e-6 {
		t.Errorf("seed map at the seed: %v", x)
	}
	if back.Disabled() {
		t.Fatal("no way back from the seed map")
	}
	test.Tap(back)
	if err := c.next(t, ChangedOverlay); err != nil {
		t.Fatal(err)
	}
	if vol, name := r.Slices.Overlay(); name != slices.VolumeHubs || vol == nil || !vol.Header.Categorical {
		t.Fatalf("overlay %q after going back", name)
	}
	if !back.Disabled() {
		t.Error("the way back stays open with the hubs shown")
	}
}

// The Dynamics tab exists only for a job with a dynamic analysis, and shows its windows.
func TestDynamicsTabOnlyWithDFC(t *testing.T) {
	t.Run("without", func(t *testing.T) {
		_, r, _, _, _ := openPhantom(t, false)
		if r.Dynamics != nil || r.SelectTab(TabDynamics) {
			t.Fatalf("tabs %v for a job without DFC", tabNames(r))
		}
	})
	t.Run("with", func(t *testing.T) {
		_, r, w, _, c := openPhantom(t, true)
		if got := strings.Join(tabNames(r), " "); got != "3D Slices Network Dynamics Export" {
			t.Fatalf("tabs %q", got)
		}
		if !r.SelectTab(TabDynamics) {
			t.Fatal("no Dynamics tab")
		}
		if _, name := r.Dynamics.Viewer.Overlay(); name != "dfc_degree@0" {
			t.Fatalf("Dynamics shows %q", name)
		}
		r.Dynamics.SetWindow(2)
		if err := c.next(t, ChangedWindow); err != nil {
			t.Fatal(err)
		}
		if _, name := r.Dynamics.Viewer.Overlay(); name != "dfc_degree@2" {
			t.Fatalf("Dynamics shows %q after scrubbing to window 3", name)
		}
		// The Dynamics viewer shares the selection: a tap there inspects in the Slices tab.
		r.Dynamics.Viewer.OnSelect(slicestest.Origin)
		if err := c.next(t, ChangedInspector); err != nil {
			t.Fatal(err)
		}
		if r.Slices.Crosshair() != slicestest.Origin || r.Inspector.Details().Voxel != slicestest.Origin {
			t.Errorf("a pick in Dynamics: slices at %v", r.Slices.Crosshair())
		}
		test.AssertImageMatches(t, "dynamics_tab.png", w.Canvas().Capture())
	})
}

// overlaid reports whether pixel p is module colour m drawn at opacity a over a background
// grey (the slice viewer's out = (1 − a)·grey + a·colour, grey ≤ 200), within 3 levels.
func overlaid(p color.RGBA, m color.NRGBA, a float64) bool {
	grey := (float64(p.R) - a*float64(m.R)) / (1 - a)
	if grey < -3 || grey > 203 {
		return false
	}
	for _, ch := range [][2]uint8{{p.G, m.G}, {p.B, m.B}} {
		want := (1-a)*grey + a*float64(ch[1])
		if math.Abs(float64(ch[0])-want) > 3 {
			return false
		}
	}
	return true
}

// countOverlaid counts the pixels of img showing module m's colour over the background.
func countOverlaid(img image.Image, m int) int {
	n := 0
	b := img.Bounds()
	c := slices.ModuleColor(m)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if overlaid(color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}, c, 0.8) {
				n++
			}
		}
	}
	return n
}

// The report shows an axial slice through the strongest hub with the hubs in their modules'
// colours, beside the 3D view; "Save slices PNG" writes the viewer's three views.
func TestReportHasSliceFigure(t *testing.T) {
	_, r, _, _, c := openPhantom(t, false)
	// Whatever the user shows in the slices, the report's figure stays the hub/module slice.
	r.SelectHub(1)
	if err := c.next(t, ChangedInspector); err != nil {
		t.Fatal(err)
	}
	fig, title, err := r.SliceFigure()
	if err != nil {
		t.Fatal(err)
	}
	strongest := slicestest.Hubs[0] // (20, 25, 14), module 1, Frontal_L, z = 0 mm
	if want := "Axial slice through the strongest hub (Frontal_L, MNI z = 0 mm)"; !strings.HasPrefix(title, want) {
		t.Errorf("figure title %q, want %q…", title, want)
	}
	img, err := png.Decode(bytes.NewReader(fig))
	if err != nil {
		t.Fatal(err)
	}
	// One axial view (30 × 36 voxels of 2 mm) of the snapshot's 320 pixels per longest extent.
	if b := img.Bounds(); b.Dy() < 320 || b.Dx() > 700 {
		t.Errorf("figure is %v", b)
	}
	if n := countOverlaid(img, slicestest.Module(strongest)); n < 20 {
		t.Errorf("figure: %d pixels of module %d's colour over the background", n, slicestest.Module(strongest))
	}
	var rep bytes.Buffer
	if err := r.WriteReport(&rep); err != nil {
		t.Fatal(err)
	}
	page := rep.String()
	i3D, iSlice := strings.Index(page, `alt="Hubs in 3D`), strings.Index(page, `alt="`+html.EscapeString(title))
	if i3D < 0 || iSlice < 0 || iSlice < i3D {
		t.Fatalf("report figures: 3D at %d, slice at %d", i3D, iSlice)
	}
	if n := len(regexp.MustCompile(`<img src="data:image/png;base64,`).FindAllString(page, -1)); n != 3 {
		t.Errorf("report has %d figures, want 3D, slice and degree distribution", n)
	}

	path := filepath.Join(t.TempDir(), "slices.png")
	if err := r.SaveSlicesPNG(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := r.Slices.Snapshot()
	if saved.Bounds() != snap.Bounds() {
		t.Errorf("saved %v, the viewer's snapshot %v", saved.Bounds(), snap.Bounds())
	}
	// The viewer now stands at hub 2 (module 4), whose colour the three views show.
	if n := countOverlaid(saved, slicestest.Module(slicestest.Hubs[1])); n < 20 {
		t.Errorf("saved slices: %d pixels of module 4's colour", n)
	}
}

// The header's toggle folds the scan list away and brings it back.
func TestListToggle(t *testing.T) {
	test.NewTempApp(t)
	u := New(context.Background(), Options{})
	w := test.NewTempWindow(t, u.Content())
	w.Resize(fyne.NewSize(1280, 800))
	if !u.left.Visible() {
		t.Fatal("the scan list starts folded")
	}
	before := u.resultBox.Size().Width
	test.Tap(u.ListToggle)
	if u.left.Visible() || u.ListToggle.Text != "Show the scan list" || u.resultBox.Size().Width <= before {
		t.Fatalf("after hiding: list visible %v, toggle %q, result %v wide (was %v)", u.left.Visible(), u.ListToggle.Text, u.resultBox.Size().Width, before)
	}
	test.Tap(u.ListToggle)
	if !u.left.Visible() || u.ListToggle.Text != "Hide the scan list" || u.resultBox.Size().Width != before {
		t.Fatalf("after showing: list visible %v, toggle %q, result %v wide (was %v)", u.left.Visible(), u.ListToggle.Text, u.resultBox.Size().Width, before)
	}
}
