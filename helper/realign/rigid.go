// Package realign estimates and corrects head motion in a 4D scan: rigid-body (6-parameter)
// registration of every volume to a reference volume by least squares on intensities, as SPM's
// realign (Friston et al. 1995) and FSL's MCFLIRT (Jenkinson et al. 2002) do, and the framewise
// displacement of Power et al. (2012) from the estimated parameters.
//
// # Parameters
//
// A volume's motion is the rigid map from the reference volume's world space (mm, the scan's
// voxel→world affine) to the volume's own world space,
//
//	y = R·(x − c) + c + t,   R = Rx(rot_x)·Ry(rot_y)·Rz(rot_z),
//
// with c the centre of the field of view (rotations about the middle of the grid, as MCFLIRT's,
// so translations stay small and interpretable), t = (trans_x, trans_y, trans_z) in mm and the
// rotations in radians about the world x, y and z axes (right-handed). A point of the head at x
// in the reference is found at y in the volume. These are fMRIPrep's column names; FD only uses
// differences of the parameters, so it does not depend on the rotation order.
package realign

import "math"

// Params are one volume's motion: trans_x, trans_y, trans_z (mm), rot_x, rot_y, rot_z (radians).
type Params [6]float64

// Names are the motion parameters' column names, in Params order (fMRIPrep's confounds names).
var Names = [6]string{"trans_x", "trans_y", "trans_z", "rot_x", "rot_y", "rot_z"}

// Affine is a 4×4 homogeneous matrix acting on column vectors (last row 0 0 0 1).
type Affine = [4][4]float64

// Rotation returns R = Rx(a)·Ry(b)·Rz(g).
func Rotation(a, b, g float64) [3][3]float64 {
	ca, sa := math.Cos(a), math.Sin(a)
	cb, sb := math.Cos(b), math.Sin(b)
	cg, sg := math.Cos(g), math.Sin(g)
	return [3][3]float64{
		{cb * cg, -cb * sg, sb},
		{ca*sg + sa*sb*cg, ca*cg - sa*sb*sg, -sa * cb},
		{sa*sg - ca*sb*cg, sa*cg + ca*sb*sg, ca * cb},
	}
}

// Matrix is the world-space map x ↦ R·(x − c) + c + t of p about the centre c.
func (p Params) Matrix(c [3]float64) Affine {
	return Centred(Rotation(p[3], p[4], p[5]), [3]float64{p[0], p[1], p[2]}, c)
}

// Centred is the world-space map x ↦ L·(x − c) + c + t: the linear map l about the centre
// c, then the translation t (the offset column is c + t − L·c).
func Centred(l [3][3]float64, t, c [3]float64) Affine {
	var m Affine
	for i := 0; i < 3; i++ {
		off := c[i] + t[i]
		for j := 0; j < 3; j++ {
			m[i][j] = l[i][j]
			off -= l[i][j] * c[j]
		}
		m[i][3] = off
	}
	m[3][3] = 1
	return m
}

// ParamsOf inverts Matrix: the parameters of a rigid world map m about the centre c. The rotation
// part must be a rotation (m is assumed rigid); rot_y is taken in [−π/2, π/2].
func ParamsOf(m Affine, c [3]float64) Params {
	var p Params
	sb := math.Max(-1, math.Min(1, m[0][2]))
	p[4] = math.Asin(sb)
	p[5] = math.Atan2(-m[0][1], m[0][0])
	p[3] = math.Atan2(-m[1][2], m[2][2])
	// t = m·c − c: the offset plus the rotated centre, minus the centre.
	for i := 0; i < 3; i++ {
		v := m[i][3] - c[i]
		for j := 0; j < 3; j++ {
			v += m[i][j] * c[j]
		}
		p[i] = v
	}
	return p
}

// Mul returns a·b.
func Mul(a, b Affine) Affine {
	var m Affine
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			var s float64
			for k := 0; k < 4; k++ {
				s += a[i][k] * b[k][j]
			}
			m[i][j] = s
		}
	}
	return m
}

// Inverse returns the inverse of an affine matrix (last row 0 0 0 1); ok is false when its linear
// part is singular.
func Inverse(a Affine) (Affine, bool) {
	m := [3][3]float64{{a[0][0], a[0][1], a[0][2]}, {a[1][0], a[1][1], a[1][2]}, {a[2][0], a[2][1], a[2][2]}}
	det := m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) - m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) + m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	if det == 0 || math.IsNaN(det) || math.IsInf(det, 0) {
		return Affine{}, false
	}
	var inv Affine
	inv[0][0] = (m[1][1]*m[2][2] - m[1][2]*m[2][1]) / det
	inv[0][1] = (m[0][2]*m[2][1] - m[0][1]*m[2][2]) / det
	inv[0][2] = (m[0][1]*m[1][2] - m[0][2]*m[1][1]) / det
	inv[1][0] = (m[1][2]*m[2][0] - m[1][0]*m[2][2]) / det
	inv[1][1] = (m[0][0]*m[2][2] - m[0][2]*m[2][0]) / det
	inv[1][2] = (m[0][2]*m[1][0] - m[0][0]*m[1][2]) / det
	inv[2][0] = (m[1][0]*m[2][1] - m[1][1]*m[2][0]) / det
	inv[2][1] = (m[0][1]*m[2][0] - m[0][0]*m[2][1]) / det
	inv[2][2] = (m[0][0]*m[1][1] - m[0][1]*m[1][0]) / det
	for i := 0; i < 3; i++ {
		inv[i][3] = -(inv[i][0]*a[0][3] + inv[i][1]*a[1][3] + inv[i][2]*a[2][3])
	}
	inv[3][3] = 1
	return inv, true
}

// Apply maps the point x by a.
func Apply(a Affine, x [3]float64) [3]float64 {
	var y [3]float64
	for i := 0; i < 3; i++ {
		y[i] = a[i][0]*x[0] + a[i][1]*x[1] + a[i][2]*x[2] + a[i][3]
	}
	return y
}

// FDRadius is the head radius (mm) on which Power et al. (2012) turn rotations into arc lengths.
const FDRadius = 50

// FramewiseDisplacement is Power et al.'s (2012) FD: for t ≥ 1 the sum of the absolute
// differences of the six parameters between volumes t−1 and t, rotations converted to mm on a
// sphere of FDRadius; FD[0] = 0 (fMRIPrep writes n/a there).
func FramewiseDisplacement(p []Params) []float64 {
	fd := make([]float64, len(p))
	for t := 1; t < len(p); t++ {
		var s float64
		for k := 0; k < 6; k++ {
			d := math.Abs(p[t][k] - p[t-1][k])
			if k >= 3 {
				d *= FDRadius
			}
			s += d
		}
		fd[t] = s
	}
	return fd
}
