package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// bandBins lists the Fourier frequencies k/(L·TR), k = 1..⌊L/2⌋, that lie in the signal band.
func bandBins(p Params) []int {
	var ks []int
	for k := 1; k <= p.Length/2; k++ {
		f := float64(k) / (float64(p.Length) * p.TR)
		if f >= p.LowHz && f <= p.HighHz {
			ks = append(ks, k)
		}
	}
	return ks
}

// bandDimension is the dimension of the space of real band-limited series of length L: two
// (cosine and sine) per frequency in the band, one at the Nyquist frequency, where the sine
// vanishes at every sample.
func bandDimension(p Params) int {
	d := 0
	for _, k := range bandBins(p) {
		if 2*k == p.Length {
			d++
		} else {
			d += 2
		}
	}
	return d
}

// moduleSignals draws the M module signals: for every frequency k in the band,
// s(t) = Σ_k a_k cos(2πkt/L) + b_k sin(2πkt/L) with a_k, b_k ~ N(0, 1) — white noise with every
// Fourier coefficient outside the band set to zero — then orthonormalised by modified
// Gram–Schmidt and scaled to zero mean and unit variance (Σ_t s(t)² = L). Linear combinations
// of band-limited series stay in the band, so the orthogonalisation keeps the spectrum.
func moduleSignals(p Params, rng *rand.Rand) ([][]float64, error) {
	L := p.Length
	// cos and sin of 2πj/L; the phase of frequency k at time t is (k·t mod L), taken exactly in
	// integers so that long series do not lose precision in the argument.
	cosTab, sinTab := make([]float64, L), make([]float64, L)
	for j := range L {
		cosTab[j] = math.Cos(2 * math.Pi * float64(j) / float64(L))
		sinTab[j] = math.Sin(2 * math.Pi * float64(j) / float64(L))
	}
	bins := bandBins(p)
	sig := make([][]float64, p.Modules)
	for m := range sig {
		s := make([]float64, L)
		for _, k := range bins {
			a, b := rng.NormFloat64(), rng.NormFloat64()
			for t := range s {
				j := k * t % L
				s[t] += float64(a*cosTab[j]) + float64(b*sinTab[j])
			}
		}
		sig[m] = s
	}
	for m, s := range sig {
		mean := 0.0
		for _, x := range s {
			mean += x
		}
		mean /= float64(L)
		for t := range s {
			s[t] -= mean
		}
		for _, prev := range sig[:m] {
			proj := dot(s, prev) / float64(L) // prev has Σ prev² = L
			for t := range s {
				s[t] -= float64(proj * prev[t])
			}
		}
		norm := math.Sqrt(dot(s, s) / float64(L))
		if !(norm > 1e-9) {
			return nil, fmt.Errorf("synth: module signal %d is degenerate after orthogonalisation (band too narrow for %d modules)", m+1, p.Modules)
		}
		for t := range s {
			s[t] /= norm
		}
	}
	return sig, nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i] * b[i])
	}
	return s
}
