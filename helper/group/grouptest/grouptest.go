// Package grouptest makes cohorts for the group network's tests — the CPU engine's (package
// group) and the CUDA backend's — and their float64 reference: one fixture, so both engines
// are checked on the same kind of data against the same definition.
package grouptest

import (
	"math"
	"math/rand/v2"

	"github.com/hubscope/hubscope/helper/fc"
)

// Series makes S subjects' N×L series sharing a block structure (node i follows signal i mod
// 5 with its own amplitude, plus noise), concatenated along time as group.Load does (row i is
// N × S·L: subject k's part at k·L). ties rounds them to a few levels (Spearman's average
// ranks). No subject's row is constant.
func Series(n, s, l int, seed uint64, ties bool) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, n*s*l)
	for k := 0; k < s; k++ {
		sig := make([][]float64, 5)
		for g := range sig {
			sig[g] = make([]float64, l)
			for t := range sig[g] {
				sig[g][t] = rng.NormFloat64()
			}
		}
		for i := 0; i < n; i++ {
			a := 0.3 + 1.5*rng.Float64()
			for t := 0; t < l; t++ {
				v := a*sig[i%5][t] + rng.NormFloat64()
				if ties {
					v = math.Round(v * 1.5)
				}
				x[i*s*l+k*l+t] = float32(v)
			}
		}
		for i := 0; i < n; i++ {
			d := x[i*s*l+k*l : i*s*l+(k+1)*l]
			if d[0] == d[1] {
				d[0]++
			}
		}
	}
	return x
}

// Reference is every pair i < j's group value at [i·N + j], in float64 from float64
// normalisation of each subject's part (ranks for Spearman: fc.Ranker's average ranks, exact
// in float32): the mean over subjects of r when zClamp is 0, else the mean Fisher z of r
// clamped to ±zClamp (group.ZClamp), back on the r scale with tanh.
func Reference(x []float32, n, s, l int, m fc.Measure, zClamp float64) []float64 {
	us := make([][]float64, n*s) // row i·s + k
	var rk fc.Ranker
	tmp := make([]float32, l)
	for i := 0; i < n; i++ {
		for k := 0; k < s; k++ {
			d := x[i*s*l+k*l : i*s*l+(k+1)*l]
			if m == fc.Spearman {
				rk.Ranks(tmp, d)
				d = tmp
			}
			var mean float64
			for _, v := range d {
				mean += float64(v)
			}
			mean /= float64(l)
			u := make([]float64, l)
			var ss float64
			for t, v := range d {
				u[t] = float64(v) - mean
				ss += u[t] * u[t]
			}
			for t := range u {
				u[t] /= math.Sqrt(ss)
			}
			us[i*s+k] = u
		}
	}
	ref := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var acc float64
			for k := 0; k < s; k++ {
				var r float64
				a, b := us[i*s+k], us[j*s+k]
				for t := range a {
					r += a[t] * b[t]
				}
				if zClamp > 0 {
					r = math.Atanh(math.Max(-zClamp, math.Min(zClamp, r)))
				}
				acc += r
			}
			ref[i*n+j] = acc / float64(s)
			if zClamp > 0 {
				ref[i*n+j] = math.Tanh(ref[i*n+j])
			}
		}
	}
	return ref
}
