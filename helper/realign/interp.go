package realign

import "math"

// Interp is the interpolation used to sample a volume between grid points.
type Interp int

const (
	// Trilinear interpolation (SPM's and MCFLIRT's estimation default).
	Trilinear Interp = iota
	// BSpline is cubic B-spline interpolation (Unser 1999: the volume is first turned into
	// spline coefficients by a recursive filter with mirror boundaries, as scipy.ndimage's
	// spline_filter does); SPM's reslicing default is a higher-order B-spline.
	BSpline
)

func (m Interp) String() string {
	if m == BSpline {
		return "bspline"
	}
	return "trilinear"
}

// Grid is a volume's shape and voxel→world affine (flat index i + Nx·(j + Ny·k)).
type Grid struct {
	Dims   [3]int
	Affine Affine
}

// Len is the number of voxels.
func (g Grid) Len() int { return g.Dims[0] * g.Dims[1] * g.Dims[2] }

// Center is the world position of the middle of the grid.
func (g Grid) Center() [3]float64 {
	return Apply(g.Affine, [3]float64{float64(g.Dims[0]-1) / 2, float64(g.Dims[1]-1) / 2, float64(g.Dims[2]-1) / 2})
}

// edge is how far (in voxels) a sample may lie outside [0, n−1] and still be taken, clamped:
// rounding of a transform that maps the grid onto itself must not drop its border.
const edge = 1e-4

// sampler reads a volume at continuous voxel coordinates.
type sampler struct {
	dims  [3]int
	data  []float32 // intensities (trilinear) or spline coefficients (B-spline)
	order Interp
}

func newSampler(dims [3]int, vol []float32, order Interp, scratch []float32) sampler {
	if order == BSpline {
		coef := scratch[:len(vol)]
		copy(coef, vol)
		splineFilter(coef, dims)
		return sampler{dims: dims, data: coef, order: order}
	}
	return sampler{dims: dims, data: vol, order: order}
}

// at samples the volume at voxel coordinates (x, y, z); ok is false outside the grid.
func (s *sampler) at(x, y, z float64) (float64, bool) {
	nx, ny, nz := s.dims[0], s.dims[1], s.dims[2]
	if x < -edge || y < -edge || z < -edge || x > float64(nx-1)+edge || y > float64(ny-1)+edge || z > float64(nz-1)+edge {
		return 0, false
	}
	if s.order == BSpline {
		return s.spline(x, y, z), true
	}
	return trilinear(s.data, nx, ny, nz, x, y, z), true
}

// trilinear interpolates at (x, y, z) inside [0, n−1]³ (clamped to it).
func trilinear(d []float32, nx, ny, nz int, x, y, z float64) float64 {
	i0, fx := split(x, nx)
	j0, fy := split(y, ny)
	k0, fz := split(z, nz)
	i1, j1, k1 := i0, j0, k0
	if fx > 0 {
		i1++
	}
	if fy > 0 {
		j1++
	}
	if fz > 0 {
		k1++
	}
	sxy := nx * ny
	b00 := j0*nx + k0*sxy
	b10 := j1*nx + k0*sxy
	b01 := j0*nx + k1*sxy
	b11 := j1*nx + k1*sxy
	c00 := float64(d[b00+i0]) + fx*float64(d[b00+i1]-d[b00+i0])
	c10 := float64(d[b10+i0]) + fx*float64(d[b10+i1]-d[b10+i0])
	c01 := float64(d[b01+i0]) + fx*float64(d[b01+i1]-d[b01+i0])
	c11 := float64(d[b11+i0]) + fx*float64(d[b11+i1]-d[b11+i0])
	c0 := c00 + fy*(c10-c00)
	c1 := c01 + fy*(c11-c01)
	return c0 + fz*(c1-c0)
}

// split returns the lower grid index and the fraction, with x clamped to [0, n−1].
func split(x float64, n int) (int, float64) {
	if x <= 0 {
		return 0, 0
	}
	if x >= float64(n-1) {
		return n - 1, 0
	}
	i := int(x)
	return i, x - float64(i)
}

// bsplineWeights are the cubic B-spline weights of the four taps floor(x)−1 … floor(x)+2.
func bsplineWeights(f float64) [4]float64 {
	g := 1 - f
	return [4]float64{
		g * g * g / 6,
		(4 - 6*f*f + 3*f*f*f) / 6,
		(4 - 6*g*g + 3*g*g*g) / 6,
		f * f * f / 6,
	}
}

// mirror reflects index i into [0, n−1] (whole-sample symmetric, scipy's "mirror").
func mirror(i, n int) int {
	if n == 1 {
		return 0
	}
	p := 2 * (n - 1)
	i %= p
	if i < 0 {
		i += p
	}
	if i >= n {
		i = p - i
	}
	return i
}

func (s *sampler) spline(x, y, z float64) float64 {
	nx, ny, nz := s.dims[0], s.dims[1], s.dims[2]
	fx, fy, fz := math.Floor(x), math.Floor(y), math.Floor(z)
	wx, wy, wz := bsplineWeights(x-fx), bsplineWeights(y-fy), bsplineWeights(z-fz)
	var ix, iy, iz [4]int
	for t := 0; t < 4; t++ {
		ix[t] = mirror(int(fx)-1+t, nx)
		iy[t] = mirror(int(fy)-1+t, ny) * nx
		iz[t] = mirror(int(fz)-1+t, nz) * nx * ny
	}
	var v float64
	for c := 0; c < 4; c++ {
		var vy float64
		for b := 0; b < 4; b++ {
			row := s.data[iz[c]+iy[b]:]
			vy += wy[b] * (wx[0]*float64(row[ix[0]]) + wx[1]*float64(row[ix[1]]) + wx[2]*float64(row[ix[2]]) + wx[3]*float64(row[ix[3]]))
		}
		v += wz[c] * vy
	}
	return v
}

// splineFilter turns a volume into cubic B-spline coefficients in place, axis by axis (Unser
// 1999, causal and anti-causal recursions with the pole √3 − 2 and mirror boundaries).
func splineFilter(v []float32, dims [3]int) {
	buf := make([]float64, max(dims[0], dims[1], dims[2]))
	strides := [3]int{1, dims[0], dims[0] * dims[1]}
	for axis := 0; axis < 3; axis++ {
		n := dims[axis]
		if n < 2 {
			continue
		}
		line := buf[:n]
		st := strides[axis]
		for start := 0; start < len(v); start++ {
			// Visit each line once: its start has index 0 along the axis.
			if (start/st)%n != 0 {
				continue
			}
			for i := range line {
				line[i] = float64(v[start+i*st])
			}
			splineLine(line)
			for i := range line {
				v[start+i*st] = float32(line[i])
			}
		}
	}
}

func splineLine(c []float64) {
	const z = -0.2679491924311228 // √3 − 2
	n := len(c)
	for i := range c {
		c[i] *= 6 // gain (1 − z)(1 − 1/z)
	}
	// Causal initialisation (mirror boundary): c⁺[0] = Σ z^k c[k], truncated when z^k is negligible.
	horizon := min(n, 30)
	zk := 1.0
	sum := 0.0
	for k := 0; k < horizon; k++ {
		sum += zk * c[k]
		zk *= z
	}
	if horizon == n {
		// exact mirror sum for short lines
		zn := math.Pow(z, float64(n-1))
		iz := 1 / z
		z2n := zn * zn * iz
		sum = c[0] + zn*c[n-1]
		zk = z
		for k := 1; k < n-1; k++ {
			sum += (zk + z2n) * c[k]
			zk *= z
			z2n *= iz
		}
		sum /= 1 - zn*zn
	}
	c[0] = sum
	for k := 1; k < n; k++ {
		c[k] += z * c[k-1]
	}
	c[n-1] = z / (z*z - 1) * (c[n-1] + z*c[n-2])
	for k := n - 2; k >= 0; k-- {
		c[k] = z * (c[k+1] - c[k])
	}
}

// TrilinearAt samples vol (dims) at voxel coordinates (x, y, z) by trilinear interpolation; ok is
// false outside the grid.
func TrilinearAt(vol []float32, dims [3]int, x, y, z float64) (float64, bool) {
	s := sampler{dims: dims, data: vol, order: Trilinear}
	return s.at(x, y, z)
}
