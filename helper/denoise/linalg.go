package denoise

import (
	"errors"
	"math"
	"sort"
)

// cubicFill replaces the censored entries of y (times t[i]) by scipy's
// CubicSpline(t[keep], y[keep], bc_type="not-a-knot", extrapolate=True) evaluated there —
// the interpolation nilearn's signal.clean applies to censored volumes before filtering.
// keep is ascending with at least 2 entries; scratch slices are reused.
type spline struct {
	t, dx, slope, s, dl, d, du []float64
	keep, drop                 []int
}

func newSpline(t []float64, keep []int) (*spline, error) {
	n := len(keep)
	if n < 2 {
		return nil, errors.New("fewer than 2 uncensored volumes to interpolate from")
	}
	sp := &spline{t: t, keep: keep, dx: make([]float64, n-1), slope: make([]float64, n-1),
		s: make([]float64, n), dl: make([]float64, n), d: make([]float64, n), du: make([]float64, n)}
	kept := make([]bool, len(t))
	for _, k := range keep {
		kept[k] = true
	}
	for i := range t {
		if !kept[i] {
			sp.drop = append(sp.drop, i)
		}
	}
	for i := 0; i < n-1; i++ {
		sp.dx[i] = t[keep[i+1]] - t[keep[i]]
	}
	return sp, nil
}

// fill interpolates y's censored entries in place.
func (sp *spline) fill(y []float64) {
	if len(sp.drop) == 0 {
		return
	}
	keep, dx, slope, s := sp.keep, sp.dx, sp.slope, sp.s
	n := len(keep)
	x := func(i int) float64 { return sp.t[keep[i]] }
	for i := 0; i < n-1; i++ {
		slope[i] = (y[keep[i+1]] - y[keep[i]]) / dx[i]
	}
	switch {
	case n == 2: // a straight line (scipy switches not-a-knot to matching first derivatives)
		s[0], s[1] = slope[0], slope[0]
	case n == 3: // not-a-knot at both ends: the parabola through the three points
		A := []float64{1, 1, 0, dx[1], 2 * (dx[0] + dx[1]), dx[0], 0, 1, 1}
		s[0], s[1], s[2] = 2*slope[0], 3*(dx[0]*slope[1]+dx[1]*slope[0]), 2*slope[1]
		_ = solveDense(A, s[:3], 3)
	default:
		dl, d, du := sp.dl, sp.d, sp.du // row i: dl[i-1]·s[i-1] + d[i]·s[i] + du[i]·s[i+1]
		for i := 1; i < n-1; i++ {
			dl[i-1] = dx[i]
			d[i] = 2 * (dx[i-1] + dx[i])
			du[i] = dx[i-1]
			s[i] = 3 * (dx[i]*slope[i-1] + dx[i-1]*slope[i])
		}
		w := x(2) - x(0)
		d[0], du[0] = dx[1], w
		s[0] = ((dx[0]+2*w)*dx[1]*slope[0] + dx[0]*dx[0]*slope[1]) / w
		w = x(n-1) - x(n-3)
		d[n-1], dl[n-2] = dx[n-2], w
		s[n-1] = (dx[n-2]*dx[n-2]*slope[n-3] + (2*w+dx[n-2])*dx[n-3]*slope[n-2]) / w
		gtsv(dl[:n-1], d[:n], du[:n-1], s[:n])
	}
	for _, j := range sp.drop {
		tj := sp.t[j]
		i := sort.Search(n, func(i int) bool { return x(i) > tj }) - 1 // x[i] ≤ tj < x[i+1]
		i = min(max(i, 0), n-2)
		h := tj - x(i)
		tt := (s[i] + s[i+1] - 2*slope[i]) / dx[i]
		c0 := tt / dx[i]
		c1 := (slope[i]-s[i])/dx[i] - tt
		y[j] = ((c0*h+c1)*h+s[i])*h + y[keep[i]]
	}
}

// gtsv solves the tridiagonal system (sub-diagonal dl, diagonal d, super-diagonal du) for b
// in place, with LAPACK dgtsv's partial pivoting; dl, d, du are overwritten.
func gtsv(dl, d, du, b []float64) {
	n := len(d)
	for i := 0; i < n-1; i++ {
		if math.Abs(d[i]) >= math.Abs(dl[i]) {
			if d[i] == 0 {
				continue
			}
			f := dl[i] / d[i]
			d[i+1] -= f * du[i]
			b[i+1] -= f * b[i]
			if i < n-2 {
				dl[i] = 0
			}
		} else {
			f := d[i] / dl[i]
			d[i] = dl[i]
			tmp := d[i+1]
			d[i+1] = du[i] - f*tmp
			if i < n-2 {
				dl[i] = du[i+1]
				du[i+1] = -f * dl[i]
			}
			du[i] = tmp
			tb := b[i]
			b[i] = b[i+1]
			b[i+1] = tb - f*b[i+1]
		}
	}
	b[n-1] /= d[n-1]
	if n > 1 {
		b[n-2] = (b[n-2] - du[n-2]*b[n-1]) / d[n-2]
	}
	for i := n - 3; i >= 0; i-- {
		b[i] = (b[i] - du[i]*b[i+1] - dl[i]*b[i+2]) / d[i]
	}
}

// pivotedQR returns an orthonormal basis (t×r, column-major: q[j] is column j) of the
// columns of c (t rows, k columns, column-major) from a Householder QR with column pivoting
// (LAPACK geqp3's rule: the remaining column of largest norm first), keeping the columns
// whose |R_jj| > tol — nilearn's rank cut for the confound matrix.
func pivotedQR(c [][]float64, tol float64) [][]float64 {
	k := len(c)
	if k == 0 {
		return nil
	}
	t := len(c[0])
	a := make([][]float64, k)
	for j := range c {
		a[j] = append([]float64(nil), c[j]...)
	}
	steps := min(t, k)
	vs := make([][]float64, 0, steps)
	betas := make([]float64, 0, steps)
	rank := 0
	for j := 0; j < steps; j++ {
		p, best := j, -1.0
		for q := j; q < k; q++ {
			s := 0.0
			for _, v := range a[q][j:] {
				s += v * v
			}
			if s > best {
				p, best = q, s
			}
		}
		a[j], a[p] = a[p], a[j]
		x := a[j][j:]
		alpha := math.Sqrt(best)
		if x[0] > 0 {
			alpha = -alpha
		}
		// R_jj = alpha
		if !(math.Abs(alpha) > tol) {
			break
		}
		rank++
		v := append([]float64(nil), x...)
		v[0] -= alpha
		vn := 0.0
		for _, e := range v {
			vn += e * e
		}
		beta := 0.0
		if vn > 0 {
			beta = 2 / vn
		}
		vs = append(vs, v)
		betas = append(betas, beta)
		for q := j; q < k; q++ {
			col := a[q][j:]
			s := 0.0
			for i, e := range v {
				s += e * col[i]
			}
			s *= beta
			for i, e := range v {
				col[i] -= s * e
			}
		}
	}
	// Q's first rank columns: H_0·…·H_{r-1}·e_j.
	q := make([][]float64, rank)
	for j := 0; j < rank; j++ {
		col := make([]float64, t)
		col[j] = 1
		for h := rank - 1; h >= 0; h-- {
			v := vs[h]
			sub := col[h:]
			s := 0.0
			for i, e := range v {
				s += e * sub[i]
			}
			s *= betas[h]
			for i, e := range v {
				sub[i] -= s * e
			}
		}
		q[j] = col
	}
	return q
}
