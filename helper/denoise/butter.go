package denoise

import (
	"fmt"
	"math"
	"math/cmplx"
)

// butterBA designs the digital Butterworth filter of the given order the way
// scipy.signal.butter(order, Wn, btype, output="ba", fs) does:
// analog prototype poles on the unit circle, frequencies pre-warped for the bilinear
// transform, low-pass → low/high/band-pass transformation in zero-pole-gain form, bilinear
// transform at fs = 2, then the polynomial (transfer-function) coefficients b, a.
// low and high are in Hz (0 = absent; nilearn's low_pass is the upper edge, high_pass the
// lower one); fs is the sampling rate in Hz.
func butterBA(order int, highPass, lowPass, fs float64) (b, a []float64) {
	// buttap: p_k = -exp(iπ m/(2N)), m = -N+1, -N+3, …, N-1; no zeros; gain 1.
	p := make([]complex128, order)
	for i := range p {
		m := float64(-order + 1 + 2*i)
		p[i] = -cmplx.Exp(complex(0, math.Pi*m/float64(2*order)))
	}
	var z []complex128
	k := 1.0
	warp := func(f float64) float64 { // normalised to Nyquist, then pre-warped (fs = 2)
		wn := 2 * f / fs
		return 4 * math.Tan(math.Pi*wn/2)
	}
	switch {
	case highPass > 0 && lowPass > 0: // band-pass (lp2bp_zpk)
		w0, w1 := warp(highPass), warp(lowPass)
		bw := w1 - w0
		wo := math.Sqrt(w0 * w1)
		degree := len(p) - len(z)
		pb := make([]complex128, 0, 2*len(p))
		var lo, hi []complex128
		for _, pi := range p {
			pl := pi * complex(bw/2, 0)
			s := cmplx.Sqrt(pl*pl - complex(wo*wo, 0))
			lo = append(lo, pl+s)
			hi = append(hi, pl-s)
		}
		pb = append(append(pb, lo...), hi...)
		z = make([]complex128, degree) // zeros at the origin
		p = pb
		k *= math.Pow(bw, float64(degree))
	case highPass > 0: // high-pass (lp2hp_zpk)
		wo := warp(highPass)
		degree := len(p) - len(z)
		prodP := complex(1, 0)
		for i := range p {
			prodP *= -p[i]
			p[i] = complex(wo, 0) / p[i]
		}
		k *= real(complex(1, 0) / prodP)
		z = make([]complex128, degree)
	default: // low-pass (lp2lp_zpk)
		wo := warp(lowPass)
		for i := range p {
			p[i] *= complex(wo, 0)
		}
		k *= math.Pow(wo, float64(len(p)-len(z)))
	}
	// bilinear_zpk at fs = 2 (fs2 = 4).
	const fs2 = 4.0
	degree := len(p) - len(z)
	num, den := complex(1, 0), complex(1, 0)
	for i := range z {
		num *= complex(fs2, 0) - z[i]
		z[i] = (complex(fs2, 0) + z[i]) / (complex(fs2, 0) - z[i])
	}
	for i := range p {
		den *= complex(fs2, 0) - p[i]
		p[i] = (complex(fs2, 0) + p[i]) / (complex(fs2, 0) - p[i])
	}
	for i := 0; i < degree; i++ {
		z = append(z, -1)
	}
	k *= real(num / den)
	b = poly(z)
	for i := range b {
		b[i] *= k
	}
	return b, poly(p)
}

// poly is numpy.poly: the coefficients of Π (x − r), highest power first, by repeated
// convolution in root order; the imaginary parts (zero for conjugate pairs) are dropped.
func poly(roots []complex128) []float64 {
	c := []complex128{1}
	for _, r := range roots {
		n := make([]complex128, len(c)+1)
		for i, v := range c {
			n[i] += v
			n[i+1] -= v * r
		}
		c = n
	}
	out := make([]float64, len(c))
	for i, v := range c {
		out[i] = real(v)
	}
	return out
}

// filtfilt is scipy.signal.filtfilt(b, a, x, padtype="odd", padlen=None) for one series:
// odd extension by 3·max(len(a), len(b)) samples at each end, a forward and a backward pass
// of the direct-form II transposed filter started from lfilter_zi's steady state scaled by
// the first sample of each pass, and the extension cut off again. out may alias x.
type filtfilt struct {
	b, a []float64 // normalised so a[0] = 1, same length
	zi   []float64
	edge int
	ext  []float64 // scratch: the extended series
	z    []float64
}

func newFiltfilt(b, a []float64) (*filtfilt, error) {
	n := max(len(a), len(b))
	bb := make([]float64, n)
	aa := make([]float64, n)
	copy(bb, b)
	copy(aa, a)
	for i := range bb {
		bb[i] /= a[0]
	}
	for i := n - 1; i >= 0; i-- {
		aa[i] /= a[0]
	}
	// lfilter_zi: (I − companion(a)ᵀ)·zi = b[1:] − a[1:]·b[0].
	m := n - 1
	A := make([]float64, m*m)
	rhs := make([]float64, m)
	for i := 0; i < m; i++ {
		A[i*m+i] = 1
		A[i*m] += aa[i+1]
		if i+1 < m {
			A[i*m+i+1] -= 1
		}
		rhs[i] = bb[i+1] - aa[i+1]*bb[0]
	}
	if err := solveDense(A, rhs, m); err != nil {
		return nil, fmt.Errorf("butterworth filter: %w", err)
	}
	return &filtfilt{b: bb, a: aa, zi: rhs, edge: 3 * n, z: make([]float64, m)}, nil
}

// apply filters x (length t > edge) into out.
func (f *filtfilt) apply(out, x []float64) {
	t, e := len(x), f.edge
	if cap(f.ext) < t+2*e {
		f.ext = make([]float64, t+2*e)
	}
	ext := f.ext[:t+2*e]
	for i := 0; i < e; i++ {
		ext[i] = 2*x[0] - x[e-i]
		ext[e+t+i] = 2*x[t-1] - x[t-2-i]
	}
	copy(ext[e:], x)
	f.pass(ext, false)
	f.pass(ext, true)
	copy(out, ext[e:e+t])
}

// pass runs lfilter(b, a, y, zi=zi·y[0]) in place, over y reversed when back.
func (f *filtfilt) pass(y []float64, back bool) {
	n := len(y)
	at := func(i int) int {
		if back {
			return n - 1 - i
		}
		return i
	}
	z := f.z
	x0 := y[at(0)]
	for i := range z {
		z[i] = f.zi[i] * x0
	}
	b, a := f.b, f.a
	m := len(z)
	for i := 0; i < n; i++ {
		j := at(i)
		xi := y[j]
		yi := b[0]*xi + z[0]
		for q := 0; q < m-1; q++ {
			z[q] = b[q+1]*xi + z[q+1] - a[q+1]*yi
		}
		z[m-1] = b[m]*xi - a[m]*yi
		y[j] = yi
	}
}

// solveDense solves A·x = b (A m×m row-major, overwritten) in place by Gaussian elimination
// with partial pivoting (what LAPACK's gesv does).
func solveDense(A, b []float64, m int) error {
	for c := 0; c < m; c++ {
		p := c
		for r := c + 1; r < m; r++ {
			if math.Abs(A[r*m+c]) > math.Abs(A[p*m+c]) {
				p = r
			}
		}
		if A[p*m+c] == 0 {
			return fmt.Errorf("singular system")
		}
		if p != c {
			for k := 0; k < m; k++ {
				A[c*m+k], A[p*m+k] = A[p*m+k], A[c*m+k]
			}
			b[c], b[p] = b[p], b[c]
		}
		for r := c + 1; r < m; r++ {
			f := A[r*m+c] / A[c*m+c]
			if f == 0 {
				continue
			}
			for k := c; k < m; k++ {
				A[r*m+k] -= f * A[c*m+k]
			}
			b[r] -= f * b[c]
		}
	}
	for c := m - 1; c >= 0; c-- {
		s := b[c]
		for k := c + 1; k < m; k++ {
			s -= A[c*m+k] * b[k]
		}
		b[c] = s / A[c*m+c]
	}
	return nil
}
