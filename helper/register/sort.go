package register

import "sort"

func sortFloats(s []float64) { sort.Float64s(s) }
