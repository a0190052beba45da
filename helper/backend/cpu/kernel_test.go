package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
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

// TestBinner: the division-free bin equals fc.Op.BinOf for random values and for values next
// to bin edges, on full, narrowed and |v| ranges.
func TestBinner(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, op := range []fc.Op{
		{Lo: -1, Hi: 1, Bins: 1 << 20}, {Lo: 0, Hi: 1, Bins: 1 << 20}, {Lo: 0.1713, Hi: 1, Bins: 1 << 20},
		{Lo: -1, Hi: 1, Bins: 1000}, {Lo: 0, Hi: 1, Bins: 37}, {Lo: 0.25, Hi: 1, Bins: 1 << 16},
	} {
		b := newBinner(&op)
		check := func(v float32) {
			if got, want := b.binOf(v), op.BinOf(v); got != want {
				t.Fatalf("op %+v: bin of %v = %d, BinOf %d", op, v, got, want)
			}
		}
		for i := 0; i < 200000; i++ {
			v := float32(rng.Float64()*2.2 - 1.1)
			check(v)
			e := float32(op.BinLower(rng.IntN(op.Bins + 1)))
			check(e)
			check(math.Nextafter32(e, 2))
			check(math.Nextafter32(e, -2))
		}
	}
}
