package confounds

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Global returns the global signal: the mean over the n series (row-major n×t) at each
// volume.
func Global(x []float32, n, t int) []float64 {
	g := make([]float64, t)
	for i := 0; i < n; i++ {
		for k, v := range x[i*t : (i+1)*t] {
			g[k] += float64(v)
		}
	}
	for k := range g {
		g[k] /= float64(n)
	}
	return g
}

// HighVarianceConfounds is nilearn's signal.high_variance_confounds (tCompCor; Behzadi et al.
// 2007, NeuroImage 37:90): detrend each series (mean and linear trend), keep the series whose
// mean square is above the (100 − percentile)th percentile, and return the nConf leading
// eigenvectors of their t×t second-moment matrix (column-major, each of unit norm; signs as
// the eigensolver gives them) — fewer when fewer series are selected. Where the highest
// mean squares tie so that none is above the percentile, the tied series are kept (nilearn
// returns unit spikes there; docs/algorithms.md).
func HighVarianceConfounds(x []float32, n, t, nConf int, percentile float64) ([][]float64, error) {
	if t < 2 {
		return nil, fmt.Errorf("tCompCor needs at least 2 volumes, the scan has %d", t)
	}
	rows := make([][]float64, n)
	ms := make([]float64, n)
	tc := float64(t-1) / 2
	ramp := 0.0
	for k := 0; k < t; k++ {
		ramp += (float64(k) - tc) * (float64(k) - tc)
	}
	ramp = math.Sqrt(ramp)
	for i := range rows {
		r := make([]float64, t)
		m := 0.0
		for k, v := range x[i*t : (i+1)*t] {
			r[k] = float64(v)
			m += r[k]
		}
		m /= float64(t)
		p := 0.0
		for k := range r {
			r[k] -= m
			p += r[k] * (float64(k) - tc) / ramp
		}
		ss := 0.0
		for k := range r {
			r[k] -= p * (float64(k) - tc) / ramp
			ss += r[k] * r[k]
		}
		rows[i], ms[i] = r, ss/float64(t)
	}
	thr := percentileLinear(ms, 100-percentile)
	var sel [][]float64
	floor := 0.0 // of the largest eigenvalue: directions at or below it are not returned
	for i, r := range rows {
		if ms[i] > thr {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		// Nothing lies strictly above the percentile when the highest mean squares tie (a
		// small or synthetic scan whose top series are copies) or there is one series. nilearn
		// then takes the eigenvectors of a zero matrix, i.e. unit spikes on its last volumes;
		// the tied top series are the highest-variance ones, so take them instead, and only
		// their directions above float32 rounding (eigenvalues above 1e-10 of the largest:
		// the copies differ by rounding alone).
		floor = 1e-10
		for i, r := range rows {
			if ms[i] >= thr && ms[i] > 0 {
				sel = append(sel, r)
			}
		}
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("tCompCor: every series is constant after detrending, so there are no components to take (clean with --denoise none)")
	}
	// The leading eigenvectors of S·Sᵀ (t×t) are S's left singular vectors; with fewer
	// selected series than volumes they come from the small Gram matrix Sᵀ·S: u = S·v/‖S·v‖.
	// Components beyond the number of series (zero eigenvalues, arbitrary directions in
	// nilearn) are not returned.
	k := min(nConf, len(sel), t)
	out := make([][]float64, 0, k)
	if len(sel) < t {
		g := mat.NewSymDense(len(sel), nil)
		for a := range sel {
			for b := a; b < len(sel); b++ {
				s := 0.0
				for q := range sel[a] {
					s += sel[a][q] * sel[b][q]
				}
				g.SetSym(a, b, s)
			}
		}
		vals, vecs, err := eigenDescending(g)
		if err != nil {
			return nil, err
		}
		for j := 0; j < k && vals[j] > floor*vals[0]; j++ {
			u := make([]float64, t)
			for a, r := range sel {
				w := vecs.At(a, j)
				for q := range u {
					u[q] += w * r[q]
				}
			}
			nu := math.Sqrt(dotF(u, u))
			for q := range u {
				u[q] /= nu
			}
			out = append(out, u)
		}
		return out, nil
	}
	c := mat.NewSymDense(t, nil)
	for _, r := range sel {
		for a := 0; a < t; a++ {
			for b := a; b < t; b++ {
				c.SetSym(a, b, c.At(a, b)+r[a]*r[b])
			}
		}
	}
	vals, vecs, err := eigenDescending(c)
	if err != nil {
		return nil, err
	}
	for j := 0; j < k && (floor == 0 || vals[j] > floor*vals[0]); j++ {
		out = append(out, mat.Col(nil, j, vecs))
	}
	return out, nil
}

// eigenDescending returns the eigenvalues (largest first) and eigenvectors (as columns, in
// the same order) of a symmetric matrix.
func eigenDescending(a *mat.SymDense) ([]float64, *mat.Dense, error) {
	var eig mat.EigenSym
	if !eig.Factorize(a, true) {
		return nil, nil, fmt.Errorf("tCompCor: the eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	n := len(vals)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	sv := make([]float64, n)
	sorted := mat.NewDense(n, n, nil)
	for j, o := range order {
		sv[j] = vals[o]
		for i := 0; i < n; i++ {
			sorted.Set(i, j, vecs.At(i, o))
		}
	}
	return sv, sorted, nil
}

func dotF(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// percentileLinear is numpy's percentile with linear interpolation (NaNs ignored).
func percentileLinear(v []float64, q float64) float64 {
	s := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	if len(s) == 0 {
		return math.NaN()
	}
	sort.Float64s(s)
	pos := q / 100 * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	f := pos - float64(lo)
	return s[lo] + f*(s[lo+1]-s[lo])
}
