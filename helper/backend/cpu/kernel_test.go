package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernel compares the micro-kernel in use (AVX2 or portable) with a float64 product of
// the same packed panels, for k from 1 to 300.
func TestKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, l := range []int{1, 2, 3, 17, 200, 301} {
		a := make([]float32, l*mr)
		b := make([]float32, l*nr)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		var c, cm [mr * nr]float32
		kernel(l, a, b, &c)
		for _, abs := range []bool{false, true} {
			for _, th := range []float32{-1e9, 0, 0.5, c[17], c[90], 1e9} {
				m0, m1 := kernelMask(l, a, b, &cm, th, abs)
				for i, v := range c {
					if abs {
						v = abs32(v)
					}
					bit := m0>>i&1 == 1
					if i >= 64 {
						bit = m1>>(i-64)&1 == 1
					}
					if cm[i] != v || bit != (v >= th) {
						t.Fatalf("%s kernelMask(l=%d, t=%v, abs=%v) entry %d: value %v mask %v, want %v, %v", kernelName, l, th, abs, i, cm[i], bit, v, v >= th)
					}
				}
			}
		}
		for r := 0; r < mr; r++ {
			for q := 0; q < nr; q++ {
				var want, mag float64
				for k := 0; k < l; k++ {
					p := float64(a[k*mr+r]) * float64(b[k*nr+q])
					want += p
					mag += math.Abs(p)
				}
				if got := float64(c[r*nr+q]); math.Abs(got-want) > 1e-6*mag+1e-30 {
					t.Fatalf("%s kernel, l=%d, tile (%d,%d) = %v, float64 product %v", kernelName, l, r, q, got, want)
				}
			}
		}
	}
}
