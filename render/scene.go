package render

import (
	"image/color"

	"github.com/go-gl/mathgl/mgl32"
)

// Sphere is one hub drawn as an exact sphere (ray-cast per pixel, not tessellated).
type Sphere struct {
	Center mgl32.Vec3 // world mm (RAS+)
	Radius float32    // mm
	Color  color.NRGBA
	ID     int // returned by Renderer.Pick, e.g. the hub's node index
}

// Scene is what one frame shows.
type Scene struct {
	Surface *Mesh // brain surface; nil for none
	// SurfaceColor is the surface's base colour; the zero value means DefaultSurfaceColor.
	SurfaceColor color.NRGBA
	// Glass draws the surface translucent (a glass brain): the nearest layer of surface is
	// blended over what lies behind it, nearly clear where it faces the viewer and denser
	// towards the silhouette, so hubs inside stay visible and pickable.
	Glass      bool
	Spheres    []Sphere
	Background color.NRGBA // zero value: transparent
}

// DefaultSurfaceColor is a light warm grey that lets module colours stand out.
var DefaultSurfaceColor = color.NRGBA{R: 214, G: 205, B: 196, A: 255}

// bounds returns the centre and radius of the sphere around the box holding the surface and
// every hub sphere; the camera orbits that centre and fits that radius.
func (s *Scene) bounds() (centre mgl32.Vec3, radius float32) {
	if s == nil {
		return centre, 1
	}
	lo, hi, ok := s.Surface.Bounds()
	for _, sp := range s.Spheres {
		r := mgl32.Vec3{sp.Radius, sp.Radius, sp.Radius}
		a, b := sp.Center.Sub(r), sp.Center.Add(r)
		if !ok {
			lo, hi, ok = a, b, true
			continue
		}
		for k := 0; k < 3; k++ {
			lo[k] = min(lo[k], a[k])
			hi[k] = max(hi[k], b[k])
		}
	}
	if !ok {
		return centre, 1
	}
	centre = lo.Add(hi).Mul(0.5)
	radius = hi.Sub(lo).Len() / 2
	if !(radius > 0) {
		radius = 1
	}
	return centre, radius
}
