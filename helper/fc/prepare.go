package fc

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
)

// SeriesError reports rows that cannot enter a correlation: constant series (zero variance,
// r undefined) or series holding NaN/Inf. Rows lists up to the first 10 offending rows.
type SeriesError struct {
	ZeroVariance, NonFinite int
	Rows                    []int
}

func (e *SeriesError) Error() string {
	return fmt.Sprintf("fc: %d zero-variance and %d non-finite series (rows %v…); drop them before building a network",
		e.ZeroVariance, e.NonFinite, e.Rows)
}

// CheckSeries validates the N×L matrix x: len(x) = N·L, L ≥ 3, and every row finite and
// non-constant. Constancy is tested exactly (all values equal), not by a float variance,
// since a float64 mean of equal values may round and fake a tiny spread.
func CheckSeries(x []float32, n, l int) error {
	if err := checkShape(x, n, l); err != nil {
		return err
	}
	// Rows in contiguous ranges over up to GOMAXPROCS workers (W2's 200,000 × 128 took ~25 ms
	// in one goroutine, 5 % of a GPU build); the ranges' findings are joined in row order, so
	// Rows is the first offending rows whatever the split.
	parts := min(runtime.GOMAXPROCS(0), max(1, n*l/(1<<18)))
	found := make([]SeriesError, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			checkRows(&found[p], x, l, n*p/parts, n*(p+1)/parts)
		}()
	}
	wg.Wait()
	var e SeriesError
	for _, f := range found {
		e.ZeroVariance += f.ZeroVariance
		e.NonFinite += f.NonFinite
		e.Rows = append(e.Rows, f.Rows[:min(len(f.Rows), 10-len(e.Rows))]...)
	}
	if e.NonFinite+e.ZeroVariance > 0 {
		return &e
	}
	return nil
}

// checkShape is CheckSeries's test of the matrix's shape alone.
func checkShape(x []float32, n, l int) error {
	if n < 1 || l < 3 {
		return fmt.Errorf("fc: need at least 1 series of length ≥ 3, got N=%d, L=%d", n, l)
	}
	if len(x) != n*l {
		return fmt.Errorf("fc: series matrix has %d values, want N·L = %d·%d = %d", len(x), n, l, n*l)
	}
	return nil
}

// checkRows adds rows [i0, i1) of x that hold NaN/Inf or are constant to e (up to 10 in Rows).
func checkRows(e *SeriesError, x []float32, l, i0, i1 int) {
	for i := i0; i < i1; i++ {
		row := x[i*l : (i+1)*l]
		first := row[0]
		finite, constant := true, true
		for _, v := range row {
			if math.Float32bits(v)&0x7f800000 == 0x7f800000 { // all exponent bits: NaN or ±Inf
				finite = false
			}
			if v != first {
				constant = false
			}
		}
		switch {
		case !finite:
			e.NonFinite++
		case constant:
			e.ZeroVariance++
		default:
			continue
		}
		if len(e.Rows) < 10 {
			e.Rows = append(e.Rows, i)
		}
	}
}

// NormalizeRow writes p = (d − mean)/‖d − mean‖₂ (docs/algorithms.md, "Connectivity measures") into dst, accumulating the
// mean and the norm in float64 so that the float32 unit row is correctly rounded to ~1 ulp.
func NormalizeRow(dst, d []float32) {
	var s float64
	for _, v := range d {
		s += float64(v)
	}
	mean := s / float64(len(d))
	var ss float64
	for _, v := range d {
		c := float64(v) - mean
		ss += c * c
	}
	inv := 1 / math.Sqrt(ss)
	for k, v := range d {
		dst[k] = float32((float64(v) - mean) * inv)
	}
}

// NormalizeRows writes the unit rows of the N×L matrix x into dst (len N·L) for Pearson.
func NormalizeRows(dst, x []float32, n, l int) {
	for i := 0; i < n; i++ {
		NormalizeRow(dst[i*l:(i+1)*l], x[i*l:(i+1)*l])
	}
}

// Ranker computes average ranks, rank = Less + (1 + Equal)/2 (Zhao et al.), by sorting: in the
// sorted order a run of t equal values starting at position s (0-based) has Less = s and
// Equal = t, so every member gets s + (1+t)/2 — exactly the counting formula. The scratch is
// reused between calls; a Ranker is not safe for concurrent use.
type Ranker struct{ idx []int32 }

// Ranks writes the average ranks of d (1..L, halves for ties) into dst.
func (r *Ranker) Ranks(dst, d []float32) {
	l := len(d)
	if cap(r.idx) < l {
		r.idx = make([]int32, l)
	}
	idx := r.idx[:l]
	for k := range idx {
		idx[k] = int32(k)
	}
	sort.Slice(idx, func(a, b int) bool { return d[idx[a]] < d[idx[b]] })
	for s := 0; s < l; {
		t := s + 1
		for t < l && d[idx[t]] == d[idx[s]] {
			t++
		}
		rank := float32(float64(s) + float64(1+t-s)/2)
		for q := s; q < t; q++ {
			dst[idx[q]] = rank
		}
		s = t
	}
}

// RankRows writes the unit rows of the ranks of x into dst (len N·L): Spearman's ρ is then the
// dot product of two rows, as Pearson's r is for NormalizeRows.
func RankRows(dst, x []float32, n, l int) {
	var rk Ranker
	ranks := make([]float32, l)
	for i := 0; i < n; i++ {
		rk.Ranks(ranks, x[i*l:(i+1)*l])
		NormalizeRow(dst[i*l:(i+1)*l], ranks)
	}
}

// SignPairs is P = L(L−1)/2, the length of a Kendall sign vector.
func SignPairs(l int) int { return l * (l - 1) / 2 }

// SignVector writes z_k,q = sign(d_k − d_q) over all k < q (docs/algorithms.md, "Connectivity measures") into dst
// (len SignPairs(L)), in the order (0,1), (0,2), …, (0,L−1), (1,2), …, and returns n = the
// number of non-zero entries (pairs not tied in d).
func SignVector(dst []int8, d []float32) (n int64) {
	p := 0
	for k := 0; k < len(d); k++ {
		a := d[k]
		for q := k + 1; q < len(d); q++ {
			var s int8
			switch b := d[q]; {
			case a > b:
				s = 1
			case a < b:
				s = -1
			}
			dst[p] = s
			if s != 0 {
				n++
			}
			p++
		}
	}
	return n
}

// SignBitPlanes packs the sign vector of d into two bit planes, pos (z = +1) and neg (z = −1),
// of ceil(P/64) words each, bit p of the planes being pair p in SignVector's order. The exact
// integer dot of two sign vectors is then
//
//	z_i·z_j = popcnt(pos_i∧pos_j) + popcnt(neg_i∧neg_j) − popcnt(pos_i∧neg_j) − popcnt(neg_i∧pos_j).
//
// It returns the non-zero count n.
func SignBitPlanes(pos, neg []uint64, d []float32) (n int64) {
	for w := range pos {
		pos[w], neg[w] = 0, 0
	}
	p := 0
	for k := 0; k < len(d); k++ {
		a := d[k]
		for q := k + 1; q < len(d); q++ {
			b := d[q]
			if a > b {
				pos[p>>6] |= 1 << (p & 63)
				n++
			} else if a < b {
				neg[p>>6] |= 1 << (p & 63)
				n++
			}
			p++
		}
	}
	return n
}
