package render

import (
	"image/color"
	"math"

	"github.com/go-gl/mathgl/mgl32"
)

// Edge is one connection of the network drawn as a flat band of constant screen width between
// two world points (the connectome view, as BrainNet Viewer and nilearn's view_connectome draw
// edges): the caller sets width and colour from the edge's weight.
type Edge struct {
	A, B  mgl32.Vec3 // world mm (RAS+): the two nodes' centres
	Width float32    // pixels, whatever the distance and zoom (> 0)
	Color color.NRGBA
}

// edgeSetup is an edge in screen space: end points in pixels (y down) with their 1/depth,
// clipped to the near plane, and the rows it covers.
type edgeSetup struct {
	x0, y0, z0 float32 // pixel position and 1/depth of A
	x1, y1, z1 float32 // of B
	half       float32 // half width, pixels
	r, g, b    float32
	ylo, yhi   int // inclusive pixel rows
}

// drawableEdge reports whether an edge has finite end points and a finite positive width.
func drawableEdge(e Edge) bool {
	return e.Width > 0 && !math.IsInf(float64(e.Width), 0) && finite(e.A) && finite(e.B)
}

// setupEdges projects the scene's edges. A segment crossing the near plane is cut there; one
// wholly nearer is not drawn.
func (r *Renderer) setupEdges(s *Scene, f *frame) {
	r.edges = r.edges[:0]
	near := -f.near
	for _, e := range s.Edges {
		if !drawableEdge(e) {
			continue
		}
		a, b := f.toView(e.A), f.toView(e.B)
		if a[2] > near && b[2] > near {
			continue
		}
		if a[2] > near || b[2] > near { // cut at z = −near
			if a[2] > near {
				a, b = b, a
			}
			t := (near - a[2]) / (b[2] - a[2])
			b = a.Add(b.Sub(a).Mul(t))
		}
		px := func(v mgl32.Vec3) (float32, float32, float32) {
			return f.cx + f.focal*v[0]/-v[2], f.cy - f.focal*v[1]/-v[2], 1 / -v[2]
		}
		es := edgeSetup{half: e.Width / 2, r: float32(e.Color.R), g: float32(e.Color.G), b: float32(e.Color.B)}
		es.x0, es.y0, es.z0 = px(a)
		es.x1, es.y1, es.z1 = px(b)
		es.ylo = max(int(math.Floor(float64(min(es.y0, es.y1)-es.half-0.5))), 0)
		es.yhi = min(int(math.Ceil(float64(max(es.y0, es.y1)+es.half-0.5))), r.h-1)
		if es.ylo > es.yhi {
			continue
		}
		r.edges = append(r.edges, es)
	}
}

// rasterEdge draws rows [y0, y1] of an edge: the pixels whose centre lies within half a width
// of the segment (a band with round caps), each at the depth of the nearest point of the
// segment (1/z is linear along the segment on screen), into the sphere layer so that it hides
// and is hidden by hubs correctly and a glass surface blends over it as over a hub. On each
// row only the span of x where the band can lie is visited. Edges are not picked.
func (r *Renderer) rasterEdge(e *edgeSetup, y0, y1 int, opaque bool) {
	dx, dy := e.x1-e.x0, e.y1-e.y0
	l2 := dx*dx + dy*dy
	h2 := e.half * e.half
	xlo := min(e.x0, e.x1) - e.half
	xhi := max(e.x0, e.x1) + e.half
	for y := y0; y <= y1; y++ {
		py := float32(y) + 0.5
		a, b := xlo, xhi
		if ady := float32(math.Abs(float64(dy))); ady > 1e-6 {
			// The band's horizontal extent on this row: centre line x(py) ± half·len/|dy|.
			xc := e.x0 + (py-e.y0)*dx/dy
			hs := e.half * float32(math.Sqrt(float64(l2))) / ady
			a, b = max(a, xc-hs), min(b, xc+hs)
		}
		xa := max(int(math.Floor(float64(a))), 0)
		xb := min(int(math.Ceil(float64(b))), r.w-1)
		row := y * r.w
		for x := xa; x <= xb; x++ {
			px := float32(x) + 0.5
			t := float32(0)
			if l2 > 0 {
				t = min(max(((px-e.x0)*dx+(py-e.y0)*dy)/l2, 0), 1)
			}
			qx, qy := e.x0+t*dx-px, e.y0+t*dy-py
			if qx*qx+qy*qy > h2 {
				continue
			}
			iz := e.z0 + t*(e.z1-e.z0)
			i := row + x
			if iz <= r.sphInvZ[i] || opaque && iz <= r.surfInvZ[i] {
				continue
			}
			r.sphInvZ[i] = iz
			r.sphRGBA[i] = pack(e.r, e.g, e.b, 255)
			r.sphIndex[i] = -1
		}
	}
}

// EdgeColor is the connectome view's colour of an edge of weight w on a scale whose strongest
// weight is wmax: positive weights from a pale orange to a deep red as w grows, negative ones
// from pale to deep blue (nilearn's view_connectome uses a diverging map the same way).
func EdgeColor(w, wmax float64) color.NRGBA {
	f := 1.0
	if wmax > 0 {
		f = min(math.Abs(w)/wmax, 1)
	}
	if math.IsNaN(f) {
		f = 0
	}
	lerp := func(a, b float64) uint8 { return uint8(math.Round(a + (b-a)*f)) }
	if w < 0 {
		return color.NRGBA{R: lerp(150, 20), G: lerp(190, 60), B: lerp(240, 200), A: 255}
	}
	return color.NRGBA{R: lerp(250, 190), G: lerp(190, 20), B: lerp(120, 20), A: 255}
}

// Edge widths in pixels: thin enough that a few hundred edges stay readable.
const (
	MinEdgeWidth = 1
	MaxEdgeWidth = 5
)

// EdgeWidth maps |w| to a width between MinEdgeWidth and MaxEdgeWidth, linear in |w|/wmax.
func EdgeWidth(w, wmax float64) float32 {
	f := 1.0
	if wmax > 0 {
		f = min(math.Abs(w)/wmax, 1)
	}
	if math.IsNaN(f) {
		f = 0
	}
	return float32(MinEdgeWidth + (MaxEdgeWidth-MinEdgeWidth)*f)
}
