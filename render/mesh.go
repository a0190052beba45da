package render

import (
	"fmt"
	"math"
	"slices"

	"github.com/go-gl/mathgl/mgl32"
)

// Mesh is a triangle mesh in world millimetres (the scan's or template's RAS+ space).
// Triangles are wound counter-clockwise as seen from outside, so that the right-hand normal
// (v1−v0)×(v2−v0) points out; the renderer culls triangles seen from their back.
type Mesh struct {
	Vertices  []mgl32.Vec3
	Normals   []mgl32.Vec3 // unit outward vertex normals, one per vertex (ComputeNormals); a mesh without them is not drawn
	Triangles [][3]uint32
}

// MarchingCubes extracts the isosurface vol = iso of a 3D volume (Lorensen & Cline 1987) as a
// closed, consistently oriented mesh: voxels with vol ≥ iso are inside. vol is in NIfTI order
// (i fastest: vol[i + nx·(j + ny·k)]) on a grid of dims voxels, and affine maps voxel indices
// (i, j, k, 1) to millimetres (the NIfTI sform rows: x = affine[0]·(i, j, k, 1), …). The grid is
// padded with its background (its minimum when that is below iso) so that a surface touching
// the grid's faces is still closed. Vertices lie on voxel edges by linear interpolation and are
// shared between the cubes that meet there; normals are area-weighted averages of the faces'.
// NaN voxels count as background.
//
// A binary mask (iso 0.5) gives a terraced surface. BlurVolume first (2 passes) and Mesh.Smooth
// after (5 iterations) make it smooth; Downsample first coarsens the grid when fewer triangles
// are wanted (the 2 mm MNI152 brain mask gives about 65,000 triangles at full resolution, which
// render in a few milliseconds).
func MarchingCubes(vol []float32, dims [3]int, affine [4][4]float64, iso float32) (*Mesh, error) {
	nx, ny, nz := dims[0], dims[1], dims[2]
	if nx < 1 || ny < 1 || nz < 1 {
		return nil, fmt.Errorf("render: marching cubes: grid %d×%d×%d has no voxels", nx, ny, nz)
	}
	if len(vol) != nx*ny*nz {
		return nil, fmt.Errorf("render: marching cubes: %d values for a %d×%d×%d grid (%d voxels)", len(vol), nx, ny, nz, nx*ny*nz)
	}
	if math.IsNaN(float64(iso)) || math.IsInf(float64(iso), 0) {
		return nil, fmt.Errorf("render: marching cubes: iso-value %g is not finite", iso)
	}
	for r := 0; r < 3; r++ {
		for c := 0; c < 4; c++ {
			if math.IsNaN(affine[r][c]) || math.IsInf(affine[r][c], 0) {
				return nil, fmt.Errorf("render: marching cubes: affine element [%d][%d] = %g is not finite", r, c, affine[r][c])
			}
		}
	}

	background := iso - 1
	for _, v := range vol {
		if v < background {
			background = v
		}
	}
	// Padded copy: one background voxel on every side, so the cube loop needs no bounds tests.
	px, py, pz := nx+2, ny+2, nz+2
	pad := make([]float32, px*py*pz)
	for i := range pad {
		pad[i] = background
	}
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			src := vol[nx*(j+ny*k) : nx*(j+ny*k)+nx]
			dst := pad[1+px*(j+1+py*(k+1)):]
			for i, v := range src {
				if v == v { // not NaN
					dst[i] = v
				}
			}
		}
	}

	m := &Mesh{}
	// Vertex caches: for the lower and upper slice of the current layer of cubes, the vertex on
	// the x- and y-edge leaving each grid point; for the layer, the vertex on each z-edge.
	// -1 means not made yet.
	slice := px * py
	newCache := func() []int32 {
		c := make([]int32, slice)
		for i := range c {
			c[i] = -1
		}
		return c
	}
	loX, loY, hiX, hiY, zE := newCache(), newCache(), newCache(), newCache(), newCache()
	reset := func(c []int32) {
		for i := range c {
			c[i] = -1
		}
	}

	// (i, j, k) of the padded grid is voxel (i−1, j−1, k−1) of the volume.
	world := func(i, j, k float64) mgl32.Vec3 {
		i, j, k = i-1, j-1, k-1
		return mgl32.Vec3{
			float32(affine[0][0]*i + affine[0][1]*j + affine[0][2]*k + affine[0][3]),
			float32(affine[1][0]*i + affine[1][1]*j + affine[1][2]*k + affine[1][3]),
			float32(affine[2][0]*i + affine[2][1]*j + affine[2][2]*k + affine[2][3]),
		}
	}
	var corner [8]float32
	// Each corner's offset in the padded grid, once: most cubes lie wholly inside or outside
	// and cost only their eight loads.
	var off [8]int
	for n, o := range mcCornerOffset {
		off[n] = o[0] + px*(o[1]+py*o[2])
	}
	reach := slices.Max(off[:]) + 1
	for k := 0; k < pz-1; k++ {
		for j := 0; j < py-1; j++ {
			for i := 0; i < px-1; i++ {
				base := i + px*(j+py*k)
				cube := pad[base : base+reach : base+reach]
				c := 0
				for n, o := range off {
					v := cube[o]
					corner[n] = v
					if v >= iso {
						c |= 1 << n
					}
				}
				tris := mcTriangles[c]
				if len(tris) == 0 {
					continue
				}
				var vert [12]int32
				for e := range vert {
					vert[e] = -1
				}
				for _, t := range tris {
					for _, e := range t {
						if vert[e] >= 0 {
							continue
						}
						a, b := mcEdgeCorners[e][0], mcEdgeCorners[e][1]
						oa := mcCornerOffset[a]
						idx := i + oa[0] + px*(j+oa[1])
						var cache []int32
						switch {
						case e >= 8:
							cache = zE
						case e%2 == 0 && oa[2] == 0:
							cache = loX
						case e%2 == 0:
							cache = hiX
						case oa[2] == 0:
							cache = loY
						default:
							cache = hiY
						}
						if cache[idx] < 0 {
							// Linear interpolation along the edge: vol(a) + t·(vol(b) − vol(a)) = iso.
							// t is kept 10⁻³ voxel off the corners: where the surface passes
							// exactly through a grid point, the edges meeting there would
							// otherwise share one position and give zero-area triangles and
							// vertices without a normal.
							t := float64(iso-corner[a]) / float64(corner[b]-corner[a])
							t = min(max(t, 1e-3), 1-1e-3)
							ob := mcCornerOffset[b]
							p := world(
								float64(i+oa[0])+t*float64(ob[0]-oa[0]),
								float64(j+oa[1])+t*float64(ob[1]-oa[1]),
								float64(k+oa[2])+t*float64(ob[2]-oa[2]))
							cache[idx] = int32(len(m.Vertices))
							m.Vertices = append(m.Vertices, p)
						}
						vert[e] = cache[idx]
					}
					m.Triangles = append(m.Triangles, [3]uint32{uint32(vert[t[0]]), uint32(vert[t[1]]), uint32(vert[t[2]])})
				}
			}
		}
		loX, hiX = hiX, loX
		loY, hiY = hiY, loY
		reset(hiX)
		reset(hiY)
		reset(zE)
	}
	if len(m.Vertices) > math.MaxUint32 {
		return nil, fmt.Errorf("render: marching cubes: %d vertices exceed the mesh's 32-bit indices", len(m.Vertices))
	}
	// A left-handed affine (negative determinant, e.g. LAS storage) mirrors the grid, which turns
	// counter-clockwise triangles clockwise in world space.
	if det3(affine) < 0 {
		for t := range m.Triangles {
			m.Triangles[t][1], m.Triangles[t][2] = m.Triangles[t][2], m.Triangles[t][1]
		}
	}
	m.ComputeNormals()
	return m, nil
}

func det3(a [4][4]float64) float64 {
	return a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) -
		a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) +
		a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
}

// Downsample averages step×step×step blocks of vol (partial blocks at the far faces average
// the voxels they have), giving a grid of ⌈dims/step⌉ voxels and the affine that places each
// new voxel at the centre of its block: new index n maps to old index step·n + (step−1)/2.
// Averaging a binary mask before MarchingCubes (iso 0.5) coarsens the mesh by about step² in
// triangles while keeping the surface where half the block is brain.
func Downsample(vol []float32, dims [3]int, affine [4][4]float64, step int) ([]float32, [3]int, [4][4]float64, error) {
	nx, ny, nz := dims[0], dims[1], dims[2]
	if nx < 1 || ny < 1 || nz < 1 || len(vol) != nx*ny*nz {
		return nil, dims, affine, fmt.Errorf("render: downsample: %d values for a %d×%d×%d grid", len(vol), nx, ny, nz)
	}
	if step < 1 {
		return nil, dims, affine, fmt.Errorf("render: downsample: step %d: need at least 1", step)
	}
	if step == 1 {
		return append([]float32(nil), vol...), dims, affine, nil
	}
	od := [3]int{(nx + step - 1) / step, (ny + step - 1) / step, (nz + step - 1) / step}
	sum := make([]float64, od[0]*od[1]*od[2])
	cnt := make([]int32, len(sum))
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			row := od[0] * (j/step + od[1]*(k/step))
			for i, v := range vol[nx*(j+ny*k) : nx*(j+ny*k)+nx] {
				if v == v {
					sum[row+i/step] += float64(v)
					cnt[row+i/step]++
				}
			}
		}
	}
	out := make([]float32, len(sum))
	for n := range out {
		if cnt[n] > 0 {
			out[n] = float32(sum[n] / float64(cnt[n]))
		} else {
			out[n] = float32(math.NaN())
		}
	}
	s, h := float64(step), float64(step-1)/2
	var oa [4][4]float64
	oa[3][3] = 1
	for r := 0; r < 3; r++ {
		for c := 0; c < 3; c++ {
			oa[r][c] = affine[r][c] * s
		}
		oa[r][3] = affine[r][3] + h*(affine[r][0]+affine[r][1]+affine[r][2])
	}
	return out, od, oa, nil
}

// ComputeNormals sets each vertex normal to the normalised sum of the (v1−v0)×(v2−v0) of the
// triangles around it, i.e. the area-weighted mean of their face normals.
func (m *Mesh) ComputeNormals() {
	if cap(m.Normals) >= len(m.Vertices) {
		m.Normals = m.Normals[:len(m.Vertices)]
		clear(m.Normals)
	} else {
		m.Normals = make([]mgl32.Vec3, len(m.Vertices))
	}
	for _, t := range m.Triangles {
		a, b, c := m.Vertices[t[0]], m.Vertices[t[1]], m.Vertices[t[2]]
		n := b.Sub(a).Cross(c.Sub(a))
		for _, v := range t {
			m.Normals[v] = m.Normals[v].Add(n)
		}
	}
	for i, n := range m.Normals {
		if l := n.Len(); l > 0 {
			m.Normals[i] = n.Mul(1 / l)
		}
	}
}

// Smooth applies iterations of Taubin's λ|μ smoothing (Taubin 1995, λ = 0.5, μ = −0.53) with
// the uniform (umbrella) Laplacian, which rounds off marching-cubes terraces without the
// shrinkage of plain Laplacian smoothing, then recomputes the normals.
func (m *Mesh) Smooth(iterations int) {
	if iterations <= 0 || len(m.Vertices) == 0 {
		return
	}
	start, nbr := m.neighbours()
	const lambda, mu = 0.5, -0.53
	delta := make([]mgl32.Vec3, len(m.Vertices))
	// The same float32 operations as mgl32's Vec3 methods (Add, Mul, Sub), written out: the
	// methods are not inlined in this loop, which then spent three quarters of its time in
	// calls. The conversions keep each product rounded on its own (no fused multiply-add), so
	// the vertices are the methods' bit for bit.
	step := func(f float32) {
		vs := m.Vertices
		for v := range vs {
			ns := nbr[start[v]:start[v+1]]
			if len(ns) == 0 {
				delta[v] = mgl32.Vec3{}
				continue
			}
			var s0, s1, s2 float32
			for _, u := range ns {
				p := &vs[u]
				s0, s1, s2 = s0+p[0], s1+p[1], s2+p[2]
			}
			inv := 1 / float32(len(ns))
			p := &vs[v]
			delta[v] = mgl32.Vec3{
				float32(float32(s0*inv)-p[0]) * f,
				float32(float32(s1*inv)-p[1]) * f,
				float32(float32(s2*inv)-p[2]) * f,
			}
		}
		for v := range vs {
			d := &delta[v]
			vs[v] = mgl32.Vec3{vs[v][0] + d[0], vs[v][1] + d[1], vs[v][2] + d[2]}
		}
	}
	for it := 0; it < iterations; it++ {
		step(lambda)
		step(mu)
	}
	m.ComputeNormals()
}

// neighbours returns the vertex adjacency of the mesh in compressed form: the distinct
// neighbours of vertex v are nbr[start[v]:start[v+1]].
func (m *Mesh) neighbours() (start []int, nbr []uint32) {
	deg := make([]int, len(m.Vertices)+1)
	for _, t := range m.Triangles {
		for _, v := range t {
			deg[v+1] += 2
		}
	}
	for v := 1; v < len(deg); v++ {
		deg[v] += deg[v-1]
	}
	nbr = make([]uint32, deg[len(deg)-1])
	fill := append([]int(nil), deg[:len(m.Vertices)]...)
	for _, t := range m.Triangles {
		for e := 0; e < 3; e++ {
			a, b := t[e], t[(e+1)%3]
			nbr[fill[a]] = b
			fill[a]++
			nbr[fill[b]] = a
			fill[b]++
		}
	}
	// Each interior edge was seen from both of its triangles: keep one copy.
	start = make([]int, len(m.Vertices)+1)
	w := 0
	for v := range m.Vertices {
		ns := nbr[deg[v]:deg[v+1]]
		slices.Sort(ns)
		start[v] = w
		for n, u := range ns {
			if n == 0 || u != ns[n-1] {
				nbr[w] = u
				w++
			}
		}
	}
	start[len(m.Vertices)] = w
	return start, nbr[:w]
}

// Bounds returns the smallest axis-aligned box holding every finite vertex; ok is false when
// there is none.
func (m *Mesh) Bounds() (lo, hi mgl32.Vec3, ok bool) {
	if m == nil {
		return lo, hi, false
	}
	for _, v := range m.Vertices {
		if !finite(v) {
			continue
		}
		if !ok {
			lo, hi, ok = v, v, true
			continue
		}
		for a := 0; a < 3; a++ {
			lo[a] = min(lo[a], v[a])
			hi[a] = max(hi[a], v[a])
		}
	}
	return lo, hi, ok
}

// BlurVolume returns vol filtered passes times along each axis with the binomial kernel
// [1 2 1]/4 (borders replicated): a Gaussian of variance passes/2 voxel² per axis, so 2 passes
// give σ = 1 voxel. Blurring a binary mask before MarchingCubes (iso 0.5) removes the voxel
// terraces at the source, where smoothing the mesh only softens them, and keeps the surface
// where the mask's boundary was.
func BlurVolume(vol []float32, dims [3]int, passes int) ([]float32, error) {
	nx, ny, nz := dims[0], dims[1], dims[2]
	if nx < 1 || ny < 1 || nz < 1 || len(vol) != nx*ny*nz {
		return nil, fmt.Errorf("render: blur: %d values for a %d×%d×%d grid", len(vol), nx, ny, nz)
	}
	out := append([]float32(nil), vol...)
	tmp := make([]float32, len(out))
	strides := [3]int{1, nx, nx * ny}
	for p := 0; p < passes; p++ {
		for axis := 0; axis < 3; axis++ {
			blurAxis(tmp, out, len(out), dims[axis], strides[axis])
			out, tmp = tmp, out
		}
	}
	return out, nil
}

// blurAxis writes to dst the [1 2 1]/4 filter of src along the axis of n points and stride st
// (borders replicated). The voxels are visited as runs of st that share their coordinate c
// along the axis (the volume is blocks of n·st voxels), so no voxel needs its coordinate
// divided out; each value is the same expression as the voxel-by-voxel form, bit for bit.
func blurAxis(dst, src []float32, total, n, st int) {
	for b := 0; b < total; b += n * st {
		for c := 0; c < n; c++ {
			row := b + c*st
			lo, hi := row, row
			if c > 0 {
				lo = row - st
			}
			if c < n-1 {
				hi = row + st
			}
			d, s := dst[row:row+st], src[row:row+st]
			sl, sh := src[lo:lo+st], src[hi:hi+st]
			for i := range d {
				d[i] = 0.25*sl[i] + 0.5*s[i] + 0.25*sh[i]
			}
		}
	}
}

// MaskSurface is the brain surface the 3D view shows for a binary mask (the template's or the
// scan's): the mask as a 0/1 volume, averaged down to voxels of about 2 mm when it is finer
// (Downsample), blurred to σ ≈ 2 mm (BlurVolume), cut at 0.5 (MarchingCubes) and given 5 Taubin
// iterations (Smooth). At 2 mm that gives the MNI152 brain about 65,000 triangles whatever the
// mask's own resolution. in is in NIfTI order (i fastest) with len(in) = dims[0]·dims[1]·dims[2].
func MaskSurface(in []bool, dims [3]int, affine [4][4]float64) (*Mesh, error) {
	if len(in) != dims[0]*dims[1]*dims[2] {
		return nil, fmt.Errorf("render: mask surface: %d voxels for a %d×%d×%d grid", len(in), dims[0], dims[1], dims[2])
	}
	vol := make([]float32, len(in))
	for i, b := range in {
		if b {
			vol[i] = 1
		}
	}
	voxel := math.Cbrt(math.Abs(det3(affine))) // mm, geometric mean of the voxel's sides
	if !(voxel > 0) || math.IsInf(voxel, 0) {
		return nil, fmt.Errorf("render: mask surface: affine has voxel volume %g mm³", math.Abs(det3(affine)))
	}
	step := max(1, int(math.Round(2/voxel)))
	vol, dims, affine, err := Downsample(vol, dims, affine, step)
	if err != nil {
		return nil, err
	}
	// binomial passes add variance ½ voxel² each: σ = 2 mm needs 2·(2 mm / voxel)² passes
	v := voxel * float64(step)
	vol, err = BlurVolume(vol, dims, max(1, int(math.Round(8/(v*v)))))
	if err != nil {
		return nil, err
	}
	m, err := MarchingCubes(vol, dims, affine, 0.5)
	if err != nil {
		return nil, err
	}
	m.Smooth(5)
	return m, nil
}
