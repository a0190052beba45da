package slices

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/hubscope/hubscope/app/slices/slicestest"
	"github.com/hubscope/hubscope/ipc"
)

// loaded returns a viewer showing the phantom job in a 960 × 480 test window.
func loaded(t *testing.T) (*Viewer, *slicestest.Service, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	svc := slicestest.NewService()
	v := New(svc)
	w := test.NewTempWindow(t, v)
	w.Resize(fyne.NewSize(960, 480))
	var loadErr error
	calls := 0
	v.OnLoaded = func(err error) { loadErr, calls = err, calls+1 }
	v.Load(context.Background(), slicestest.JobID, slicestest.Summary())
	v.pending.Wait()
	if calls != 1 || loadErr != nil {
		t.Fatalf("OnLoaded called %d times, error %v", calls, loadErr)
	}
	for _, s := range v.views {
		if s.area.Size.Width <= 0 {
			t.Fatalf("%s view not laid out", s.plane)
		}
	}
	return v, svc, w
}

// tapPixel taps the centre of slice pixel (px, py) of plane p's view.
func tapPixel(v *Viewer, p Plane, px, py int) {
	s := v.views[p]
	g := v.geom[p]
	a := s.area
	pos := fyne.NewPos(a.Position.X+(float32(px)+0.5)*a.Size.Width/float32(g.nc),
		a.Position.Y+(float32(py)+0.5)*a.Size.Height/float32(g.nr))
	test.TapAt(s, pos)
}

func TestTapSelectsVoxelRadiological(t *testing.T) {
	v, _, _ := loaded(t)
	var got [][3]int
	v.OnSelect = func(vox [3]int) { got = append(got, vox) }
	k := v.Crosshair()[2]
	// Radiological axial view: screen-right is the patient's left, which is +i on the MNI grid
	// (x = −2i + 30), and screen-up is anterior (+j): pixel (20, 10) is i = 20, j = 35 − 10.
	tapPixel(v, Axial, 20, 10)
	want := [3]int{20, 25, k}
	if len(got) != 1 || got[0] != want || v.Crosshair() != want {
		t.Fatalf("tap selected %v (crosshair %v), want %v", got, v.Crosshair(), want)
	}
	mm := World(slicestest.Affine, want)
	if mm != [3]float64{-10, 14, 2*float64(k) - 28} {
		t.Fatalf("voxel %v at %v mm", want, mm)
	}
	if s := v.position.Text; !strings.Contains(s, "(20, 25, ") || !strings.Contains(s, "(-10.0, 14.0, ") {
		t.Fatalf("position line %q", s)
	}
	if l, r := v.views[Axial].left.Text, v.views[Axial].right.Text; l != "R" || r != "L" {
		t.Fatalf("axial edges %q | %q, want R | L", l, r)
	}
	if !strings.Contains(v.conventionText.Text, "Radiological") {
		t.Fatalf("convention %q", v.conventionText.Text)
	}
	// Coronal view: pixel (3, 4) is i = 3, k = 29 − 4 at the crosshair's j.
	tapPixel(v, Coronal, 3, 4)
	if want := [3]int{3, 25, 25}; v.Crosshair() != want || got[1] != want {
		t.Fatalf("coronal tap selected %v, want %v", v.Crosshair(), want)
	}
	// Sagittal view: anterior on the left, so pixel (6, 0) is j = 35 − 6, k = 29.
	tapPixel(v, Sagittal, 6, 0)
	if want := [3]int{3, 29, 29}; v.Crosshair() != want {
		t.Fatalf("sagittal tap selected %v, want %v", v.Crosshair(), want)
	}
}

func TestTapSelectsVoxelNeurological(t *testing.T) {
	v, _, _ := loaded(t)
	v.SetRadiological(false)
	var got [3]int
	v.OnSelect = func(vox [3]int) { got = vox }
	// Neurological: screen-right is the patient's right, −i: pixel 20 is i = 29 − 20.
	tapPixel(v, Axial, 20, 10)
	if want := [3]int{9, 25, v.Crosshair()[2]}; got != want {
		t.Fatalf("tap selected %v, want %v", got, want)
	}
	if l, r := v.views[Axial].left.Text, v.views[Axial].right.Text; l != "L" || r != "R" {
		t.Fatalf("axial edges %q | %q, want L | R", l, r)
	}
	if !strings.Contains(v.conventionText.Text, "Neurological") {
		t.Fatalf("convention %q", v.conventionText.Text)
	}
}

func TestTapOutsideImageSelectsNothing(t *testing.T) {
	v, _, _ := loaded(t)
	called := false
	v.OnSelect = func([3]int) { called = true }
	before := v.Crosshair()
	s := v.views[Axial]
	if s.area.Position.X < 2 && s.area.Position.Y < 2 {
		t.Skip("the axial image fills its view: no margin to tap")
	}
	test.TapAt(s, fyne.NewPos(1, 1))
	if called || v.Crosshair() != before {
		t.Fatalf("tap on the margin selected %v", v.Crosshair())
	}
}

func TestLeftHemisphereOnScreenRight(t *testing.T) {
	v, _, _ := loaded(t)
	v.ShowVolume("modules")
	v.pending.Wait()
	v.SetStyle(Hot, 0, 1)
	v.SetCrosshair(slicestest.Origin)
	img := v.sliceImage(Axial)
	g := v.geom[Axial]
	// In the radiological convention the patient's left (modules 1 and 3) is on the right.
	right := img.RGBAAt(g.nc/2+5, g.nr/2-3)
	left := img.RGBAAt(g.nc/2-5, g.nr/2-3)
	if !sameColor(right, ModuleColor(1)) || !sameColor(left, ModuleColor(2)) {
		t.Fatalf("anterior right pixel %v, left pixel %v; want module 1 %v on the right, 2 %v on the left", right, left, ModuleColor(1), ModuleColor(2))
	}
}

func sameColor(a color.RGBA, b color.NRGBA) bool { return a.R == b.R && a.G == b.G && a.B == b.B }

func TestCrosshairMovesAllViews(t *testing.T) {
	v, _, _ := loaded(t)
	target := [3]int{7, 22, 11}
	v.SetCrosshair(target)
	titles := map[Plane]string{Axial: "Axial k = 11", Coronal: "Coronal j = 22", Sagittal: "Sagittal i = 7"}
	for p, want := range titles {
		if got := v.views[p].title.Text; got != want {
			t.Errorf("%s view title %q, want %q", p, got, want)
		}
	}
	// Sliders run towards +world: superior (k), anterior (j), right (−i on this grid).
	if a, c, s := v.sliders[Axial].Value, v.sliders[Coronal].Value, v.sliders[Sagittal].Value; a != 11 || c != 22 || s != 29-7 {
		t.Errorf("sliders at %v, %v, %v", a, c, s)
	}
	// Crosshair lines pass through the target's pixel centre in every view.
	for p, s := range v.views {
		g := v.geom[p]
		px, py := g.pixel(target)
		a := s.area
		x := a.Position.X + (float32(px)+0.5)*a.Size.Width/float32(g.nc)
		y := a.Position.Y + (float32(py)+0.5)*a.Size.Height/float32(g.nr)
		if d := math.Abs(float64(s.vLine.Position1.X - x)); d > 0.01 {
			t.Errorf("%s vertical line at x %v, want %v", Plane(p), s.vLine.Position1.X, x)
		}
		if d := math.Abs(float64(s.hLine.Position1.Y - y)); d > 0.01 {
			t.Errorf("%s horizontal line at y %v, want %v", Plane(p), s.hLine.Position1.Y, y)
		}
	}
	// The axial image now shows slice k = 11: the mean's grey follows k.
	want := v.sliceImage(Axial)
	got := v.views[Axial].img.Image.(*image.RGBA)
	if !equalImages(got, want) {
		t.Error("axial view does not show the crosshair's slice")
	}
	// A slider moves the crosshair along its axis only.
	v.sliders[Axial].SetValue(3)
	if c := v.Crosshair(); c != [3]int{7, 22, 3} || v.views[Axial].title.Text != "Axial k = 3" {
		t.Errorf("after the axial slider: crosshair %v, title %q", c, v.views[Axial].title.Text)
	}
	// A tap in one view moves the slices of the other two.
	tapPixel(v, Axial, 4, 5) // i = 4, j = 30
	if v.views[Sagittal].title.Text != "Sagittal i = 4" || v.views[Coronal].title.Text != "Coronal j = 30" {
		t.Errorf("after a tap: %q, %q", v.views[Sagittal].title.Text, v.views[Coronal].title.Text)
	}
}

// backgroundOnly renders plane p of the viewer's crosshair slice without the overlay.
func backgroundOnly(v *Viewer, p Plane) *image.RGBA {
	g := v.geom[p]
	img := image.NewRGBA(image.Rect(0, 0, g.nc, g.nr))
	renderSlice(img, g, v.Crosshair()[g.fixed], v.bg, nil)
	return img
}

// eventually waits (up to 20 s) for cond, which another goroutine makes true.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
	}
}

func equalImages(a, b *image.RGBA) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for n := range a.Pix {
		if a.Pix[n] != b.Pix[n] {
			return false
		}
	}
	return true
}

func TestOverlayHubInModuleColourBelowThresholdTransparent(t *testing.T) {
	v, _, _ := loaded(t)
	if _, name := v.Overlay(); name != VolumeHubs {
		t.Fatalf("default overlay %q, want hubs", name)
	}
	v.SetStyle(Hot, 0, 1)
	for _, hub := range slicestest.Hubs {
		v.SetCrosshair(hub)
		g := v.geom[Axial]
		px, py := g.pixel(hub)
		got := v.sliceImage(Axial).RGBAAt(px, py)
		if want := ModuleColor(slicestest.Module(hub)); !sameColor(got, want) {
			t.Errorf("hub %v drawn %v, want module %d's %v", hub, got, slicestest.Module(hub), want)
		}
	}
	// A voxel that is not a hub shows the background alone.
	v.SetCrosshair(slicestest.Hubs[0])
	plain := [3]int{slicestest.Hubs[0][0] - 3, slicestest.Hubs[0][1], slicestest.Hubs[0][2]}
	px, py := v.geom[Axial].pixel(plain)
	if got, want := v.sliceImage(Axial).RGBAAt(px, py), backgroundOnly(v, Axial).RGBAAt(px, py); got != want || got.R != got.G {
		t.Errorf("non-hub voxel drawn %v, background %v", got, want)
	}

	// Degree above the threshold takes the colour scale; below, the background shows.
	v.ShowVolume("degree")
	v.pending.Wait()
	v.SetStyle(Hot, 120, 1)
	if st := v.Style(); st.Threshold != 120 || st.Colormap != Hot {
		t.Fatalf("style %+v", st)
	}
	var above, below int
	img, bg := v.sliceImage(Axial), backgroundOnly(v, Axial)
	g := v.geom[Axial]
	l := newLUT(Hot)
	for py := range g.nr {
		for px := range g.nc {
			vox := g.voxel(px, py, v.Crosshair()[2])
			d := slicestest.Degree(vox)
			got := img.RGBAAt(px, py)
			switch {
			case math.IsNaN(d) || d < 120:
				if got != bg.RGBAAt(px, py) {
					t.Fatalf("voxel %v (degree %v) below threshold drawn %v, background %v", vox, d, got, bg.RGBAAt(px, py))
				}
				below++
			default:
				if want := l.at((d - 120) / (250 - 120)); !sameColor(got, want) {
					t.Fatalf("voxel %v (degree %v) drawn %v, want %v", vox, d, got, want)
				}
				above++
			}
		}
	}
	if above == 0 || below == 0 {
		t.Fatalf("%d voxels above and %d below the threshold: the slice does not test both", above, below)
	}
}

func TestOpacityBlends(t *testing.T) {
	v, _, _ := loaded(t)
	hub := slicestest.Hubs[0]
	v.SetCrosshair(hub)
	v.SetStyle(Hot, 0, 0.5)
	px, py := v.geom[Axial].pixel(hub)
	got := v.sliceImage(Axial).RGBAAt(px, py)
	grey := backgroundOnly(v, Axial).RGBAAt(px, py)
	c := ModuleColor(slicestest.Module(hub))
	want := uint8(math.Round(0.5*float64(grey.R) + 0.5*float64(c.R)))
	if d := int(got.R) - int(want); d < -1 || d > 1 {
		t.Fatalf("half-opaque hub red %d, want %d (grey %d, module %d)", got.R, want, grey.R, c.R)
	}
}

func TestSetOverlayShowsSeedMap(t *testing.T) {
	v, svc, _ := loaded(t)
	seed := [3]int{15, 18, 14}
	vol, err := svc.SeedMap(context.Background(), slicestest.JobID, seed)
	if err != nil {
		t.Fatal(err)
	}
	v.SetOverlay(vol)
	got, name := v.Overlay()
	if got != vol || name != "seed map 15,18,14" || v.picker.Selected != name {
		t.Fatalf("overlay %p %q (picker %q)", got, name, v.picker.Selected)
	}
	if st := v.Style(); st.Threshold != 0.3 {
		t.Fatalf("seed map threshold %v, want 0.3", st.Threshold)
	}
	// Back to a job volume and to the seed map again, through the picker.
	v.picker.SetSelected("degree")
	v.pending.Wait()
	if _, name := v.Overlay(); name != "degree" {
		t.Fatalf("overlay %q after picking degree", name)
	}
	v.picker.SetSelected("seed map 15,18,14")
	if got, _ := v.Overlay(); got != vol {
		t.Fatal("picking the seed map again did not show it")
	}
}

func TestStaleOverlayFetchCancelled(t *testing.T) {
	v, svc, _ := loaded(t)
	release := svc.HoldVolume("strength")
	defer release()
	var shown []string
	v.OnOverlay = func(name string, err error) { shown = append(shown, name) }
	v.ShowVolume("strength")
	eventually(t, "the strength request reaches the helper", func() bool { return svc.Count("volume strength") == 1 })
	v.ShowVolume("hub_z") // the user moves on before strength arrives
	v.pending.Wait()
	if _, name := v.Overlay(); name != "hub_z" {
		t.Fatalf("overlay %q, want hub_z", name)
	}
	eventually(t, "the stale strength fetch is cancelled", func() bool { return svc.Cancelled() == 1 })
	if len(shown) != 1 || shown[0] != "hub_z" {
		t.Fatalf("OnOverlay saw %v, want only hub_z", shown)
	}
	if v.svc.Bytes() != 5*volumeBytes(v.ov.vol) { // mean, hubs, modules, atlas, hub_z
		t.Fatalf("cache holds %d bytes", v.svc.Bytes())
	}
}

func TestVolumesFetchedOnce(t *testing.T) {
	v, svc, _ := loaded(t)
	for range 3 {
		v.ShowVolume("degree")
		v.pending.Wait()
		v.ShowVolume("hubs")
		v.pending.Wait()
	}
	for _, name := range []string{"mean", "degree", "hubs", "modules"} {
		if n := svc.Count("volume " + name); n != 1 {
			t.Errorf("%s fetched %d times", name, n)
		}
	}
}

func TestLoadUnknownJobReportsError(t *testing.T) {
	test.NewTempApp(t)
	v := New(slicestest.NewService())
	var loadErr error
	v.OnLoaded = func(err error) { loadErr = err }
	v.Load(context.Background(), "job-missing", slicestest.Summary())
	v.pending.Wait()
	if loadErr == nil || !strings.Contains(loadErr.Error(), "job-missing") || !strings.Contains(v.status.Text, `background "mean"`) {
		t.Fatalf("error %v, status %q", loadErr, v.status.Text)
	}
}

func TestSavePNG(t *testing.T) {
	v, _, _ := loaded(t)
	v.SetCrosshair(slicestest.Hubs[0])
	v.SetStyle(Hot, 0, 1)
	path := filepath.Join(t.TempDir(), "slices.png")
	if err := v.SavePNG(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The hub's module colour appears (the hub is in all three slices).
	want := ModuleColor(slicestest.Module(slicestest.Hubs[0]))
	found := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(bl>>8) == want.B {
				found++
			}
		}
	}
	if found == 0 {
		t.Fatalf("saved %v image shows no hub in module colour %v", b, want)
	}
	snap, _ := v.Snapshot()
	test.AssertImageMatches(t, "snapshot.png", snap)
	empty := New(slicestest.NewService())
	if err := empty.SavePNG(path); err == nil {
		t.Fatal("an empty viewer saved an image")
	}
}

func TestViewerGolden(t *testing.T) {
	v, _, w := loaded(t)
	v.SetCrosshair(slicestest.Hubs[0])
	test.AssertRendersToImage(t, "viewer.png", w.Canvas())
}

func TestViewerDegreeGolden(t *testing.T) {
	v, _, w := loaded(t)
	v.ShowVolume("degree")
	v.pending.Wait()
	v.SetStyle(Hot, 100, 0.9)
	v.SetCrosshair(slicestest.Origin)
	test.AssertRendersToImage(t, "viewer-degree.png", w.Canvas())
}

// SnapshotPlanes(Axial) is the axial third of Snapshot, drawn the same way, widened to its
// caption.
func TestSnapshotPlanesAxial(t *testing.T) {
	v, _, _ := loaded(t)
	v.SetCrosshair(slicestest.Hubs[0])
	all, err := v.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	ax, err := v.SnapshotPlanes(Axial)
	if err != nil {
		t.Fatal(err)
	}
	if ax.Bounds().Dy() != all.Bounds().Dy() || ax.Bounds().Dx() >= all.Bounds().Dx() {
		t.Fatalf("axial snapshot %v, all three %v", ax.Bounds(), all.Bounds())
	}
	// The axial panel: from the left gap to the gap before the coronal panel.
	g := v.geom[Axial]
	extent := 0.0
	for _, q := range v.geom {
		extent = math.Max(extent, math.Max(float64(q.nc)*q.dc, float64(q.nr)*q.dr))
	}
	wAx := int(math.Round(float64(g.nc) * g.dc * snapshotSide / extent))
	hAx := int(math.Round(float64(g.nr) * g.dr * snapshotSide / extent))
	for y := range 8 + hAx {
		for x := range 8 + wAx {
			if ax.RGBAAt(x, y) != all.RGBAAt(x, y) {
				t.Fatalf("pixel (%d, %d): %v alone, %v beside the other views", x, y, ax.RGBAAt(x, y), all.RGBAAt(x, y))
			}
		}
	}
	if _, err := v.SnapshotPlanes(); err == nil {
		t.Error("a snapshot of no view")
	}
	if _, err := v.SnapshotPlanes(Plane(7)); err == nil || !strings.Contains(err.Error(), "Plane(7)") {
		t.Errorf("a snapshot of plane 7: %v", err)
	}
}

// Two columns of controls put them in two rows, and the viewer asks for less width.
func TestSetControlColumns(t *testing.T) {
	v, _, _ := loaded(t)
	wide := v.MinSize()
	v.SetControlColumns(2)
	narrow := v.MinSize()
	if narrow.Width >= wide.Width || narrow.Height <= wide.Height {
		t.Fatalf("min size %v with 2 columns of controls, %v with 4", narrow, wide)
	}
	// The last control (opacity) starts the second row, below the first (the overlay picker).
	if p, o := v.controls.Objects[0].Position(), v.controls.Objects[3].Position(); o.Y <= p.Y {
		t.Errorf("opacity at %v is not below the overlay picker at %v", o, p)
	}
	v.SetControlColumns(9) // clamped to 4: one row again
	if v.MinSize() != wide {
		t.Errorf("min size %v with 9 (= 4) columns, want %v", v.MinSize(), wide)
	}
}

// A seed map with negative correlations switches the viewer to the diverging scale: threshold
// on |r| from 0 to the largest magnitude, colours fixed, and the negative voxels drawn.
func TestSignedSeedMapShowsNegatives(t *testing.T) {
	v, svc, _ := loaded(t)
	seed := [3]int{15, 18, 14}
	src, err := svc.SeedMap(context.Background(), slicestest.JobID, seed)
	if err != nil {
		t.Fatal(err)
	}
	// The phantom's seed map shifted by −0.5, so that part of it is negative.
	vol := &ipc.Volume{Header: src.Header, Data: make([]float32, len(src.Data))}
	vol.Header.Min, vol.Header.Max = src.Header.Min-0.5, src.Header.Max-0.5
	neg := -1
	for i, x := range src.Data {
		vol.Data[i] = x - 0.5
		if neg < 0 && x-0.5 < -0.35 {
			neg = i
		}
	}
	if neg < 0 {
		t.Fatal("the shifted seed map has no value below −0.35")
	}
	v.SetOverlay(vol)
	st := v.Style()
	if !st.Signed || st.Colormap != ColdHot || st.Threshold != 0.3 {
		t.Fatalf("style %+v, want signed cold_hot at |r| ≥ 0.3", st)
	}
	if want := math.Max(-float64(vol.Header.Min), float64(vol.Header.Max)); st.Max != want || v.threshold.Min != 0 || v.threshold.Max != want {
		t.Errorf("scale top %v, slider %v…%v, want %v and 0…%v", st.Max, v.threshold.Min, v.threshold.Max, want, want)
	}
	if !v.colormapPicker.Disabled() || !strings.HasPrefix(v.thresholdLabel.Text, "|x| >= 0.3") {
		t.Errorf("colour picker disabled %v, threshold label %q", v.colormapPicker.Disabled(), v.thresholdLabel.Text)
	}
	// The colour bar: −top … ±threshold … +top, and the threshold in its title.
	if !v.bar.box.Visible() || v.bar.lo.Text != fmt.Sprintf("%.3g", -st.Max) || v.bar.hi.Text != fmt.Sprintf("%.3g", st.Max) ||
		v.bar.mid.Text != "-0.3 | +0.3" || !strings.Contains(v.bar.title.Text, "seed map 15,18,14") || !strings.Contains(v.bar.title.Text, "|value| >= 0.3") {
		t.Errorf("colour bar shown %v: %q [%q %q %q]", v.bar.box.Visible(), v.bar.title.Text, v.bar.lo.Text, v.bar.mid.Text, v.bar.hi.Text)
	}
	if img, ok := v.bar.img.Image.(*image.RGBA); !ok || img.RGBAAt(64, 0).B <= img.RGBAAt(64, 0).R || img.RGBAAt(192, 0).R <= img.RGBAAt(192, 0).B {
		t.Error("colour bar is not cold on the left and hot on the right")
	}
	signedSnap, err := v.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	d := vol.Header.Dims
	vox := [3]int{neg % d[0], neg / d[0] % d[1], neg / (d[0] * d[1])}
	v.SetCrosshair(vox)
	img := v.sliceImage(Axial)
	px, py := v.geom[Axial].pixel(vox)
	if c := img.RGBAAt(px, py); c.B <= c.R {
		t.Errorf("negative r %.2f drawn %v, want a cold (blue) colour", vol.Data[neg], c)
	}
	if !strings.Contains(v.position.Text, "seed map 15,18,14: -") {
		t.Errorf("position line %q lacks the negative value", v.position.Text)
	}
	// Back to an unsigned map: the chosen colour scale and the picker return.
	v.ShowVolume("degree") // what the picker calls; Fyne's test driver runs fyne.Do inline, so the picker's own Refresh would race the fetch
	v.pending.Wait()
	if st := v.Style(); st.Signed || st.Colormap != Hot || v.colormapPicker.Disabled() {
		t.Errorf("degree after a signed map: style %+v, picker disabled %v", st, v.colormapPicker.Disabled())
	}
	if st := v.Style(); v.bar.lo.Text != fmt.Sprintf("%.3g", st.Threshold) || v.bar.hi.Text != fmt.Sprintf("%.3g", st.Max) || !strings.HasPrefix(v.bar.title.Text, "degree") || v.bar.mid.Visible() {
		t.Errorf("degree's colour bar %q [%q %q], middle shown %v", v.bar.title.Text, v.bar.lo.Text, v.bar.hi.Text, v.bar.mid.Visible())
	}
	// Hubs by module: labels in the modules' colours, no scale.
	v.ShowVolume("hubs")
	v.pending.Wait()
	if v.bar.box.Visible() {
		t.Error("a colour bar under the hubs-by-module overlay")
	}
	// The snapshot carries the seed map's bar (cold half on the left) below its caption, and
	// none for the hubs.
	hubSnap, _ := v.Snapshot()
	if extra := signedSnap.Bounds().Dy() - hubSnap.Bounds().Dy(); extra < 40 {
		t.Errorf("the seed map's snapshot is %d px taller than the hubs', want a colour bar", extra)
	} else if c := signedSnap.RGBAAt(8+(signedSnap.Bounds().Dx()-16)/4, hubSnap.Bounds().Dy()+16); c.B <= c.R {
		t.Errorf("the snapshot's colour bar at a quarter is %v, want cold", c)
	}
}

// On a scan in MNI space (the helper serves its atlas), the position line gives the
// crosshair's MNI coordinates and atlas region; outside the brain it says so.
func TestCrosshairMNIAndRegion(t *testing.T) {
	v, _, _ := loaded(t)
	for _, h := range slicestest.Hubs {
		v.SetCrosshair(h)
		want := slicestest.AtlasLabels[slicestest.Region(h)]
		x := World(v.grid.Affine, h)
		mni := fmt.Sprintf("MNI (x, y, z) = (%.1f, %.1f, %.1f) mm · %s ·", x[0], x[1], x[2], want)
		if want == "" || !strings.Contains(v.position.Text, mni) {
			t.Errorf("hub %v: position %q, want %q", h, v.position.Text, mni)
		}
	}
	v.SetCrosshair([3]int{0, 0, 0})
	if !strings.Contains(v.position.Text, "outside the atlas") {
		t.Errorf("corner voxel: position %q", v.position.Text)
	}
}

// A job whose scan is registered to MNI space opens on the MNI template; the Anatomy picker
// offers the template and the mean EPI, and switches the background; the position
// line gives the crosshair's MNI coordinates through the registration.
func TestTemplateBackground(t *testing.T) {
	test.NewTempApp(t)
	svc := slicestest.NewService()
	v := New(svc)
	test.NewTempWindow(t, v).Resize(fyne.NewSize(960, 480))
	s := slicestest.Summary()
	s.Volumes = append(s.Volumes, VolumeTemplate)
	to := [4][4]float64{{1, 0, 0, 5}, {0, 1, 0, -3}, {0, 0, 1, 2}, {0, 0, 0, 1}}
	s.ScanToMNI = &to
	v.Load(context.Background(), slicestest.JobID, s)
	v.pending.Wait()
	if v.Background() != VolumeTemplate || v.bg == nil || v.bg.vol.Header.Name != VolumeTemplate {
		t.Fatalf("background %q, want the template", v.Background())
	}
	if got := v.bgPicker.Options; len(got) != 2 || got[0] != backgroundLabels[VolumeTemplate] || !v.bgBox.Visible() {
		t.Fatalf("anatomy picker %v (shown %v)", got, v.bgBox.Visible())
	}
	if c := OverlayChoices(s); strings.Contains(strings.Join(c, ","), VolumeTemplate) {
		t.Fatalf("the template is offered as an overlay: %v", c)
	}
	// The template's anterior half is brighter than its posterior half in the axial view.
	h := slicestest.Hubs[0]
	v.SetCrosshair(h)
	tplImg := backgroundOnly(v, Axial)
	x := World(slicestest.Affine, h)
	want := fmt.Sprintf("MNI (x, y, z) = (%.1f, %.1f, %.1f) mm", x[0]+5, x[1]-3, x[2]+2)
	if !strings.Contains(v.position.Text, want) {
		t.Fatalf("position %q, want %q", v.position.Text, want)
	}
	v.bgPicker.SetSelected(backgroundLabels[VolumeMean])
	v.pending.Wait()
	if v.Background() != VolumeMean || v.bg.vol.Header.Name != VolumeMean {
		t.Fatalf("after choosing the mean EPI the background is %q", v.Background())
	}
	if equalImages(tplImg, backgroundOnly(v, Axial)) {
		t.Fatal("the mean EPI draws as the template did")
	}
	// The choice stays for the next job that has it.
	v.Load(context.Background(), slicestest.JobID+"x", s)
	v.pending.Wait()
	if v.Background() != VolumeMean {
		t.Fatalf("next job's background %q, want the chosen mean EPI", v.Background())
	}
}

// movePointer moves the mouse pointer to the centre of slice pixel (px, py) of plane p's view,
// as the desktop driver does (test.MoveMouse delivers MouseIn/MouseMoved/MouseOut).
func movePointer(w fyne.Window, v *Viewer, p Plane, px, py int) {
	s := v.views[p]
	g := v.geom[p]
	a := s.area
	at := fyne.CurrentApp().Driver().AbsolutePositionForObject(s)
	test.MoveMouse(w.Canvas(), at.Add(fyne.NewPos(a.Position.X+(float32(px)+0.5)*a.Size.Width/float32(g.nc),
		a.Position.Y+(float32(py)+0.5)*a.Size.Height/float32(g.nr))))
}

// The pointer line reads the voxel under the mouse pointer — indices, MNI position, atlas
// region and the overlay's value — without moving the crosshair; a click still moves it; off
// the image the line says how to use it; scrolling under a still pointer reads the new slice.
func TestHoverReadsTheVoxelUnderThePointer(t *testing.T) {
	v, _, w := loaded(t)
	var selected int
	v.OnSelect = func([3]int) { selected++ }
	cross := v.Crosshair()
	if !strings.Contains(v.HoverText(), "over a slice, this line reads") {
		t.Fatalf("pointer line before any move %q", v.HoverText())
	}
	h := slicestest.Hubs[0]
	g := v.geom[Axial]
	px, py := g.pixel(h)
	if v.Crosshair()[2] != h[2] {
		v.SetCrosshair([3]int{cross[0], cross[1], h[2]}) // the axial view shows the hub's slice
		cross = v.Crosshair()
	}
	movePointer(w, v, Axial, px, py)
	got, ok := v.Hover()
	if !ok || got != h {
		t.Fatalf("pointer over hub %v reads %v (%v)", h, got, ok)
	}
	x := World(v.grid.Affine, h)
	val := v.ov.vol.At(h[0], h[1], h[2])
	for _, want := range []string{
		fmt.Sprintf("Pointer: Voxel (i, j, k) = (%d, %d, %d)", h[0], h[1], h[2]),
		fmt.Sprintf("MNI (x, y, z) = (%.1f, %.1f, %.1f) mm · %s", x[0], x[1], x[2], slicestest.AtlasLabels[slicestest.Region(h)]),
		fmt.Sprintf("%s: %.4g", v.ovName, val),
	} {
		if !strings.Contains(v.HoverText(), want) {
			t.Errorf("pointer line %q lacks %q", v.HoverText(), want)
		}
	}
	if val == 0 {
		t.Errorf("the overlay is 0 at hub %v: the test reads no value", h)
	}
	if v.Crosshair() != cross || selected != 0 {
		t.Fatalf("hovering moved the crosshair to %v (was %v) or selected (%d)", v.Crosshair(), cross, selected)
	}
	// Another voxel of the same view: the line follows the pointer.
	movePointer(w, v, Axial, 0, 0)
	if c, _ := v.Hover(); c == h || !strings.Contains(v.HoverText(), fmt.Sprintf("(%d, %d, %d)", c[0], c[1], c[2])) {
		t.Fatalf("pointer at the corner reads %v: %q", c, v.HoverText())
	}
	// Scrolling steps the slice under the still pointer: the line reads the new slice's voxel.
	before, _ := v.Hover()
	v.views[Axial].Scrolled(&fyne.ScrollEvent{Scrolled: fyne.NewDelta(0, 1)})
	if after, _ := v.Hover(); after[2] == before[2] || after[2] != v.Crosshair()[2] {
		t.Fatalf("after a scroll the pointer reads slice %d, the crosshair is on %d", after[2], v.Crosshair()[2])
	}
	// A click moves the crosshair where the pointer is.
	movePointer(w, v, Coronal, 3, 4)
	hc, _ := v.Hover()
	tapPixel(v, Coronal, 3, 4)
	if v.Crosshair() != hc || selected != 1 {
		t.Fatalf("click under the pointer at %v: crosshair %v, %d selections", hc, v.Crosshair(), selected)
	}
	// Off the slices (the controls above them): the idle line again.
	test.MoveMouse(w.Canvas(), fyne.NewPos(2, 2))
	if _, ok := v.Hover(); ok || !strings.Contains(v.HoverText(), "over a slice, this line reads") {
		t.Fatalf("pointer off the slices: %q", v.HoverText())
	}
}
