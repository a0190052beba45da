package fc

import (
	"math"
	"strconv"
)

func sqrtf64(x float64) float64 { return math.Sqrt(x) }

func itoa(i int) string { return strconv.Itoa(i) }
