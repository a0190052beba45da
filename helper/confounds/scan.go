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
// the eigensolver gives them).
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
	c := mat.NewSymDense(t, nil)
	kept := 0
	for i, r := range rows {
		if !(ms[i] > thr) {
			continue
		}
		kept++
		for a := 0; a < t; a++ {
			for b := a; b < t; b++ {
				c.SetSym(a, b, c.At(a, b)+r[a]*r[b])
			}
		}
	}
	if kept < nConf {
		return nil, fmt.Errorf("tCompCor: only %d high-variance series for %d components", kept, nConf)
	}
	var eig mat.EigenSym
	if !eig.Factorize(c, true) {
		return nil, fmt.Errorf("tCompCor: the eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	order := make([]int, t)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })
	out := make([][]float64, min(nConf, t))
	for j := range out {
		out[j] = mat.Col(nil, order[j], &vecs)
	}
	return out, nil
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
