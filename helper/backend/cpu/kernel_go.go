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
