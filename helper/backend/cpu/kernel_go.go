package cpu

// kernelGo is the portable micro-kernel: the same tile as the assembly one, accumulated in
// float32 over k in order. It is the fallback for CPUs without AVX2/FMA and for -tags purego.
func kernelGo(l int, a, b []float32, c *[mr * nr]float32) {
	var acc [mr * nr]float32
	a = a[:l*mr]
	b = b[:l*nr]
	for k := 0; k < l; k++ {
		ak := a[k*mr : k*mr+mr : k*mr+mr]
		bk := b[k*nr : k*nr+nr : k*nr+nr]
		for r := 0; r < mr; r++ {
			x := ak[r]
			acc := acc[r*nr : r*nr+nr : r*nr+nr]
			for q, y := range bk {
				acc[q] += x * y
			}
		}
	}
	*c = acc
}

// tileMask replaces the tile by |v| if abs and returns bit 16·r+q (m0: rows 0–3, m1: rows
// 4–5) set where the value is ≥ t — what the assembly kernel computes in its epilogue.
func tileMask(c *[mr * nr]float32, t float32, abs bool) (m0, m1 uint64) {
	for i, v := range c {
		if abs {
			v = abs32(v)
			c[i] = v
		}
		if v >= t {
			if i < 4*nr {
				m0 |= 1 << i
			} else {
				m1 |= 1 << (i - 4*nr)
			}
		}
	}
	return m0, m1
}
