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
