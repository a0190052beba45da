package inspect

import (
	"context"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/slices/slicestest"
	"github.com/hubscope/hubscope/ipc"
)

func inspected(t *testing.T, svc ipc.Service, voxel [3]int) (*Inspector, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	in := New(svc)
	w := test.NewTempWindow(t, in)
	w.Resize(fyne.NewSize(420, 560))
	var shown []error
	in.OnShown = func(err error) { shown = append(shown, err) }
	in.Inspect(context.Background(), slicestest.JobID, voxel)
	in.pending.Wait()
	if len(shown) != 1 {
		t.Fatalf("OnShown called %d times", len(shown))
	}
	if shown[0] != nil {
		t.Fatalf("inspecting %v: %v", voxel, shown[0])
	}
	return in, w
}

func TestInspectHub(t *testing.T) {
	svc := slicestest.NewService()
	hub := slicestest.Hubs[0] // (20, 25, 14): left, anterior → module 1, Frontal_L
	in, w := inspected(t, svc, hub)
	checks := map[string][2]string{
		"voxel":    {in.voxel.Text, "20, 25, 14"},
		"world":    {in.world.Text, "-10.0, 14.0, 0.0"},
		"space":    {in.worldName.Text, "MNI (mm)"},
		"region":   {in.region.Text, "Frontal_L"},
		"degree":   {in.degree.Text, "250"},
		"strength": {in.strength.Text, "100.00"},
		"module":   {in.module.Text, "1"},
		"hub z":    {in.hubZ.Text, "3.00 — hub"},
		"note":     {in.note.Text, ""},
	}
	for what, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s shows %q, want %q", what, c[0], c[1])
		}
	}
	if in.swatch.FillColor != slices.ModuleColor(1) {
		t.Errorf("module swatch %v", in.swatch.FillColor)
	}
	// The series plot: time in seconds from the TR, values as served.
	x, y := in.plot.Data()
	want := slicestest.SeriesOf(hub)
	if len(x) != len(want) || x[1] != slicestest.TR || x[len(x)-1] != float64(len(want)-1)*slicestest.TR {
		t.Fatalf("series times %v", x)
	}
	for n := range want {
		if y[n] != float64(want[n]) {
			t.Fatalf("series value %d: %v, want %v", n, y[n], want[n])
		}
	}
	if svc.Count("series 20,25,14") != 1 {
		t.Errorf("requests %v", svc.Requests())
	}
	if in.seedButton.Disabled() {
		t.Error("seed map button disabled for an in-mask voxel")
	}
	test.AssertRendersToImage(t, "inspector-hub.png", w.Canvas())
}

func TestInspectRegionAndPosterior(t *testing.T) {
	v := [3]int{10, 8, 12} // right (i < 15), posterior (j < 18)
	in, _ := inspected(t, slicestest.NewService(), v)
	d := in.Details()
	if d.Region != "Occipital_R" || d.Module != 4 || d.Degree != slicestest.Degree(v) || d.Hub != nil || !d.InMask {
		t.Fatalf("details %+v", d)
	}
	if in.hubZ.Text != "-0.56" { // degree 10 + 10 + 2·8 + 3·12 = 72; (72 − 100) / 50
		t.Errorf("hub z %q", in.hubZ.Text)
	}
}

func TestInspectOutsideMask(t *testing.T) {
	svc := slicestest.NewService()
	corner := [3]int{0, 0, 0}
	in, _ := inspected(t, svc, corner)
	if !strings.Contains(in.note.Text, "outside the analysis mask") {
		t.Errorf("note %q", in.note.Text)
	}
	if in.degree.Text != "—" || in.module.Text != "—" || in.region.Text != "outside the atlas regions" {
		t.Errorf("degree %q, module %q, region %q", in.degree.Text, in.module.Text, in.region.Text)
	}
	if x, _ := in.plot.Data(); len(x) != 0 {
		t.Errorf("plotted %d points for a voxel with no series", len(x))
	}
	for _, r := range svc.Requests() {
		if strings.HasPrefix(r, "series") {
			t.Errorf("asked for %q outside the mask", r)
		}
	}
	if !in.seedButton.Disabled() {
		t.Error("seed map button enabled outside the mask")
	}
	if in.world.Text != "30.0, -36.0, -28.0" {
		t.Errorf("world %q", in.world.Text)
	}
}

func TestSeedMapButtonInstallsOverlay(t *testing.T) {
	svc := slicestest.NewService()
	cache := slices.NewVolumeCache(svc, 0)
	hub := slicestest.Hubs[1]
	in, _ := inspected(t, cache, hub)
	viewer := slices.New(cache)
	loaded := make(chan error, 1)
	viewer.OnLoaded = func(err error) { loaded <- err }
	viewer.Load(context.Background(), slicestest.JobID, slicestest.Summary())
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	var got *ipc.Volume
	in.OnSeedMap = func(vol *ipc.Volume) { got = vol; viewer.SetOverlay(vol) }
	test.Tap(in.seedButton)
	in.pending.Wait()
	if svc.Count("seed 9,10,16") != 1 {
		t.Fatalf("requests %v", svc.Requests())
	}
	if got == nil || got.Header.Seed == nil || *got.Header.Seed != hub {
		t.Fatalf("OnSeedMap got %+v", got)
	}
	if ov, name := viewer.Overlay(); ov != got || name != "seed map 9,10,16" {
		t.Fatalf("viewer overlay %q", name)
	}
	if !strings.Contains(in.seedStatus.Text, "12.5 ms") {
		t.Errorf("seed status %q", in.seedStatus.Text)
	}
	// The inspector and the viewer shared the cache: each volume came from the helper once.
	for _, name := range []string{"degree", "modules"} {
		if n := svc.Count("volume " + name); n != 1 {
			t.Errorf("volume %s fetched %d times", name, n)
		}
	}
}

func TestInspectUnknownJobSaysSo(t *testing.T) {
	test.NewTempApp(t)
	in := New(slicestest.NewService())
	var shown error
	in.OnShown = func(err error) { shown = err }
	in.Inspect(context.Background(), "job-missing", [3]int{1, 2, 3})
	in.pending.Wait()
	if shown == nil || !strings.Contains(in.note.Text, "job-missing") {
		t.Fatalf("error %v, note %q", shown, in.note.Text)
	}
}

func TestNewerInspectWins(t *testing.T) {
	test.NewTempApp(t)
	svc := slicestest.NewService()
	release := svc.HoldVolume("degree")
	in := New(svc)
	in.Inspect(context.Background(), slicestest.JobID, slicestest.Hubs[0])
	in.Inspect(context.Background(), slicestest.JobID, slicestest.Hubs[1])
	release()
	in.pending.Wait()
	if d := in.Details(); d == nil || d.Voxel != slicestest.Hubs[1] || in.voxel.Text != "9, 10, 16" {
		t.Fatalf("shows %+v", d)
	}
}
