package render

import (
	"cmp"
	"image"
	"image/color"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-gl/mathgl/mgl32"
)

// Renderer draws scenes into an RGBA image of a fixed size, reusing its buffers between
// frames. A Renderer is not safe for concurrent use; Render itself spreads each frame over
// Workers goroutines.
type Renderer struct {
	// Workers is the number of goroutines a frame is split over; 0 means GOMAXPROCS.
	Workers int

	w, h int
	img  *image.RGBA

	// Per pixel: the nearest surface fragment (1/depth, 0 for none, and its premultiplied
	// colour) and the nearest sphere fragment (1/depth, colour, index into Scene.Spheres),
	// kept apart so that a glass surface can be blended over the spheres behind it.
	surfInvZ []float32
	surfRGBA []uint32
	sphInvZ  []float32
	sphRGBA  []uint32
	sphIndex []int32

	// Per frame.
	verts    []screenVertex
	triRows  [][2]int32 // rows [first, last] a triangle covers; first > last when culled
	binStart []int32    // triangles of band b: binTris[binStart[b]:binStart[b+1]], in mesh order
	binTris  []int32
	extra    []screenVertex
	extraTri [][3]uint32 // triangles clipped at the near plane, indexing extra
	spheres  []sphereSetup
	edges    []edgeSetup
	glass    bool
	ids      []int // Sphere.ID by index, for Pick

	focal, centreX, centreY float32 // the frame's projection (see frame)
}

// screenVertex is a mesh vertex after projection and shading.
type screenVertex struct {
	x, y   int32   // pixel position in 28.4 fixed point (y down)
	invZ   float32 // 1 / view-space depth
	r, g   float32 // premultiplied colour, 0…255
	b, a   float32
	behind bool // nearer than the near plane: needs clipping
	view   mgl32.Vec3
}

// sphereSetup is a hub sphere in view space with its pixel bounding box.
type sphereSetup struct {
	c              [3]float64 // centre in view space
	r2             float64    // radius²
	invR           float64
	x0, x1, y0, y1 int // inclusive pixel box
	r, g, b        float32
	index          int32
	near           float64 // view-space depth of its nearest point
}

const subpixel = 16 // 28.4 fixed point: 1/16-pixel vertex precision

// Lighting: a headlight up and to the left of the eye (view space, towards the viewer), Lambert
// diffuse plus Blinn–Phong specular with the half vector of the light and the view axis.
var (
	lightDir = mgl32.Vec3{-0.35, 0.45, 1}.Normalize()
	halfDir  = lightDir.Add(mgl32.Vec3{0, 0, 1}).Normalize()
)

const (
	ambient       = 0.28
	diffuse       = 0.72
	surfSpecular  = 0.12 // brain surface: matte
	sphereSpecul  = 0.35 // hub spheres: glossy
	glassMinAlpha = 0.10 // glass opacity where the surface faces the viewer…
	glassMaxAlpha = 0.70 // …and at the silhouette
)

// NewRenderer returns a renderer for width×height images (a non-positive size gives an empty
// image until Resize).
func NewRenderer(width, height int) *Renderer {
	r := &Renderer{}
	r.Resize(width, height)
	return r
}

// Resize changes the image size, reallocating the frame's buffers when it differs.
func (r *Renderer) Resize(width, height int) {
	width, height = max(width, 0), max(height, 0)
	if width == r.w && height == r.h && r.img != nil {
		return
	}
	r.w, r.h = width, height
	n := width * height
	r.img = image.NewRGBA(image.Rect(0, 0, width, height))
	r.surfInvZ = make([]float32, n)
	r.surfRGBA = make([]uint32, n)
	r.sphInvZ = make([]float32, n)
	r.sphRGBA = make([]uint32, n)
	r.sphIndex = make([]int32, n)
	for i := range r.sphIndex {
		r.sphIndex[i] = -1
	}
	r.ids = r.ids[:0]
}

// Size returns the image size.
func (r *Renderer) Size() (width, height int) { return r.w, r.h }

// Render draws scene s as seen by camera c and returns the frame. The image belongs to the
// renderer and is overwritten by the next Render: copy it to keep it. A nil scene draws
// nothing but a transparent frame.
func (r *Renderer) Render(s *Scene, c Camera) *image.RGBA {
	if r.img == nil {
		r.Resize(r.w, r.h)
	}
	if s == nil {
		s = &Scene{}
	}
	w, h := r.w, r.h
	if w == 0 || h == 0 {
		return r.img
	}
	centre, radius := s.bounds()
	f := c.place(centre, radius, w, h)
	workers := r.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}

	r.glass = s.Glass
	r.focal, r.centreX, r.centreY = f.focal, f.cx, f.cy
	r.ids = r.ids[:0]
	for _, sp := range s.Spheres {
		r.ids = append(r.ids, sp.ID)
	}
	r.setupSurface(s, &f, workers)
	r.setupSpheres(s, &f)
	r.setupEdges(s, &f)

	bg := premultiply(s.Background)
	bands := (h + bandRows - 1) / bandRows
	r.binTriangles(bands)
	var next atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < min(workers, bands); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1)) - 1
				if b >= bands {
					return
				}
				y0, y1 := b*bandRows, min((b+1)*bandRows, h)
				r.drawBand(s, b, y0, y1, bg)
			}
		}()
	}
	wg.Wait()
	return r.img
}

// setupSurface projects and shades every vertex of the surface and finds the rows each
// front-facing triangle covers.
func (r *Renderer) setupSurface(s *Scene, f *frame, workers int) {
	m := s.Surface
	r.extra, r.extraTri = r.extra[:0], r.extraTri[:0]
	if m == nil || len(m.Triangles) == 0 || len(m.Normals) != len(m.Vertices) {
		r.verts, r.triRows = r.verts[:0], r.triRows[:0]
		return
	}
	base := s.SurfaceColor
	if base.A == 0 {
		base = DefaultSurfaceColor
	}
	br, bgc, bb := float32(base.R), float32(base.G), float32(base.B)
	nv := len(m.Vertices)
	if cap(r.verts) < nv {
		r.verts = make([]screenVertex, nv)
	}
	r.verts = r.verts[:nv]
	var anyBehind atomic.Bool
	parallel(nv, workers, func(lo, hi int) {
		behind := false
		for i := lo; i < hi; i++ {
			p := f.toView(m.Vertices[i])
			n := f.rotate(m.Normals[i])
			v := &r.verts[i]
			v.view = p
			d := max(n.Dot(lightDir), 0)
			sp := max(n.Dot(halfDir), 0)
			sp *= sp // (n·h)^16 by squaring
			sp *= sp
			sp *= sp
			sp *= sp
			lum := ambient + diffuse*d
			spec := surfSpecular * 255 * sp
			alpha := float32(1)
			if s.Glass {
				// Glass: opacity grows towards the silhouette, where the line of sight grazes
				// the surface (|n·v| → 0), like the rim of a glass vessel.
				c := float32(0)
				if l := p.Len(); l > 0 {
					c = float32(math.Abs(float64(n.Dot(p.Mul(-1 / l)))))
				}
				rim := (1 - c) * (1 - c)
				alpha = glassMinAlpha + (glassMaxAlpha-glassMinAlpha)*rim
			}
			v.r = min(br*lum+spec, 255) * alpha
			v.g = min(bgc*lum+spec, 255) * alpha
			v.b = min(bb*lum+spec, 255) * alpha
			v.a = 255 * alpha
			// A non-finite vertex counts as behind the eye; clipNear then drops its triangles.
			v.behind = !(-p[2] >= f.near) || !finite(p)
			if v.behind {
				behind = true
				continue
			}
			iz := 1 / -p[2]
			v.invZ = iz
			v.x = int32(math.Round(float64((f.cx + f.focal*p[0]*iz) * subpixel)))
			v.y = int32(math.Round(float64((f.cy - f.focal*p[1]*iz) * subpixel)))
		}
		if behind {
			anyBehind.Store(true)
		}
	})

	nt := len(m.Triangles)
	if cap(r.triRows) < nt {
		r.triRows = make([][2]int32, nt)
	}
	r.triRows = r.triRows[:nt]
	w, h := int32(r.w), int32(r.h)
	parallel(nt, workers, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			tri := m.Triangles[t]
			r.triRows[t] = [2]int32{1, 0}
			if int(max(tri[0], tri[1], tri[2])) >= nv {
				continue // malformed: index past the vertices
			}
			a, b, c := &r.verts[tri[0]], &r.verts[tri[1]], &r.verts[tri[2]]
			if a.behind || b.behind || c.behind {
				continue
			}
			first, last, ok := coveredRows(a, b, c, w, h)
			if ok {
				r.triRows[t] = [2]int32{first, last}
			}
		}
	})
	if anyBehind.Load() {
		r.clipNear(m, f)
	}
}

// coveredRows returns the rows of pixel centres a front-facing triangle may cover, clamped to
// the image; ok is false for back-facing, degenerate or off-screen triangles.
func coveredRows(a, b, c *screenVertex, w, h int32) (first, last int32, ok bool) {
	// In y-down pixel coordinates a triangle wound counter-clockwise in view space (facing the
	// eye) has a negative orient.
	if orient(a, b, c) >= 0 {
		return 0, 0, false
	}
	ymin, ymax := min(a.y, b.y, c.y), max(a.y, b.y, c.y)
	xmin, xmax := min(a.x, b.x, c.x), max(a.x, b.x, c.x)
	// pixel centres at (i + ½)·16: first centre ≥ min, last ≤ max
	first = ceilDiv(ymin-subpixel/2, subpixel)
	last = floorDiv(ymax-subpixel/2, subpixel)
	x0 := ceilDiv(xmin-subpixel/2, subpixel)
	x1 := floorDiv(xmax-subpixel/2, subpixel)
	first, last = max(first, 0), min(last, h-1)
	if first > last || max(x0, 0) > min(x1, w-1) {
		return 0, 0, false
	}
	return first, last, true
}

func orient(a, b, c *screenVertex) int64 {
	return int64(b.x-a.x)*int64(c.y-a.y) - int64(b.y-a.y)*int64(c.x-a.x)
}

func floorDiv(a, b int32) int32 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int32) int32 { return -floorDiv(-a, b) }

// clipNear cuts the triangles that cross the near plane (Sutherland–Hodgman against
// z = −near in view space, attributes interpolated linearly in view space) and keeps the
// pieces in front of it as extra triangles.
func (r *Renderer) clipNear(m *Mesh, f *frame) {
	near := f.near
	project := func(v screenVertex) screenVertex {
		iz := 1 / -v.view[2]
		v.invZ = iz
		v.x = int32(math.Round(float64((f.cx + f.focal*v.view[0]*iz) * subpixel)))
		v.y = int32(math.Round(float64((f.cy - f.focal*v.view[1]*iz) * subpixel)))
		v.behind = false
		return v
	}
	lerp := func(a, b screenVertex) screenVertex {
		// point where −z = near on segment a→b
		t := (near + a.view[2]) / (a.view[2] - b.view[2])
		v := screenVertex{
			r: a.r + t*(b.r-a.r), g: a.g + t*(b.g-a.g), b: a.b + t*(b.b-a.b), a: a.a + t*(b.a-a.a),
			view: a.view.Add(b.view.Sub(a.view).Mul(t)),
		}
		v.view[2] = -near
		return v
	}
	var poly [4]screenVertex
	for _, tri := range m.Triangles {
		if int(max(tri[0], tri[1], tri[2])) >= len(r.verts) {
			continue
		}
		vs := [3]*screenVertex{&r.verts[tri[0]], &r.verts[tri[1]], &r.verts[tri[2]]}
		if !vs[0].behind && !vs[1].behind && !vs[2].behind ||
			!finite(vs[0].view) || !finite(vs[1].view) || !finite(vs[2].view) {
			continue
		}
		n := 0
		for k := 0; k < 3; k++ {
			a, b := vs[k], vs[(k+1)%3]
			if !a.behind {
				poly[n] = *a
				n++
			}
			if a.behind != b.behind {
				poly[n] = lerp(*a, *b)
				n++
			}
		}
		if n < 3 {
			continue
		}
		base := uint32(len(r.extra))
		for k := 0; k < n; k++ {
			r.extra = append(r.extra, project(poly[k]))
		}
		for k := 1; k+1 < n; k++ {
			r.extraTri = append(r.extraTri, [3]uint32{base, base + uint32(k), base + uint32(k+1)})
		}
	}
}

// setupSpheres places the hub spheres in view space and bounds their images. The bounding box
// is exact: the planes through the eye tangent to the sphere and containing the screen's
// vertical (horizontal) axis touch it at angles θc ± asin(R/d) in the xz (yz) plane.
func (r *Renderer) setupSpheres(s *Scene, f *frame) {
	r.spheres = r.spheres[:0]
	for i, sp := range s.Spheres {
		if !drawable(sp) {
			continue
		}
		c := f.toView(sp.Center)
		R := float64(sp.Radius)
		cx, cy, cz := float64(c[0]), float64(c[1]), float64(c[2])
		if -cz-R < float64(f.near) {
			continue // reaches the near plane: not drawn
		}
		xs, okx := tangentRange(cx, -cz, R)
		ys, oky := tangentRange(cy, -cz, R)
		if !okx || !oky {
			continue
		}
		fo := float64(f.focal)
		x0 := int(math.Floor(float64(f.cx) + fo*xs[0] - 0.5))
		x1 := int(math.Ceil(float64(f.cx) + fo*xs[1] - 0.5))
		y0 := int(math.Floor(float64(f.cy) - fo*ys[1] - 0.5))
		y1 := int(math.Ceil(float64(f.cy) - fo*ys[0] - 0.5))
		x0, x1, y0, y1 = max(x0, 0), min(x1, r.w-1), max(y0, 0), min(y1, r.h-1)
		if x0 > x1 || y0 > y1 {
			continue
		}
		r.spheres = append(r.spheres, sphereSetup{
			c: [3]float64{cx, cy, cz}, r2: R * R, invR: 1 / R,
			x0: x0, x1: x1, y0: y0, y1: y1,
			r: float32(sp.Color.R), g: float32(sp.Color.G), b: float32(sp.Color.B),
			index: int32(i),
			near:  -cz - R,
		})
	}
	// Front to back, so that a sphere hidden behind nearer ones is rejected pixel by pixel
	// before any square root (see rasterSphere); ties keep the scene's order.
	slices.SortFunc(r.spheres, func(a, b sphereSetup) int {
		if c := cmp.Compare(a.near, b.near); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
}

func finite(v mgl32.Vec3) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// tangentRange returns the range of u/d over the disc of radius R at (u, d), d the depth
// along the view axis: tan(θ ± asin(R/ρ)) with θ = atan(u/d), ρ = √(u²+d²).
func tangentRange(u, d, R float64) ([2]float64, bool) {
	rho := math.Hypot(u, d)
	if rho <= R {
		return [2]float64{}, false
	}
	th, a := math.Atan2(u, d), math.Asin(R/rho)
	lo, hi := th-a, th+a
	if lo <= -math.Pi/2 || hi >= math.Pi/2 {
		return [2]float64{}, false
	}
	return [2]float64{math.Tan(lo), math.Tan(hi)}, true
}

// bandRows is the height of the bands a frame is cut into: small enough that two workers
// share the load evenly, large enough that few triangles straddle two bands.
const bandRows = 24

// binTriangles lists, for each band, the visible triangles that reach into it (a counting
// sort by band, so each band keeps the mesh's order and the frame does not depend on the
// number of workers).
func (r *Renderer) binTriangles(bands int) {
	r.binStart = slices.Grow(r.binStart[:0], bands+1)[:bands+1]
	clear(r.binStart)
	for _, rows := range r.triRows {
		if rows[0] <= rows[1] {
			for b := rows[0] / bandRows; b <= rows[1]/bandRows; b++ {
				r.binStart[b+1]++
			}
		}
	}
	for b := 1; b <= bands; b++ {
		r.binStart[b] += r.binStart[b-1]
	}
	n := int(r.binStart[bands])
	r.binTris = slices.Grow(r.binTris[:0], n)[:n]
	fill := r.binStart[:bands] // advanced as triangles are placed, then restored
	for t, rows := range r.triRows {
		if rows[0] <= rows[1] {
			for b := rows[0] / bandRows; b <= rows[1]/bandRows; b++ {
				r.binTris[fill[b]] = int32(t)
				fill[b]++
			}
		}
	}
	// fill[b] now holds the end of band b, which is the start of band b+1: shift back.
	copy(r.binStart[1:], r.binStart[:bands])
	r.binStart[0] = 0
}

// drawBand clears, rasterises and composites rows [y0, y1), band b.
func (r *Renderer) drawBand(s *Scene, b, y0, y1 int, bg [4]uint8) {
	w := r.w
	lo, hi := y0*w, y1*w
	clear(r.surfInvZ[lo:hi])
	clear(r.sphInvZ[lo:hi])
	for i := lo; i < hi; i++ {
		r.sphIndex[i] = -1
	}
	if m := s.Surface; m != nil && len(r.verts) == len(m.Vertices) {
		for _, t := range r.binTris[r.binStart[b]:r.binStart[b+1]] {
			tri := m.Triangles[t]
			r.rasterTriangle(&r.verts[tri[0]], &r.verts[tri[1]], &r.verts[tri[2]], y0, y1)
		}
		for _, tri := range r.extraTri {
			r.rasterTriangle(&r.extra[tri[0]], &r.extra[tri[1]], &r.extra[tri[2]], y0, y1)
		}
	}
	for k := range r.spheres {
		sp := &r.spheres[k]
		if sp.y0 < y1 && sp.y1 >= y0 {
			r.rasterSphere(sp, max(sp.y0, y0), min(sp.y1, y1-1), !s.Glass)
		}
	}
	for k := range r.edges {
		e := &r.edges[k]
		if e.ylo < y1 && e.yhi >= y0 {
			r.rasterEdge(e, max(e.ylo, y0), min(e.yhi, y1-1), !s.Glass)
		}
	}
	r.composite(lo, hi, bg)
}

// rasterTriangle fills the pixels of rows [y0, y1) whose centres lie in the triangle (edge
// functions in 28.4 fixed point, so neighbouring triangles leave no cracks) and that are nearer
// than the surface drawn there so far. Depth and colour are interpolated linearly in screen
// space: 1/z is exactly linear there, and the colour's perspective error is invisible on
// triangles a few pixels wide.
func (r *Renderer) rasterTriangle(a, b, c *screenVertex, y0, y1 int) {
	area := orient(a, b, c)
	if area >= 0 {
		return // back-facing or degenerate
	}
	b, c = c, b // counter-clockwise on screen: all three edge functions ≥ 0 inside
	area = -area

	xmin, xmax := min(a.x, b.x, c.x), max(a.x, b.x, c.x)
	ymin, ymax := min(a.y, b.y, c.y), max(a.y, b.y, c.y)
	px0 := max(int(ceilDiv(xmin-subpixel/2, subpixel)), 0)
	px1 := min(int(floorDiv(xmax-subpixel/2, subpixel)), r.w-1)
	py0 := max(int(ceilDiv(ymin-subpixel/2, subpixel)), y0)
	py1 := min(int(floorDiv(ymax-subpixel/2, subpixel)), y1-1)
	if px0 > px1 || py0 > py1 {
		return
	}

	// Edge function of edge p→q at point s: (q−p) × (s−p); linear in s.
	type edge struct{ dx, dy, start int64 }
	sx := int64(px0)*subpixel + subpixel/2
	sy := int64(py0)*subpixel + subpixel/2
	mk := func(p, q *screenVertex) edge {
		ex, ey := int64(q.x-p.x), int64(q.y-p.y)
		return edge{
			dx:    -ey * subpixel, // change per pixel step in x
			dy:    ex * subpixel,  // change per pixel step in y
			start: ex*(sy-int64(p.y)) - ey*(sx-int64(p.x)),
		}
	}
	e0, e1, e2 := mk(b, c), mk(c, a), mk(a, b) // weights of a, b, c

	// Attribute planes f(x, y) = f(a) + λb·(f(b)−f(a)) + λc·(f(c)−f(a)), with λb = e1/area,
	// λc = e2/area; their per-pixel steps follow from the edge steps.
	inv := 1 / float32(area)
	type plane struct{ v, dx, dy float32 }
	l1 := float32(e1.start) * inv
	l2 := float32(e2.start) * inv
	d1x, d1y := float32(e1.dx)*inv, float32(e1.dy)*inv
	d2x, d2y := float32(e2.dx)*inv, float32(e2.dy)*inv
	mp := func(fa, fb, fc float32) plane {
		db, dc := fb-fa, fc-fa
		return plane{fa + l1*db + l2*dc, d1x*db + d2x*dc, d1y*db + d2y*dc}
	}
	pz := mp(a.invZ, b.invZ, c.invZ)
	pr := mp(a.r, b.r, c.r)
	pg := mp(a.g, b.g, c.g)
	pb := mp(a.b, b.b, c.b)
	pa := mp(a.a, b.a, c.a)

	w := r.w
	for y := py0; y <= py1; y++ {
		k := int64(y - py0)
		f0, f1, f2 := e0.start+k*e0.dy, e1.start+k*e1.dy, e2.start+k*e2.dy
		fk := float32(k)
		z := pz.v + fk*pz.dy
		cr, cg, cb, ca := pr.v+fk*pr.dy, pg.v+fk*pg.dy, pb.v+fk*pb.dy, pa.v+fk*pa.dy
		row := y * w
		for x := px0; x <= px1; x++ {
			if f0|f1|f2 >= 0 {
				i := row + x
				if z > r.surfInvZ[i] {
					r.surfInvZ[i] = z
					r.surfRGBA[i] = pack(cr, cg, cb, ca)
				}
			}
			f0 += e0.dx
			f1 += e1.dx
			f2 += e2.dx
			z += pz.dx
			cr += pr.dx
			cg += pg.dx
			cb += pb.dx
			ca += pa.dx
		}
	}
}

// rasterSphere ray-casts one sphere over rows [y0, y1] of its box: the ray through the pixel
// centre, d = ((x+½−cx)/f, −(y+½−cy)/f, −1), meets |t·d − c| = R at the smaller root of
// t²|d|² − 2t(d·c) + |c|² − R² = 0, which gives the exact depth (−z = t) and normal. On each
// row the rays that hit form one span, where the discriminant (d·c)² − |d|²(|c|²−R²), a
// quadratic in d_x, is ≥ 0: only that span is visited. Pixels where the surface (opaque) or
// another sphere already lies nearer than the sphere's nearest point are skipped before any
// square root.
func (r *Renderer) rasterSphere(sp *sphereSetup, y0, y1 int, opaque bool) {
	f := float64(r.focal)
	fr := 1 / f
	c0, c1, c2 := sp.c[0], sp.c[1], sp.c[2]
	cc := c0*c0 + c1*c1 + c2*c2 - sp.r2
	nearest := float32(1 / (-c2 - math.Sqrt(sp.r2)))
	lx, ly, lz := float64(lightDir[0]), float64(lightDir[1]), float64(lightDir[2])
	hx, hy, hz := float64(halfDir[0]), float64(halfDir[1]), float64(halfDir[2])
	qa := c0*c0 - cc // < 0: the sphere lies wholly in front of the eye
	for y := y0; y <= y1; y++ {
		dy := -(float64(y) + 0.5 - float64(r.centreY)) * fr
		// (dx·c0 + k)² − (dx² + m)·cc ≥ 0 with k = dy·c1 − c2, m = dy² + 1
		k, m := dy*c1-c2, dy*dy+1
		qb, qc := 2*c0*k, k*k-m*cc
		disc := qb*qb - 4*qa*qc
		if disc < 0 || qa >= 0 {
			continue
		}
		sq := math.Sqrt(disc)
		dxa, dxb := (-qb+sq)/(2*qa), (-qb-sq)/(2*qa) // qa < 0: dxa ≤ dxb
		xa := max(int(math.Ceil(float64(r.centreX)+dxa*f-0.5)), sp.x0)
		xb := min(int(math.Floor(float64(r.centreX)+dxb*f-0.5)), sp.x1)
		row := y * r.w
		for x := xa; x <= xb; x++ {
			i := row + x
			if r.sphInvZ[i] >= nearest || opaque && r.surfInvZ[i] >= nearest {
				continue
			}
			dx := (float64(x) + 0.5 - float64(r.centreX)) * fr
			a := dx*dx + m
			b := dx*c0 + k
			t := (b - math.Sqrt(max(b*b-a*cc, 0))) / a
			iz := float32(1 / t)
			if iz <= r.sphInvZ[i] {
				continue
			}
			nx, ny, nz := (t*dx-c0)*sp.invR, (t*dy-c1)*sp.invR, (-t-c2)*sp.invR
			d := max(nx*lx+ny*ly+nz*lz, 0)
			h := max(nx*hx+ny*hy+nz*hz, 0)
			h *= h // (n·h)^32 by squaring
			h *= h
			h *= h
			h *= h
			h *= h
			lum := float32(ambient + diffuse*d)
			spec := float32(sphereSpecul * 255 * h)
			r.sphInvZ[i] = iz
			r.sphRGBA[i] = pack(min(sp.r*lum+spec, 255), min(sp.g*lum+spec, 255), min(sp.b*lum+spec, 255), 255)
			r.sphIndex[i] = sp.index
		}
	}
}

// composite writes pixels [lo, hi): the sphere (or the background) with the surface over it
// where the surface is nearer, by the "over" operator on premultiplied colour.
func (r *Renderer) composite(lo, hi int, bg [4]uint8) {
	pix := r.img.Pix
	for i := lo; i < hi; i++ {
		var base [4]uint8
		if r.sphInvZ[i] > 0 {
			base = unpack(r.sphRGBA[i])
		} else {
			base = bg
		}
		out := base
		if r.surfInvZ[i] > r.sphInvZ[i] {
			s := unpack(r.surfRGBA[i])
			k := 255 - uint32(s[3])
			for ch := 0; ch < 4; ch++ {
				out[ch] = uint8(uint32(s[ch]) + (uint32(base[ch])*k+127)/255)
			}
		}
		copy(pix[4*i:4*i+4], out[:])
	}
}

// Pick returns the ID of the sphere drawn at pixel (x, y) of the last frame, or of the nearest
// one drawn within 3 pixels of it (hubs can be a few pixels wide), and whether there is one.
// A sphere hidden behind an opaque surface is not picked; behind a glass surface it is.
func (r *Renderer) Pick(x, y int) (id int, ok bool) {
	const reach = 3
	best, bestD := int32(-1), reach*reach+1
	for dy := -reach; dy <= reach; dy++ {
		for dx := -reach; dx <= reach; dx++ {
			px, py := x+dx, y+dy
			d := dx*dx + dy*dy
			if px < 0 || py < 0 || px >= r.w || py >= r.h || d >= bestD {
				continue
			}
			i := py*r.w + px
			k := r.sphIndex[i]
			if k < 0 || (!r.glass && r.surfInvZ[i] > r.sphInvZ[i]) {
				continue
			}
			best, bestD = k, d
		}
	}
	if best < 0 || int(best) >= len(r.ids) {
		return 0, false
	}
	return r.ids[best], true
}

// premultiply converts a colour to premultiplied RGBA bytes, the image's format.
func premultiply(c color.NRGBA) [4]uint8 {
	k := uint32(c.A)
	return [4]uint8{uint8((uint32(c.R)*k + 127) / 255), uint8((uint32(c.G)*k + 127) / 255), uint8((uint32(c.B)*k + 127) / 255), c.A}
}

func pack(r, g, b, a float32) uint32 {
	return uint32(r+0.5) | uint32(g+0.5)<<8 | uint32(b+0.5)<<16 | uint32(a+0.5)<<24
}

func unpack(c uint32) [4]uint8 {
	return [4]uint8{uint8(c), uint8(c >> 8), uint8(c >> 16), uint8(c >> 24)}
}

// parallel calls fn on contiguous ranges covering [0, n), on up to workers goroutines.
func parallel(n, workers int, fn func(lo, hi int)) {
	const minChunk = 4096
	parts := min(workers, (n+minChunk-1)/minChunk)
	if parts <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
