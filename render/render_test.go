package render

import (
	"image"
	"image/color"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
)

// pickAt renders s from the named view into a w×h frame and picks at the projection of p.
func pickAt(t *testing.T, r *Renderer, s *Scene, view string, p mgl32.Vec3) (id int, ok bool, x, y float32) {
	t.Helper()
	c, err := StandardView(view)
	if err != nil {
		t.Fatal(err)
	}
	w, h := r.Size()
	r.Render(s, c)
	x, y, front := c.Project(s, w, h, p)
	if !front || x < 0 || y < 0 || x >= float32(w) || y >= float32(h) {
		t.Fatalf("%s view: %v projects to (%.1f, %.1f), outside the %d×%d frame", view, p, x, y, w, h)
	}
	id, ok = r.Pick(int(x), int(y))
	return id, ok, x, y
}

// TestStandardViewsRAS checks the anatomical convention of the six views on the MNI surface
// with one marker sphere just outside each face of the brain: a marker is visible (pickable)
// from its own side, hidden behind the opaque brain from the opposite side, visible through
// the glass brain, and lands on the side of the image the convention says.
func TestStandardViewsRAS(t *testing.T) {
	surface := mniBrainSurface(t)
	markers := []struct {
		name       string
		at         mgl32.Vec3
		from, away string
	}{
		{"left", mgl32.Vec3{-78, -20, 10}, "left", "right"},
		{"right", mgl32.Vec3{78, -20, 10}, "right", "left"},
		{"anterior", mgl32.Vec3{0, 80, 0}, "anterior", "posterior"},
		{"posterior", mgl32.Vec3{0, -114, 5}, "posterior", "anterior"},
		{"superior", mgl32.Vec3{0, -20, 88}, "superior", "inferior"},
		{"inferior", mgl32.Vec3{0, -20, -80}, "inferior", "superior"},
	}
	s := &Scene{Surface: surface}
	r := NewRenderer(320, 240)
	for i, m := range markers {
		s.Spheres = []Sphere{{Center: m.at, Radius: 5, Color: color.NRGBA{R: 255, A: 255}, ID: 100 + i}}
		if id, ok, x, y := pickAt(t, r, s, m.from, m.at); !ok || id != 100+i {
			t.Errorf("%s marker %v: from the %s it picks (%d, %v) at (%.0f, %.0f), want visible", m.name, m.at, m.from, id, ok, x, y)
		}
		if id, ok, x, y := pickAt(t, r, s, m.away, m.at); ok {
			t.Errorf("%s marker: from the %s (behind the opaque brain) it picks %d at (%.0f, %.0f), want hidden", m.name, m.away, id, x, y)
		}
		s.Glass = true
		if id, ok, _, _ := pickAt(t, r, s, m.away, m.at); !ok || id != 100+i {
			t.Errorf("%s marker: from the %s through the glass brain it picks (%d, %v), want visible", m.name, m.away, id, ok)
		}
		s.Glass = false
	}

	// Where things land on screen (x right, y down), relative to the image centre.
	side := func(view string, p mgl32.Vec3) (dx, dy float32) {
		c, _ := StandardView(view)
		x, y, _ := c.Project(s, 320, 240, p)
		return x - 160, y - 120
	}
	s.Spheres = nil
	anterior, right, superior := markers[2].at, markers[1].at, markers[4].at
	checks := []struct {
		what string
		ok   bool
	}{
		{"left view: anterior on the left", func() bool { dx, _ := side("left", anterior); return dx < -40 }()},
		{"right view: anterior on the right", func() bool { dx, _ := side("right", anterior); return dx > 40 }()},
		{"anterior view: subject's right on the viewer's left", func() bool { dx, _ := side("anterior", right); return dx < -40 }()},
		{"posterior view: subject's right on the right", func() bool { dx, _ := side("posterior", right); return dx > 40 }()},
		{"superior view: anterior up", func() bool { _, dy := side("superior", anterior); return dy < -40 }()},
		{"superior view: right on the right", func() bool { dx, _ := side("superior", right); return dx > 40 }()},
		{"inferior view: anterior up", func() bool { _, dy := side("inferior", anterior); return dy < -40 }()},
		{"inferior view: right on the left", func() bool { dx, _ := side("inferior", right); return dx < -40 }()},
		{"left view: superior up", func() bool { _, dy := side("left", superior); return dy < -40 }()},
		{"anterior view: superior up", func() bool { _, dy := side("anterior", superior); return dy < -40 }()},
	}
	for _, c := range checks {
		if !c.ok {
			t.Error(c.what + ": not so")
		}
	}
}

func TestStandardViewUnknown(t *testing.T) {
	if _, err := StandardView("lateral"); err == nil {
		t.Fatal(`StandardView("lateral") gave no error`)
	}
	if c, err := StandardView("Superior"); err != nil || c.Elevation != 90 {
		t.Fatalf(`StandardView("Superior") = %+v, %v`, c, err)
	}
}

func TestCameraRotateAndZoom(t *testing.T) {
	c := Camera{Azimuth: 170, Elevation: 80, Zoom: 1}
	c.Rotate(-20, 30)
	if c.Azimuth != -170 || c.Elevation != 90 {
		t.Fatalf("after Rotate(−20, 30): azimuth %g (want −170, wrapped), elevation %g (want 90, stopped at the pole)", c.Azimuth, c.Elevation)
	}
	c.ZoomBy(100)
	if c.Zoom != MaxZoom {
		t.Fatalf("zoom %g after ZoomBy(100), want MaxZoom", c.Zoom)
	}
	c.ZoomBy(float32(math.NaN()))
	c.ZoomBy(-1)
	if c.Zoom != MaxZoom {
		t.Fatalf("zoom %g after invalid factors, want unchanged", c.Zoom)
	}
	c.ZoomBy(1e-6)
	if c.Zoom != MinZoom {
		t.Fatalf("zoom %g after ZoomBy(1e-6), want MinZoom", c.Zoom)
	}
}

// TestDragTurnsFacingSideRight: after Rotate(+dx) the point that faced the viewer moves right
// on the screen, as if grabbed.
func TestDragTurnsFacingSideRight(t *testing.T) {
	s := &Scene{Spheres: []Sphere{{Center: mgl32.Vec3{-50, 0, 0}, Radius: 1}, {Center: mgl32.Vec3{50, 0, 0}, Radius: 1}}}
	c, _ := StandardView("left")
	facing := mgl32.Vec3{-50, 0, 0}
	x0, _, _ := c.Project(s, 200, 200, facing)
	c.Rotate(10, 0)
	x1, _, _ := c.Project(s, 200, 200, facing)
	if !(x1 > x0+1) {
		t.Fatalf("facing point moved from x %.1f to %.1f after Rotate(10, 0), want right", x0, x1)
	}
	_, y0, _ := c.Project(s, 200, 200, mgl32.Vec3{-50, 0, 20})
	c.Rotate(0, 10)
	_, y1, _ := c.Project(s, 200, 200, mgl32.Vec3{-50, 0, 20})
	if !(y1 > y0+1) {
		t.Fatalf("point above the facing one moved from y %.1f to %.1f after Rotate(0, 10), want down", y0, y1)
	}
}

// TestSphereIsExact compares the drawn disc of one sphere with its exact perspective image: a
// sphere of radius R at distance D on the view axis subtends a cone of half-angle asin(R/D),
// i.e. a disc of radius f·R/√(D²−R²) pixels.
func TestSphereIsExact(t *testing.T) {
	const R = 10
	s := &Scene{Spheres: []Sphere{{Center: mgl32.Vec3{5, -3, 2}, Radius: R, Color: color.NRGBA{G: 200, A: 255}, ID: 7}}}
	for _, zoom := range []float32{0.6, 1} {
		c := Camera{Azimuth: 30, Elevation: 20, Zoom: zoom}
		r := NewRenderer(300, 300)
		img := r.Render(s, c)
		covered := 0
		for i := 3; i < len(img.Pix); i += 4 {
			if img.Pix[i] == 255 {
				covered++
			}
		}
		// the scene's bounding sphere is the sphere itself; at zoom z it fills the frame's
		// half height when the eye is at D = R / sin(15°) / z (at zoom 1 the disc touches the
		// frame's edges)
		D := R / math.Sin(15*math.Pi/180) / float64(zoom)
		f := 150 / math.Tan(15*math.Pi/180)
		rpx := f * R / math.Sqrt(D*D-R*R)
		want := math.Pi * rpx * rpx
		if math.Abs(float64(covered)-want) > 0.01*want+2*math.Pi*rpx*0.5 {
			t.Errorf("zoom %g: sphere covers %d pixels, exact image %.0f", zoom, covered, want)
		}
		if id, ok := r.Pick(150, 150); !ok || id != 7 {
			t.Errorf("zoom %g: Pick at the centre = (%d, %v), want 7", zoom, id, ok)
		}
		if _, ok := r.Pick(2, 2); ok {
			t.Errorf("zoom %g: Pick in the corner found a sphere", zoom)
		}
	}
}

// TestRenderIndependentOfWorkers: the split into bands changes who draws a pixel, never what.
func TestRenderIndependentOfWorkers(t *testing.T) {
	s := phantomScene(t)
	s.Glass = true
	c := Camera{Azimuth: 40, Elevation: 25, Zoom: 1.3}
	r1 := NewRenderer(240, 200)
	r1.Workers = 1
	r3 := NewRenderer(240, 200)
	r3.Workers = 3
	a, b := r1.Render(s, c), r3.Render(s, c)
	if string(a.Pix) != string(b.Pix) {
		t.Fatal("1 and 3 workers drew different frames")
	}
	// and a renderer reused after another scene draws the same frame again
	r3.Render(&Scene{Spheres: s.Spheres[:3]}, StandardViewOrFail(t, "left"))
	if string(r3.Render(s, c).Pix) != string(a.Pix) {
		t.Fatal("reused renderer drew a different frame")
	}
}

func StandardViewOrFail(t *testing.T, name string) Camera {
	t.Helper()
	c, err := StandardView(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// luminance is the mean of the RGB channels of pixel (x, y).
func luminance(img *image.RGBA, x, y int) float64 {
	c := img.RGBAAt(x, y)
	return (float64(c.R) + float64(c.G) + float64(c.B)) / 3
}

// TestSurfaceFrontFacesLit: with back-face culling the eye sees the outside of the brain, lit
// by the headlight; were the winding or the culling reversed it would see the inside of the far
// wall, whose normals face away from the light (ambient only).
func TestSurfaceFrontFacesLit(t *testing.T) {
	s := &Scene{Surface: mniBrainSurface(t), Background: color.NRGBA{A: 255}}
	r := NewRenderer(200, 200)
	img := r.Render(s, StandardViewOrFail(t, "left"))
	ambientOnly := ambient * float64(DefaultSurfaceColor.R)
	if l := luminance(img, 100, 100); !(l > ambientOnly+40) {
		t.Fatalf("centre of the left view has luminance %.0f, ambient alone gives %.0f: front faces not drawn lit", l, ambientOnly)
	}
}

// TestNearPlaneClipping: at maximum zoom the eye is inside the scene's bounding sphere, above a
// floor that extends behind it. The floor's triangles cross the near plane; clipped, the part
// in front of the eye still reaches the bottom of the image (dropped, it would leave a hole).
func TestNearPlaneClipping(t *testing.T) {
	floor := &Mesh{
		Vertices:  []mgl32.Vec3{{-100, -100, 30}, {100, -100, 30}, {100, 100, 30}, {-100, 100, 30}},
		Normals:   []mgl32.Vec3{{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}},
		Triangles: [][3]uint32{{0, 1, 2}, {0, 2, 3}},
	}
	// a marker high above sets the scene's box (centre z ≈ 42) so the eye is above the floor
	s := &Scene{Surface: floor, Spheres: []Sphere{{Center: mgl32.Vec3{0, 0, 90}, Radius: 4}}, Background: color.NRGBA{A: 255}}
	c := StandardViewOrFail(t, "anterior")
	c.Zoom = MaxZoom
	r := NewRenderer(160, 120)
	img := r.Render(s, c)
	if l := luminance(img, 80, 118); !(l > 50) {
		t.Fatalf("bottom centre pixel luminance %.0f: the floor crossing the near plane was not drawn", l)
	}
	if l := luminance(img, 80, 5); l != 0 {
		t.Fatalf("top centre pixel luminance %.0f: the floor (below the eye) drawn above the horizon", l)
	}
}

func TestRenderEmpty(t *testing.T) {
	r := NewRenderer(0, 0)
	if img := r.Render(&Scene{}, Camera{}); img.Bounds().Dx() != 0 {
		t.Fatal("0×0 renderer drew a frame")
	}
	if _, ok := r.Pick(0, 0); ok {
		t.Fatal("Pick on an empty frame found a sphere")
	}
	r.Resize(10, 8)
	img := r.Render(nil, Camera{})
	if img.Bounds() != image.Rect(0, 0, 10, 8) || img.Pix[3] != 0 {
		t.Fatal("nil scene: want a transparent 10×8 frame")
	}
}

func TestModuleColors(t *testing.T) {
	cs := ModuleColors(20)
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			l1, a1, b1 := srgbToLab(cs[i])
			l2, a2, b2 := srgbToLab(cs[j])
			if d := math.Sqrt((l1-l2)*(l1-l2) + (a1-a2)*(a1-a2) + (b1-b2)*(b1-b2)); d < 14 {
				t.Errorf("modules %d and %d: ΔE %.1f < 14", i+1, j+1, d)
			}
		}
	}
	more := ModuleColors(60)
	for i, c := range more {
		if i < 20 && c != cs[i] {
			t.Fatalf("ModuleColors(60)[%d] differs from ModuleColors(20)[%d]", i, i)
		}
		for j := 0; j < i; j++ {
			if more[j] == c {
				t.Fatalf("colours %d and %d are equal (%v)", j+1, i+1, c)
			}
		}
	}
	if again := ModuleColors(60); again[59] != more[59] {
		t.Fatal("continuation not deterministic")
	}
	if ModuleColors(0) != nil {
		t.Fatal("ModuleColors(0) not empty")
	}
	// labToSRGB inverts srgbToLab
	for _, c := range cs {
		if back := labToSRGB(srgbToLab(c)); back != c {
			t.Fatalf("%v → Lab → %v", c, back)
		}
	}
}

func TestHubRadius(t *testing.T) {
	for _, c := range []struct {
		deg, max float64
		want     float32
	}{
		{0, 100, MinHubRadius},
		{100, 100, MaxHubRadius},
		{25, 100, MinHubRadius + (MaxHubRadius-MinHubRadius)*0.5}, // √¼: area ∝ degree
		{200, 100, MaxHubRadius},
		{-3, 100, MinHubRadius},
		{5, 0, MaxHubRadius},
		{math.NaN(), 100, MinHubRadius},
	} {
		if got := HubRadius(c.deg, c.max); math.Abs(float64(got-c.want)) > 1e-6 {
			t.Errorf("HubRadius(%g, %g) = %g, want %g", c.deg, c.max, got, c.want)
		}
	}
}

// TestMalformedSceneDoesNotPanic: bad input from a caller is skipped, never a crash in the UI.
func TestMalformedSceneDoesNotPanic(t *testing.T) {
	nan := float32(math.NaN())
	bad := &Mesh{
		Vertices:  []mgl32.Vec3{{0, 0, 0}, {10, 0, 0}, {0, 10, 0}, {nan, 0, 0}},
		Normals:   []mgl32.Vec3{{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}},
		Triangles: [][3]uint32{{0, 1, 2}, {0, 1, 7}, {0, 3, 1}},
	}
	s := &Scene{Surface: bad, Spheres: []Sphere{
		{Center: mgl32.Vec3{nan, 0, 0}, Radius: 3, ID: 1},
		{Center: mgl32.Vec3{0, 0, 5}, Radius: float32(math.Inf(1)), ID: 2},
		{Center: mgl32.Vec3{5, 5, 5}, Radius: 1, ID: 3, Color: color.NRGBA{R: 255, A: 255}},
	}}
	r := NewRenderer(64, 48)
	for _, v := range StandardViews {
		r.Render(s, StandardViewOrFail(t, v))
	}
	c := StandardViewOrFail(t, "superior")
	c.Zoom = MaxZoom
	img := r.Render(s, c)
	// the valid triangle is still drawn, seen from above
	if img.Pix[4*(24*64+32)+3] == 0 {
		t.Fatal("the valid triangle is not drawn beside the malformed one")
	}
	// the mesh without normals is skipped
	s.Surface = &Mesh{Vertices: bad.Vertices, Triangles: bad.Triangles[:1]}
	r.Render(s, c)
}
