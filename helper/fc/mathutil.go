package fc

import (
	"math"
	"strconv"
)

func sqrtf64(x float64) float64 { return math.Sqrt(x) }

func itoa(i int) string { return strconv.Itoa(i) }

// Dot is Σ x_t·y_t with four independent partial sums (one running sum is latency-bound:
// each add waits for the previous one). y must be at least as long as x.
func Dot[T float32 | float64](x, y []T) T {
	y = y[:len(x)]
	var s0, s1, s2, s3 T
	t := 0
	for ; t+4 <= len(x); t += 4 {
		s0 += x[t] * y[t]
		s1 += x[t+1] * y[t+1]
		s2 += x[t+2] * y[t+2]
		s3 += x[t+3] * y[t+3]
	}
	for ; t < len(x); t++ {
		s0 += x[t] * y[t]
	}
	return (s0 + s1) + (s2 + s3)
}
