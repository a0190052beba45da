package render

import (
	"image/color"
	"math"
	"testing"

	"github.com/go-gl/mathgl/mgl32"
)

func pixel(r *Renderer, x, y int) [4]uint8 {
	img := r.img
	i := img.PixOffset(x, y)
	return [4]uint8{img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3]}
}

// TestEdgesDrawn renders two hubs joined by an edge, seen from the front (x runs across the
// screen), and checks the pixels: the edge's colour along the line between the hubs, its
// width across it, nothing beside it; a hub in front of the edge hides it and a hub behind
// it is hidden by it; an opaque surface in front hides it and a glass one lets it through.
func TestEdgesDrawn(t *testing.T) {
	red := color.NRGBA{R: 200, G: 30, B: 20, A: 255}
	green := color.NRGBA{G: 220, A: 255}
	bg := color.NRGBA{A: 255}
	a, b := mgl32.Vec3{-40, 0, 0}, mgl32.Vec3{40, 0, 0}
	s := &Scene{
		Spheres:    []Sphere{{Center: a, Radius: 3, Color: green}, {Center: b, Radius: 3, Color: green}},
		Edges:      []Edge{{A: a, B: b, Width: 5, Color: red}},
		Background: bg,
	}
	const w, h = 200, 160
	r := NewRenderer(w, h)
	cam := StandardViewOrFail(t, "anterior")
	r.Render(s, cam)
	for _, p := range []mgl32.Vec3{{-20, 0, 0}, {0, 0, 0}, {25, 0, 0}} {
		x, y, _ := cam.Project(s, w, h, p)
		if got := pixel(r, int(x), int(y)); got != [4]uint8{red.R, red.G, red.B, 255} {
			t.Errorf("edge at %v (pixel %.0f, %.0f): %v, want the edge's colour", p, x, y, got)
		}
		// Across the edge: 5 pixels of its colour (±1 for the pixel grid), background beyond.
		n := 0
		for yy := 0; yy < h; yy++ {
			if pixel(r, int(x), yy) == [4]uint8{red.R, red.G, red.B, 255} {
				n++
			}
		}
		if n < 4 || n > 6 {
			t.Errorf("edge at %v is %d pixels wide, want 5", p, n)
		}
		if got := pixel(r, int(x), int(y)+8); got != [4]uint8{0, 0, 0, 255} {
			t.Errorf("8 pixels below the edge at %v: %v, want the background", p, got)
		}
	}

	// A hub in front of the edge (towards the viewer, +y in RAS for the anterior view) hides
	// it; one behind is hidden by it.
	blue := color.NRGBA{B: 255, A: 255}
	for _, c := range []struct {
		y       float32
		visible bool
	}{{20, true}, {-20, false}} {
		s2 := *s
		s2.Spheres = append(append([]Sphere(nil), s.Spheres...), Sphere{Center: mgl32.Vec3{0, c.y, 0}, Radius: 3, Color: blue})
		r.Render(&s2, cam)
		x, y, _ := cam.Project(&s2, w, h, mgl32.Vec3{0, c.y, 0})
		got := pixel(r, int(x), int(y))
		isBlue := got[2] > 100 && got[0] < 50
		if isBlue != c.visible {
			t.Errorf("hub at y = %g: pixel %v, want it visible %v over the edge", c.y, got, c.visible)
		}
	}

	// A wall between the viewer and the edge: opaque hides it, glass shows it blended.
	wall := &Mesh{
		Vertices:  []mgl32.Vec3{{-60, 10, -30}, {60, 10, -30}, {60, 10, 30}, {-60, 10, 30}},
		Normals:   []mgl32.Vec3{{0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
		Triangles: [][3]uint32{{0, 1, 2}, {0, 2, 3}, {0, 2, 1}, {0, 3, 2}},
	}
	for _, glass := range []bool{false, true} {
		s3 := *s
		s3.Surface, s3.Glass = wall, glass
		r.Render(&s3, cam)
		x, y, _ := cam.Project(&s3, w, h, mgl32.Vec3{0, 0, 0})
		got := pixel(r, int(x), int(y))
		reddish := int(got[0]) > int(got[1])+40
		if reddish != glass {
			t.Errorf("glass %v: pixel %v behind the wall, want the edge seen %v", glass, got, glass)
		}
	}
}

// TestEdgeScale: colour and width grow with |w| to the scale's maximum, sign picks the hue,
// degenerate edges are skipped without a panic.
func TestEdgeScale(t *testing.T) {
	if EdgeWidth(0, 1) != MinEdgeWidth || EdgeWidth(1, 1) != MaxEdgeWidth || EdgeWidth(2, 1) != MaxEdgeWidth || !(EdgeWidth(0.5, 1) > MinEdgeWidth && EdgeWidth(0.5, 1) < MaxEdgeWidth) {
		t.Error("EdgeWidth not MinEdgeWidth…MaxEdgeWidth linear in |w|/wmax")
	}
	if EdgeWidth(math.NaN(), 1) != MinEdgeWidth {
		t.Error("EdgeWidth(NaN)")
	}
	weak, strong, neg := EdgeColor(0.1, 1), EdgeColor(1, 1), EdgeColor(-1, 1)
	if !(strong.G < weak.G && strong.R >= 150) || !(neg.B > neg.R) {
		t.Errorf("EdgeColor: weak %v strong %v negative %v", weak, strong, neg)
	}
	nan := float32(math.NaN())
	s := &Scene{Edges: []Edge{{A: mgl32.Vec3{nan, 0, 0}, B: mgl32.Vec3{1, 0, 0}, Width: 2}, {A: mgl32.Vec3{}, B: mgl32.Vec3{1, 0, 0}, Width: 0},
		{A: mgl32.Vec3{}, B: mgl32.Vec3{}, Width: 3, Color: color.NRGBA{R: 255, A: 255}}}}
	NewRenderer(50, 40).Render(s, StandardViewOrFail(t, "left"))
}
