package fc

import "math"

// slideUpdateGo is row[j] += xn·vn[j] − xo·vo[j]: the portable form of the sliding windows'
// rank-2 update of one tile row (sliding_amd64.s has the AVX2 one).
func slideUpdateGo(row, vn, vo []float64, xn, xo float64) {
	vn, vo = vn[:len(row)], vo[:len(row)]
	for j := range row {
		row[j] += xn*vn[j] - xo*vo[j]
	}
}

// slideTestGo is slideUpdateGo fused with the window's test c = row[j] − ai·as[j] (|c| with
// abs) > bi·ds[j], calling hit for each pair that passes.
func slideTestGo(row, vn, vo, as, ds []float64, xn, xo, ai, bi float64, abs bool, hit func(jj int, c float64)) {
	vn, vo, as, ds = vn[:len(row)], vo[:len(row)], as[:len(row)], ds[:len(row)]
	for j := range row {
		s := row[j] + xn*vn[j] - xo*vo[j]
		row[j] = s
		c := s - ai*as[j]
		v := c
		if abs {
			v = math.Abs(c)
		}
		if v > bi*ds[j] {
			hit(j, c)
		}
	}
}
