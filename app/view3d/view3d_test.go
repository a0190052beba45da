package view3d

import (
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/go-gl/mathgl/mgl32"

	"github.com/hubscope/hubscope/render"
)

// testScene is a flat "surface" plate with one large hub sphere in front of its centre and a
// small one off to the side, so taps have something to hit and views differ.
func testScene() *render.Scene {
	plate := &render.Mesh{
		Vertices:  []mgl32.Vec3{{-60, -60, -20}, {60, -60, -20}, {60, 60, -20}, {-60, 60, -20}},
		Normals:   []mgl32.Vec3{{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}},
		Triangles: [][3]uint32{{0, 1, 2}, {0, 2, 3}},
	}
	return &render.Scene{
		Surface: plate,
		Spheres: []render.Sphere{
			{Center: mgl32.Vec3{0, 0, 0}, Radius: 15, Color: color.NRGBA{R: 230, G: 120, A: 255}, ID: 42},
			{Center: mgl32.Vec3{45, 45, 0}, Radius: 5, Color: color.NRGBA{B: 230, A: 255}, ID: 7},
		},
		Background: color.NRGBA{R: 10, G: 10, B: 10, A: 255},
	}
}

// uiQueue stands in for the UI goroutine's event loop: the test driver runs fyne.Do on the
// calling goroutine, which for the view is its render goroutine, so frames are handed to the
// test goroutine instead and applied there by settle.
type uiQueue chan func()

func (q uiQueue) runAndWait(f func()) {
	done := make(chan struct{})
	q <- func() { f(); close(done) }
	<-done
}

var queues sync.Map // *View → uiQueue

// settle applies frames on the test goroutine until the view has none pending.
func settle(v *View) {
	q, _ := queues.Load(v)
	for {
		select {
		case f := <-q.(uiQueue):
			f()
			continue
		case <-time.After(time.Millisecond):
		}
		v.mu.Lock()
		busy := v.rendering
		v.mu.Unlock()
		if !busy {
			return
		}
	}
}

// newTestView puts a view in a headless window and waits for its first frame.
func newTestView(t *testing.T) (*View, fyne.Window) {
	t.Helper()
	test.NewTempApp(t)
	v := New(testScene())
	q := make(uiQueue)
	queues.Store(v, q)
	v.runOnUI = q.runAndWait
	w := test.NewTempWindow(t, v)
	w.Resize(fyne.NewSize(640, 480))
	settle(v)
	return v, w
}

// viewportCentre is the centre of the image area in canvas coordinates.
func viewportCentre(v *View) fyne.Position {
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.vp)
	s := v.vp.Size()
	return pos.Add(fyne.NewPos(s.Width/2, s.Height/2))
}

func TestFirstFrameFillsViewport(t *testing.T) {
	v, _ := newTestView(t)
	got := v.vp.img.Image
	if got == nil {
		t.Fatal("no frame shown after the window was laid out")
	}
	w, h := v.pixelSize()
	if b := got.Bounds(); b.Dx() != w || b.Dy() != h || w < 300 || h < 200 {
		t.Fatalf("frame %v for a %d×%d viewport", b, w, h)
	}
}

func TestDragRotates(t *testing.T) {
	v, w := newTestView(t)
	before := v.Camera()
	shown := v.vp.img.Image
	test.Drag(w.Canvas(), viewportCentre(v), 50, -25)
	settle(v)
	after := v.Camera()
	// Rotate turns by −dAzimuth: dragging right by 50 units turns the azimuth by −20°
	if d := after.Azimuth - before.Azimuth; d > -19.9 || d < -20.1 {
		t.Fatalf("azimuth %g → %g after a 50-unit drag, want −20°", before.Azimuth, after.Azimuth)
	}
	if d := after.Elevation - before.Elevation; d > -9.9 || d < -10.1 {
		t.Fatalf("elevation %g → %g after dragging 25 units up, want −10°", before.Elevation, after.Elevation)
	}
	if v.vp.img.Image == shown {
		t.Fatal("the drag did not bring a new frame")
	}
}

func TestScrollZooms(t *testing.T) {
	v, w := newTestView(t)
	z0 := v.Camera().Zoom
	test.Scroll(w.Canvas(), viewportCentre(v), 0, 20)
	settle(v)
	if z := v.Camera().Zoom; !(z > z0*1.10 && z < z0*1.11) {
		t.Fatalf("zoom %g → %g after scrolling up 20 units, want ×e^0.1", z0, z)
	}
	test.Scroll(w.Canvas(), viewportCentre(v), 0, -20)
	settle(v)
	if z := v.Camera().Zoom; z < z0*0.999 || z > z0*1.001 {
		t.Fatalf("zoom %g after scrolling back, want %g", z, z0)
	}
}

func TestViewButtons(t *testing.T) {
	v, _ := newTestView(t)
	v.zoom(60) // the buttons keep the zoom
	zoom := v.Camera().Zoom
	for _, name := range render.StandardViews {
		test.Tap(v.buttons[name])
		settle(v)
		want, _ := render.StandardView(name)
		got := v.Camera()
		if got.Azimuth != want.Azimuth || got.Elevation != want.Elevation || got.Zoom != zoom {
			t.Errorf("%s button: camera %+v, want %+v at zoom %g", name, got, want, zoom)
		}
	}
	if err := v.SetStandardView("sideways"); err == nil {
		t.Error("unknown view accepted")
	}
}

func TestGlassToggleRedraws(t *testing.T) {
	v, _ := newTestView(t)
	if v.Glass() {
		t.Fatal("scene is opaque but the view starts as glass")
	}
	opaque := v.vp.img.Image
	test.Tap(v.glassCh)
	settle(v)
	if !v.Glass() {
		t.Fatal("tapping the glass check did not switch to glass")
	}
	glass := v.vp.img.Image
	if glass == opaque {
		t.Fatal("no new frame after switching to glass")
	}
	// the plate covers the frame's centre around the sphere; as glass it lets the background
	// through, so some pixel must differ
	g := glass
	same := true
	b := glass.Bounds()
	for y := b.Min.Y; y < b.Max.Y && same; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			if opaque.At(x, y) != g.At(x, y) {
				same = false
				break
			}
		}
	}
	if same {
		t.Fatal("glass and opaque frames are identical")
	}
	v.SetGlass(false)
	settle(v)
	if v.glassCh.Checked {
		t.Fatal("SetGlass(false) left the check ticked")
	}
}

func TestTapSelectsHub(t *testing.T) {
	v, w := newTestView(t)
	if err := v.SetStandardView("superior"); err != nil {
		t.Fatal(err)
	}
	settle(v)
	var got []int
	v.OnSelect = func(id int) { got = append(got, id) }
	test.TapCanvas(w.Canvas(), viewportCentre(v))
	if len(got) != 1 || got[0] != 42 {
		t.Fatalf("tap on the big sphere selected %v, want [42]", got)
	}
	// a corner of the viewport shows background only
	corner := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.vp).Add(fyne.NewPos(3, 3))
	test.TapCanvas(w.Canvas(), corner)
	if len(got) != 1 {
		t.Fatalf("tap on the background selected %v", got[1:])
	}
}

func TestSavePNG(t *testing.T) {
	v, _ := newTestView(t)
	path := filepath.Join(t.TempDir(), "view.png")
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
	w, h := v.pixelSize()
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("saved %v, want the viewport's %d×%d", b, w, h)
	}
	// the centre shows the big orange sphere
	if r, g, b, _ := img.At(w/2, h/2).RGBA(); !(r > g && g > b) {
		t.Fatalf("centre pixel %d %d %d is not the orange hub", r>>8, g>>8, b>>8)
	}
	if err := v.SavePNG(filepath.Join(t.TempDir(), "no", "such", "dir.png")); err == nil {
		t.Fatal("saving into a missing directory succeeded")
	}
}

func TestSetSceneRedraws(t *testing.T) {
	v, _ := newTestView(t)
	shown := v.vp.img.Image
	s := testScene()
	s.Spheres = nil
	v.SetScene(s)
	settle(v)
	if v.Scene() != s || v.vp.img.Image == shown {
		t.Fatal("SetScene did not show the new scene")
	}
	if _, ok := v.pick(fyne.NewPos(v.vp.Size().Width/2, v.vp.Size().Height/2)); ok {
		t.Fatal("picked a hub in a scene without hubs")
	}
}

// TestDragFramesCoalesce: while a frame waits to be applied, further drags do not queue frames
// of their own; they fold into one next frame, which shows the camera after the last drag.
func TestDragFramesCoalesce(t *testing.T) {
	v, w := newTestView(t)
	q, _ := queues.Load(v)
	var applied int
	v.runOnUI = func(f func()) {
		q.(uiQueue).runAndWait(func() { applied++; f() })
	}
	for i := 0; i < 30; i++ {
		test.Drag(w.Canvas(), viewportCentre(v), 3, 1)
	}
	settle(v)
	if applied < 1 || applied > 3 {
		t.Fatalf("30 drags applied %d frames, want them folded into at most 3", applied)
	}
	shown := v.vp.img.Image
	want := v.Image() // rendered now, from the final camera
	b := want.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if shown.At(x, y) != want.At(x, y) {
				t.Fatalf("frame on screen differs from the final camera's at (%d, %d)", x, y)
			}
		}
	}
}

// TestHighlightMarksOneSphere: the highlighted hub is drawn larger and lighter, the scene
// given to the view is left alone, and Highlight(−1) restores the plain frame.
func TestHighlightMarksOneSphere(t *testing.T) {
	v, _ := newTestView(t)
	if err := v.SetStandardView("superior"); err != nil {
		t.Fatal(err)
	}
	settle(v)
	// The small sphere (ID 7) is pure blue: count its pixels, and those lightened towards white.
	count := func() (blue, light int) {
		img := v.vp.img.Image
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				r, g, bl = r>>8, g>>8, bl>>8
				if bl > 60 && bl > 2*r && bl > 2*g {
					blue++
				}
				if bl > 150 && r > 40 && r == g && bl > r+60 {
					light++
				}
			}
		}
		return blue, light
	}
	plainBlue, plainLight := count()
	plain := v.vp.img.Image
	if plainBlue == 0 {
		t.Fatal("the small blue hub is not in the frame")
	}
	v.Highlight(7)
	settle(v)
	if v.Highlighted() != 7 {
		t.Fatalf("highlighted %d", v.Highlighted())
	}
	blue, light := count()
	if blue+light <= plainBlue || light <= plainLight {
		t.Fatalf("highlighted hub: %d blue + %d light pixels, plain %d + %d", blue, light, plainBlue, plainLight)
	}
	if s := v.Scene().Spheres[1]; s.Radius != 5 || s.Color != (color.NRGBA{B: 230, A: 255}) {
		t.Fatalf("Highlight changed the scene's sphere: %+v", s)
	}
	v.Highlight(-1)
	settle(v)
	img := v.vp.img.Image
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if img.At(x, y) != plain.At(x, y) {
				t.Fatalf("pixel (%d, %d) differs after Highlight(-1)", x, y)
			}
		}
	}
}

// TestSaveButtonOpensDialog: in a window, "Save PNG…" opens the file dialog as an overlay.
func TestSaveButtonOpensDialog(t *testing.T) {
	v, w := newTestView(t)
	v.OnError = func(err error) { t.Errorf("unexpected error: %v", err) }
	if w.Canvas().Overlays().Top() != nil {
		t.Fatal("an overlay is open before the button was tapped")
	}
	test.Tap(v.save)
	if w.Canvas().Overlays().Top() == nil {
		t.Fatal("Save PNG… opened no dialog")
	}
}
