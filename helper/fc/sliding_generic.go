//go:build !amd64 || purego

package fc

func slideUpdate(row, vn, vo []float64, xn, xo float64) { slideUpdateGo(row, vn, vo, xn, xo) }

func slideTest(row, vn, vo, as, ds []float64, xn, xo, ai, bi float64, abs bool, _ []int32, hit func(jj int, c float64)) {
	slideTestGo(row, vn, vo, as, ds, xn, xo, ai, bi, abs, hit)
}
