//go:build amd64 && !purego

package fc

import "golang.org/x/sys/cpu"

// slideAVX2 selects the assembly kernels of the incremental sliding windows (sliding_amd64.s):
// AVX2 and FMA3 with the OS saving the ymm registers.
var slideAVX2 = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func slideUpdateAVX2(row, vn, vo *float64, n int, xn, xo float64)

//go:noescape
func slideTestAVX2(row, vn, vo, as, ds *float64, n int, xn, xo, ai, bi float64, abs bool, hits *int32) int

// slideUpdate is row[j] += xn·vn[j] − xo·vo[j] over len(row).
func slideUpdate(row, vn, vo []float64, xn, xo float64) {
	m := len(row) &^ 3
	if slideAVX2 && m > 0 {
		_, _ = vn[m-1], vo[m-1]
		slideUpdateAVX2(&row[0], &vn[0], &vo[0], m, xn, xo)
	} else {
		m = 0
	}
	slideUpdateGo(row[m:], vn[m:], vo[m:], xn, xo)
}

// slideTest is slideUpdate fused with the test; it calls hit(jj) for every jj with
// c = row[jj] − ai·as[jj] (|c| with abs) > bi·ds[jj], in increasing jj.
func slideTest(row, vn, vo, as, ds []float64, xn, xo, ai, bi float64, abs bool, hits []int32, hit func(jj int, c float64)) {
	m := len(row) &^ 3
	if slideAVX2 && m > 0 {
		_, _, _, _, _ = vn[m-1], vo[m-1], as[m-1], ds[m-1], hits[m/4-1]
		k := slideTestAVX2(&row[0], &vn[0], &vo[0], &as[0], &ds[0], m, xn, xo, ai, bi, abs, &hits[0])
		for _, h := range hits[:k] {
			j0, mask := int(h>>4)*4, h&15
			for l := 0; l < 4; l++ {
				if mask&(1<<l) != 0 {
					hit(j0+l, row[j0+l]-ai*as[j0+l])
				}
			}
		}
	} else {
		m = 0
	}
	slideTestGo(row[m:], vn[m:], vo[m:], as[m:], ds[m:], xn, xo, ai, bi, abs, func(jj int, c float64) { hit(m+jj, c) })
}
