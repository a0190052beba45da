package realign

import "math"

// halving returns, per axis, 2 when the axis may be halved (it keeps at least minDim voxels)
// and 1 otherwise.
func halving(dims [3]int, minDim int) [3]int {
	f := [3]int{1, 1, 1}
	for a := 0; a < 3; a++ {
		if dims[a]/2 >= minDim {
			f[a] = 2
		}
	}
	return f
}

// downsample smooths vol with the binomial kernel [1 2 1]/4 along every halved axis (an
// anti-aliasing filter of σ ≈ 0.7 voxel) and keeps every second voxel there: output voxel i
// lies on input voxel f·i, so the output grid's affine is the input's times diag(f).
func downsample(vol []float32, dims [3]int, f [3]int) ([]float32, [3]int) {
	cur := vol
	cd := dims
	for a := 0; a < 3; a++ {
		if f[a] == 1 {
			continue
		}
		nd := cd
		nd[a] = (cd[a] + 1) / 2
		out := make([]float32, nd[0]*nd[1]*nd[2])
		st := [3]int{1, cd[0], cd[0] * cd[1]}
		ost := [3]int{1, nd[0], nd[0] * nd[1]}
		for k := 0; k < nd[2]; k++ {
			for j := 0; j < nd[1]; j++ {
				for i := 0; i < nd[0]; i++ {
					src := [3]int{i, j, k}
					src[a] *= 2
					base := src[0] + src[1]*st[1] + src[2]*st[2]
					c := cur[base]
					lo, hi := c, c
					if src[a] > 0 {
						lo = cur[base-st[a]]
					}
					if src[a] < cd[a]-1 {
						hi = cur[base+st[a]]
					}
					out[i+j*ost[1]+k*ost[2]] = 0.25*lo + 0.5*c + 0.25*hi
				}
			}
		}
		cur = out
		cd = nd
	}
	return cur, cd
}

// scaleAffine returns a·diag(f, 1): the affine of a grid that keeps every f-th voxel of a's grid.
func scaleAffine(a Affine, f [3]int) Affine {
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			a[i][j] *= float64(f[j])
		}
	}
	return a
}

// voxelSizes are the lengths of an affine's columns (mm per voxel step).
func voxelSizes(a Affine) [3]float64 {
	var s [3]float64
	for j := 0; j < 3; j++ {
		s[j] = math.Sqrt(a[0][j]*a[0][j] + a[1][j]*a[1][j] + a[2][j]*a[2][j])
	}
	return s
}

// Smooth returns vol convolved with a Gaussian of the given FWHM (mm), separably along the three
// axes with σ = FWHM / √(8 ln 2) / voxel size, truncated at 3σ, edges replicated. SPM's realign
// smooths by 5 mm before estimation: it takes the noise and the interpolation's own smoothing
// (which depends on the sub-voxel shift) out of the cost.
func Smooth(vol []float32, dims [3]int, vs [3]float64, fwhm float64) []float32 {
	out := append([]float32(nil), vol...)
	if fwhm <= 0 {
		return out
	}
	st := [3]int{1, dims[0], dims[0] * dims[1]}
	line := make([]float64, max(dims[0], dims[1], dims[2]))
	for a := 0; a < 3; a++ {
		sigma := fwhm / math.Sqrt(8*math.Ln2) / vs[a]
		if sigma < 0.1 || dims[a] < 2 {
			continue
		}
		r := int(math.Ceil(3 * sigma))
		w := make([]float64, 2*r+1)
		var ws float64
		for i := range w {
			d := float64(i - r)
			w[i] = math.Exp(-d * d / (2 * sigma * sigma))
			ws += w[i]
		}
		for i := range w {
			w[i] /= ws
		}
		n := dims[a]
		for start := 0; start < len(out); start++ {
			if (start/st[a])%n != 0 {
				continue
			}
			for i := 0; i < n; i++ {
				line[i] = float64(out[start+i*st[a]])
			}
			for i := 0; i < n; i++ {
				var s float64
				for q := -r; q <= r; q++ {
					s += w[q+r] * line[min(max(i+q, 0), n-1)]
				}
				out[start+i*st[a]] = float32(s)
			}
		}
	}
	return out
}
