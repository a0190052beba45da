// Package fctest is the conformance suite every fc.Backend passes (ARCHITECTURE.md: "every
// backend passes the same conformance tests against a float64 reference"), in the spirit of
// ggml's test-backend-ops: the suite computes each measure itself in float64 (ranks by the
// counting formula, Kendall by an explicit loop over time-point pairs), runs the backend's
// operations directly and through fc.Build, and compares.
//
// Call it from a backend's tests:
//
//	func TestConformance(t *testing.T) {
//		fctest.Run(t, func(t *testing.T) fc.Backend { return cpu.New(cpu.Options{}) })
//	}
package fctest

import (
	"math"
	"math/rand/v2"

	"github.com/hubscope/hubscope/helper/fc"
)

// Dataset is one N×L test matrix.
type Dataset struct {
	Name string
	N, L int
	X    []float32
}

// Gaussian returns seeded data with block structure: nodes belong to one of c clusters whose
// members share a common signal, so that strong positive and negative links exist.
func Gaussian(name string, n, l, clusters int, seed uint64) Dataset {
	rng := rand.New(rand.NewPCG(seed, 17))
	f := make([]float64, clusters*l)
	for i := range f {
		f[i] = rng.NormFloat64()
	}
	x := make([]float32, n*l)
	for i := 0; i < n; i++ {
		c := i % clusters
		a := 0.3 + 0.7*rng.Float64()
		if rng.IntN(4) == 0 {
			a = -a // anti-correlated members
		}
		for t := 0; t < l; t++ {
			x[i*l+t] = float32(a*f[c*l+t] + rng.NormFloat64())
		}
	}
	return Dataset{Name: name, N: n, L: l, X: x}
}

// Ties returns int16-like seeded data with few distinct levels, so that ranks and sign
// vectors carry many ties and Kendall/Spearman values repeat exactly across pairs; every 5th
// row is continuous (tie-free), so tied and tie-free rows meet (backends may special-case
// tie-free sign vectors). No row is constant.
func Ties(name string, n, l, levels int, seed uint64) Dataset {
	rng := rand.New(rand.NewPCG(seed, 29))
	x := make([]float32, n*l)
	for i := 0; i < n; i++ {
		for {
			for t := 0; t < l; t++ {
				x[i*l+t] = float32(1000 + 7*rng.IntN(levels))
				if i%5 == 0 {
					x[i*l+t] = float32(1000 + 7*rng.NormFloat64())
				}
			}
			if fc.CheckSeries(x[i*l:(i+1)*l], 1, l) == nil {
				break
			}
		}
	}
	return Dataset{Name: name, N: n, L: l, X: x}
}

// Reference holds every pair's value computed in float64 (Kendall: fc.KendallTau of the exact
// integer dot product). It is N×N, fine for the suite's small N.
type Reference struct {
	N, L int
	M    fc.Measure
	V    []float64 // V[i*N+j], i < j
}

// At is the reference value of pair (i, j), i ≠ j.
func (r *Reference) At(i, j int) float64 {
	if i > j {
		i, j = j, i
	}
	return r.V[i*r.N+j]
}

// NewReference computes the measure for all pairs of d.
func NewReference(d Dataset, m fc.Measure) *Reference {
	r := &Reference{N: d.N, L: d.L, M: m, V: make([]float64, d.N*d.N)}
	n, l := d.N, d.L
	row := func(i int) []float32 { return d.X[i*l : (i+1)*l] }
	if m == fc.Kendall {
		cnt := make([]int64, n)
		for i := 0; i < n; i++ {
			s := row(i)
			for k := 0; k < l; k++ {
				for q := k + 1; q < l; q++ {
					if s[k] != s[q] {
						cnt[i]++
					}
				}
			}
		}
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				a, b := row(i), row(j)
				var dot int64
				for k := 0; k < l; k++ {
					for q := k + 1; q < l; q++ {
						dot += int64(sign(a[k]-a[q]) * sign(b[k]-b[q]))
					}
				}
				r.V[i*n+j] = float64(fc.KendallTau(dot, cnt[i], cnt[j]))
			}
		}
		return r
	}
	u := make([]float64, n*l)
	for i := 0; i < n; i++ {
		s := make([]float64, l)
		for t, v := range row(i) {
			s[t] = float64(v)
		}
		if m == fc.Spearman {
			s = countRanks(s)
		}
		var mean float64
		for _, v := range s {
			mean += v
		}
		mean /= float64(l)
		var ss float64
		for _, v := range s {
			ss += (v - mean) * (v - mean)
		}
		for t, v := range s {
			u[i*l+t] = (v - mean) / math.Sqrt(ss)
		}
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var dot float64
			for t := 0; t < l; t++ {
				dot += u[i*l+t] * u[j*l+t]
			}
			r.V[i*n+j] = dot
		}
	}
	return r
}

func sign(x float32) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// countRanks is Zhao et al.'s per-element formula rank = Less + (1 + Equal)/2, O(L²): an
// independent formulation from fc.Ranker's sort.
func countRanks(s []float64) []float64 {
	out := make([]float64, len(s))
	for k, v := range s {
		var less, equal float64
		for _, w := range s {
			if w < v {
				less++
			} else if w == v {
				equal++
			}
		}
		out[k] = less + (1+equal)/2
	}
	return out
}
