package scan

import (
	"math"
	"slices"
)

// Defaults of nilearn.masking.compute_epi_mask.
const (
	DefaultLowerCutoff = 0.2
	DefaultUpperCutoff = 0.85
	// epiOpening is compute_epi_mask's opening=2: erosion/dilation iterations.
	epiOpening = 2
	// epiSmoothFWHM is the FWHM, in voxels, of the Gaussian that compute_epi_mask applies to
	// the mean image before thresholding (_compute_mean(smooth=1) with an identity affine).
	epiSmoothFWHM = 1.0
)

// EPIMask computes a brain mask from the mean EPI image (grid dims, i fastest) exactly as
// nilearn.masking.compute_epi_mask(connected=True, opening=2, exclude_zeros=False) does; see
// EPIMask64, which this calls after widening the mean to float64.
func EPIMask(mean []float32, dims [3]int, lower, upper float64) Mask {
	m := make([]float64, len(mean))
	for i, v := range mean {
		m[i] = float64(v)
	}
	return EPIMask64(m, dims, lower, upper)
}

// EPIMask64 is EPIMask on a float64 mean image (what nilearn computes for integer data).
// mean is not modified. The steps, following nilearn's masking.py and image.py:
//
//  1. Smooth the mean with a Gaussian of FWHM 1 voxel along each axis (σ = 1/√(8 ln 2),
//     scipy.ndimage.gaussian_filter1d: truncate 4σ → radius 2, mirror "reflect" borders);
//     non-finite values count as 0 while smoothing, NaN positions are 0 afterwards.
//  2. Sort all values s[0..n); with a = ⌊lower·n⌋ and b = min(⌊upper·n⌋, n−1) find the
//     first largest jump s[a+q+1] − s[a+q], q ∈ [0, b−a), and threshold at its midpoint
//     τ = (s[a+q] + s[a+q+1])/2 (T. Nichols' least-dense point of the histogram).
//  3. mask = smoothed ≥ τ.
//  4. Opening and connectivity (_post_process_mask): erode 2 times, keep the largest
//     6-connected component, dilate 4 times, erode 2 times; all with the 3D cross
//     (6-connectivity) and voxels outside the grid counting as background.
//  5. Fill holes (scipy.ndimage.binary_fill_holes, 6-connected): background not connected
//     to the grid's border joins the mask. nilearn stops at step 4; a brain mask with
//     enclosed holes (dark ventricles or susceptibility dropout inside the brain) would
//     silently drop those voxels from the network, so HubScope fills them.
//
// lower and upper ≤ 0 take the defaults 0.2 and 0.85. When b ≤ a (a grid of a handful of
// voxels) there is no histogram to split and the mask is empty, as it is when the opening
// erodes everything (a slab thinner than 5 voxels, e.g. a single-slice acquisition); AutoMask
// then falls back to simpler rules.
func EPIMask64(mean []float64, dims [3]int, lower, upper float64) Mask {
	if lower <= 0 {
		lower = DefaultLowerCutoff
	}
	if upper <= 0 {
		upper = DefaultUpperCutoff
	}
	n := dims[0] * dims[1] * dims[2]
	out := Mask{Dims: dims, In: make([]bool, n)}
	if n == 0 || len(mean) != n {
		return out
	}
	sm := smoothMean(mean, dims)
	tau, ok := epiThreshold(sm, lower, upper)
	if !ok {
		return out
	}
	for i, v := range sm {
		out.In[i] = v >= tau
	}
	out.In = fillHoles(postProcessMask(out.In, dims, epiOpening), dims)
	return out
}

// fillHoles sets every background voxel that no 6-connected path of background voxels links
// to the grid's border, as scipy.ndimage.binary_fill_holes does with its default structure.
func fillHoles(in []bool, dims [3]int) []bool {
	nx, ny, nz := dims[0], dims[1], dims[2]
	outside := make([]bool, len(in)) // background reachable from the border
	var stack []int
	for f, v := range in {
		i, j, k := f%nx, (f/nx)%ny, f/(nx*ny)
		if !v && (i == 0 || i == nx-1 || j == 0 || j == ny-1 || k == 0 || k == nz-1) {
			outside[f] = true
			stack = append(stack, f)
		}
	}
	for len(stack) > 0 {
		g := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, j, k := g%nx, (g/nx)%ny, g/(nx*ny)
		for _, h := range [6]int{
			neighbor(i > 0, g-1), neighbor(i < nx-1, g+1),
			neighbor(j > 0, g-nx), neighbor(j < ny-1, g+nx),
			neighbor(k > 0, g-nx*ny), neighbor(k < nz-1, g+nx*ny),
		} {
			if h >= 0 && !in[h] && !outside[h] {
				outside[h] = true
				stack = append(stack, h)
			}
		}
	}
	out := make([]bool, len(in))
	for f := range in {
		out[f] = !outside[f]
	}
	return out
}

// epiThreshold is the midpoint of the largest gap between consecutive sorted values of sm
// within the fractions [lower, upper] of the sorted list (step 2 of EPIMask64). ok is false
// when that range holds no gap.
func epiThreshold(sm []float64, lower, upper float64) (tau float64, ok bool) {
	n := len(sm)
	sorted := slices.Clone(sm)
	slices.Sort(sorted)
	a := int(math.Floor(lower * float64(n)))
	b := min(int(math.Floor(upper*float64(n))), n-1)
	if a < 0 || b <= a {
		return 0, false
	}
	// np.argmax of the differences returns the first maximum.
	best, q := math.Inf(-1), 0
	for p := a; p < b; p++ {
		if d := sorted[p+1] - sorted[p]; d > best {
			best, q = d, p
		}
	}
	return 0.5 * (sorted[q] + sorted[q+1]), true
}

// postProcessMask is nilearn's _post_process_mask(opening, connected=True): erode opening
// times, keep the largest 6-connected component (when anything is left), dilate 2·opening
// times, erode opening times.
func postProcessMask(in []bool, dims [3]int, opening int) []bool {
	for range opening {
		in = erode(in, dims)
	}
	if slices.Contains(in, true) {
		in = largestComponent(in, dims)
	}
	for range 2 * opening {
		in = dilate(in, dims)
	}
	for range opening {
		in = erode(in, dims)
	}
	return in
}

// smoothMean applies nilearn's smooth_array(fwhm=1, affine=eye) to a copy of mean:
// non-finite → 0, a separable Gaussian along i, j, k, then 0 where the mean was NaN
// (nilearn puts NaN back and compute_epi_mask's ensure_finite turns it into 0).
func smoothMean(mean []float64, dims [3]int) []float64 {
	sm := make([]float64, len(mean))
	for i, v := range mean {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			sm[i] = v
		}
	}
	w := gaussianWeights(epiSmoothFWHM / math.Sqrt(8*math.Ln2))
	strides := [3]int{1, dims[0], dims[0] * dims[1]}
	var line, res []float64
	for axis := 0; axis < 3; axis++ {
		length, stride := dims[axis], strides[axis]
		line = slices.Grow(line[:0], length)[:length]
		res = slices.Grow(res[:0], length)[:length]
		// Visit every line along axis: start voxels have coordinate 0 on that axis.
		for start := 0; start < len(sm); start++ {
			if (start/stride)%length != 0 {
				continue
			}
			for x := 0; x < length; x++ {
				line[x] = sm[start+x*stride]
			}
			correlateReflect(line, w, res)
			for x := 0; x < length; x++ {
				sm[start+x*stride] = res[x]
			}
		}
	}
	for i, v := range mean {
		if math.IsNaN(v) {
			sm[i] = 0
		}
	}
	return sm
}

// gaussianWeights is scipy.ndimage's _gaussian_kernel1d(σ, order 0, radius ⌊4σ + 0.5⌋):
// w[x] ∝ exp(−x²/(2σ²)) for x = −r..r, normalised to sum 1. Returned as w[r+x].
func gaussianWeights(sigma float64) []float64 {
	r := int(4*sigma + 0.5)
	w := make([]float64, 2*r+1)
	sum := 0.0
	for x := -r; x <= r; x++ {
		w[r+x] = math.Exp(-0.5 / (sigma * sigma) * float64(x*x))
		sum += w[r+x]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// correlateReflect computes res[x] = w[r]·line[x] + Σ_{d=1..r} w[r+d]·(line[x−d] + line[x+d])
// for a symmetric kernel w (summed in that order, as scipy's correlate1d does for symmetric
// weights) with scipy's "reflect" boundary (half-sample symmetric: … c b a | a b c …), for
// any line length, including 1.
func correlateReflect(line, w, res []float64) {
	r := len(w) / 2
	n := len(line)
	for x := 0; x < n; x++ {
		s := line[x] * w[r]
		for d := 1; d <= r; d++ {
			s += (line[reflectIndex(x-d, n)] + line[reflectIndex(x+d, n)]) * w[r+d]
		}
		res[x] = s
	}
}

// reflectIndex maps p onto [0, n) by mirroring at the half-sample borders, with period 2n.
func reflectIndex(p, n int) int {
	p %= 2 * n
	if p < 0 {
		p += 2 * n
	}
	if p >= n {
		p = 2*n - 1 - p
	}
	return p
}

// erode is one binary erosion with the 6-connected cross; voxels outside the grid are
// background (scipy's border_value=0), so the grid's outer layer always erodes.
func erode(in []bool, dims [3]int) []bool {
	nx, ny, nz := dims[0], dims[1], dims[2]
	sx, sy := 1, nx
	sz := nx * ny
	out := make([]bool, len(in))
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			for i := 0; i < nx; i++ {
				f := i + nx*(j+ny*k)
				if !in[f] || i == 0 || j == 0 || k == 0 || i == nx-1 || j == ny-1 || k == nz-1 {
					continue
				}
				out[f] = in[f-sx] && in[f+sx] && in[f-sy] && in[f+sy] && in[f-sz] && in[f+sz]
			}
		}
	}
	return out
}

// dilate is one binary dilation with the 6-connected cross; nothing grows outside the grid.
func dilate(in []bool, dims [3]int) []bool {
	nx, ny, nz := dims[0], dims[1], dims[2]
	sx, sy := 1, nx
	sz := nx * ny
	out := make([]bool, len(in))
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			for i := 0; i < nx; i++ {
				f := i + nx*(j+ny*k)
				out[f] = in[f] ||
					(i > 0 && in[f-sx]) || (i < nx-1 && in[f+sx]) ||
					(j > 0 && in[f-sy]) || (j < ny-1 && in[f+sy]) ||
					(k > 0 && in[f-sz]) || (k < nz-1 && in[f+sz])
			}
		}
	}
	return out
}

// largestComponent keeps the largest 6-connected component of in (scipy.ndimage.label's
// default structure). Ties go to the component met first in C order of the (i, j, k) array,
// k fastest, which is the order in which scipy numbers labels and so the one np.argmax of
// the label sizes picks.
func largestComponent(in []bool, dims [3]int) []bool {
	nx, ny, nz := dims[0], dims[1], dims[2]
	label := make([]int32, len(in))
	var sizes []int // sizes[c-1] of component c
	var firstC []int
	var stack []int
	cOrder := func(f int) int { // position of flat index f in C order (k fastest)
		i, j, k := f%nx, (f/nx)%ny, f/(nx*ny)
		return (i*ny+j)*nz + k
	}
	for f, v := range in {
		if !v || label[f] != 0 {
			continue
		}
		c := int32(len(sizes) + 1)
		size, first := 0, cOrder(f)
		label[f] = c
		stack = append(stack[:0], f)
		for len(stack) > 0 {
			g := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			size++
			if o := cOrder(g); o < first {
				first = o
			}
			i, j, k := g%nx, (g/nx)%ny, g/(nx*ny)
			for _, h := range [6]int{
				neighbor(i > 0, g-1), neighbor(i < nx-1, g+1),
				neighbor(j > 0, g-nx), neighbor(j < ny-1, g+nx),
				neighbor(k > 0, g-nx*ny), neighbor(k < nz-1, g+nx*ny),
			} {
				if h >= 0 && in[h] && label[h] == 0 {
					label[h] = c
					stack = append(stack, h)
				}
			}
		}
		sizes = append(sizes, size)
		firstC = append(firstC, first)
	}
	best := 0
	for c := 1; c < len(sizes); c++ {
		if sizes[c] > sizes[best] || (sizes[c] == sizes[best] && firstC[c] < firstC[best]) {
			best = c
		}
	}
	out := make([]bool, len(in))
	for f, l := range label {
		out[f] = l == int32(best+1)
	}
	return out
}

func neighbor(ok bool, f int) int {
	if ok {
		return f
	}
	return -1
}
