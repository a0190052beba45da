package fc

import "math"

func sqrtf64(x float64) float64 { return math.Sqrt(x) }
