package render

import (
	"image/color"
	"math"

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
	Glass   bool
	Spheres []Sphere
	// Edges are network connections drawn between points (edges.go), hidden by nearer hubs
	// and surface as the hubs are.
	Edges      []Edge
	Background color.NRGBA // zero value: transparent
}

// Hub sphere radii in mm: large enough to see and tap at zoom 1, small enough that hubs a
// voxel or two apart stay apart.
const (
	MinHubRadius = 1.5
	MaxHubRadius = 5
)

// HubRadius maps a hub's degree to its sphere's radius so that the sphere's apparent area is
// proportional to the degree: r = MinHubRadius + (MaxHubRadius − MinHubRadius)·√(degree/maxDegree),
// clamped to that range (maxDegree ≤ 0 gives MaxHubRadius to every hub).
func HubRadius(degree, maxDegree float64) float32 {
	if !(maxDegree > 0) {
		return MaxHubRadius
	}
	f := math.Sqrt(min(max(degree/maxDegree, 0), 1))
	if math.IsNaN(f) {
		f = 0
	}
	return float32(MinHubRadius + (MaxHubRadius-MinHubRadius)*f)
}

// DefaultSurfaceColor is a light warm grey that lets module colours stand out.
var DefaultSurfaceColor = color.NRGBA{R: 214, G: 205, B: 196, A: 255}

// bounds returns the centre of the box holding the surface and every hub sphere, and the
// radius of the smallest sphere about that centre holding them all: the camera orbits that
// centre and fits that sphere, so nothing leaves the frame at any angle (a brain is nearer an
// ellipsoid than a box, so this sphere is about a third smaller than the box's).
func (s *Scene) bounds() (centre mgl32.Vec3, radius float32) {
	if s == nil {
		return centre, 1
	}
	lo, hi, ok := s.Surface.Bounds()
	for _, sp := range s.Spheres {
		if !drawable(sp) {
			continue
		}
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
	var r2 float32
	if s.Surface != nil {
		for _, v := range s.Surface.Vertices {
			d := v.Sub(centre)
			if d2 := d.Dot(d); d2 > r2 { // false for NaN
				r2 = d2
			}
		}
	}
	radius = float32(math.Sqrt(float64(r2)))
	for _, sp := range s.Spheres {
		if drawable(sp) {
			radius = max(radius, sp.Center.Sub(centre).Len()+sp.Radius)
		}
	}
	if !(radius > 0) {
		radius = 1
	}
	return centre, radius
}

// drawable reports whether a sphere has a finite centre and a finite positive radius; others
// are skipped.
func drawable(sp Sphere) bool {
	return sp.Radius > 0 && !math.IsInf(float64(sp.Radius), 0) && finite(sp.Center)
}
