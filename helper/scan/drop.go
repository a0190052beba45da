package scan

import (
	"fmt"
	"math"

	"github.com/hubscope/hubscope/helper/progress"
)

// dropBadSeries removes, in place and keeping their order, the rows of the n×l matrix data
// whose series has a NaN or ±Inf value (NonFinite) or is constant (ZeroVariance: Pearson's r
// and the rank measures are undefined for it). It returns the original indices of the kept
// rows; data[:len(kept)*l] then holds their series.
func dropBadSeries(data []float32, n, l int) (kept []int, st DropStats) {
	kept = make([]int, 0, n)
	for v := 0; v < n; v++ {
		row := data[v*l : (v+1)*l]
		finite, constant := true, true
		x0 := row[0]
		for _, x := range row {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				finite = false
				break
			}
			if x != x0 {
				constant = false
			}
		}
		switch {
		case !finite:
			st.NonFinite++
		case constant:
			st.ZeroVariance++
		default:
			if w := len(kept); w != v {
				copy(data[w*l:(w+1)*l], row)
			}
			kept = append(kept, v)
		}
	}
	return kept, st
}

// noteDropped tells the user how many series were left out and why.
func noteDropped(rep progress.Reporter, path, what string, d DropStats) {
	if d.ZeroVariance == 0 && d.NonFinite == 0 {
		return
	}
	rep.Note(fmt.Sprintf("%s: dropped %d of %d %s: %d with constant series (zero variance), %d with NaN/Inf values",
		path, d.ZeroVariance+d.NonFinite, d.MaskVoxels, what, d.ZeroVariance, d.NonFinite))
}
