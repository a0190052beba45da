package fc

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// TestThreshold32 checks Keep(v) ⇔ v ≥ Threshold32() for float32 values next to thresholds
// that are and are not representable in float32, strict and inclusive.
func TestThreshold32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	ths := []float64{0, 0.5, -0.25, 1, 0.164387, math.Inf(-1), math.Inf(1), 1e-40, -1e-40}
	for i := 0; i < 2000; i++ {
		ths = append(ths, rng.Float64()*2-1, float64(float32(rng.Float64()*2-1)))
	}
	for _, th := range ths {
		for _, inc := range []bool{false, true} {
			op := Op{Threshold: th, Inclusive: inc}
			t32 := op.Threshold32()
			c := float32(th)
			vs := []float32{c, math.Nextafter32(c, 2), math.Nextafter32(c, -2), t32, math.Nextafter32(t32, -2), 0, -1, 1}
			for _, v := range vs {
				if math.IsInf(float64(v), 0) {
					continue
				}
				if op.Keep(v) != (v >= t32) {
					t.Fatalf("threshold %v inclusive=%v: Keep(%v) = %v but Threshold32 = %v", th, inc, v, op.Keep(v), t32)
				}
			}
		}
	}
}

// TestRanks compares the sort-based Ranker with the counting formula Less + (1 + Equal)/2 on
// tie-heavy series.
func TestRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	var rk Ranker
	for it := 0; it < 200; it++ {
		l := 3 + rng.IntN(60)
		d := make([]float32, l)
		for i := range d {
			d[i] = float32(rng.IntN(1 + it%7))
		}
		got := make([]float32, l)
		rk.Ranks(got, d)
		for k, v := range d {
			less, equal := 0, 0
			for _, w := range d {
				if w < v {
					less++
				} else if w == v {
					equal++
				}
			}
			if want := float64(less) + float64(1+equal)/2; float64(got[k]) != want {
				t.Fatalf("rank of %v in %v = %v, want %v", v, d, got[k], want)
			}
		}
	}
}

// TestSignVectors checks that the bit-plane dot equals the int8 sign-vector dot and that
// n counts the non-tied pairs, for lengths around word boundaries.
func TestSignVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, l := range []int{3, 4, 11, 12, 13, 64, 65, 100} {
		p := SignPairs(l)
		w := (p + 63) / 64
		a, b := make([]float32, l), make([]float32, l)
		for i := range a {
			a[i], b[i] = float32(rng.IntN(4)), float32(rng.IntN(4))
		}
		za, zb := make([]int8, p), make([]int8, p)
		na, nb := SignVector(za, a), SignVector(zb, b)
		var dot int64
		for k := range za {
			dot += int64(za[k]) * int64(zb[k])
		}
		pa, ga, pb, gb := make([]uint64, w), make([]uint64, w), make([]uint64, w), make([]uint64, w)
		if n := SignBitPlanes(pa, ga, a); n != na {
			t.Fatalf("L=%d: bit planes count %d non-zero, sign vector %d", l, n, na)
		}
		SignBitPlanes(pb, gb, b)
		if got := SignDot(pa, ga, pb, gb); got != dot {
			t.Fatalf("L=%d: bit-plane dot %d, int8 dot %d", l, got, dot)
		}
		ties := int64(0)
		for k := 0; k < l; k++ {
			for q := k + 1; q < l; q++ {
				if b[k] == b[q] {
					ties++
				}
			}
		}
		if nb != int64(p)-ties {
			t.Fatalf("L=%d: n = %d, want P − ties = %d", l, nb, int64(p)-ties)
		}
	}
}

func TestCheckSeries(t *testing.T) {
	x := []float32{1, 2, 3, 4, 4, 4, 1, float32(math.NaN()), 2}
	err := CheckSeries(x, 3, 3)
	se, ok := err.(*SeriesError)
	if !ok || se.ZeroVariance != 1 || se.NonFinite != 1 || se.Rows[0] != 1 || se.Rows[1] != 2 {
		t.Fatalf("CheckSeries: %v", err)
	}
	if err := CheckSeries(x[:6], 2, 3); err == nil || !strings.Contains(err.Error(), "zero-variance") {
		t.Fatalf("constant row not reported: %v", err)
	}
	if err := CheckSeries(x, 2, 3); err == nil {
		t.Fatal("length mismatch accepted")
	}
}

// TestPValueScipy compares PValue with scipy's two-sided t (L−2 dof) and normal tails, and
// CriticalValue with the inverse, down to p ≈ 1e-12 (Bonferroni over 10⁸ tests).
func TestPValueScipy(t *testing.T) {
	pyref.Require(t, "scipy")
	const script = `
import sys
from scipy import stats
import numpy as np
for line in sys.stdin.read().split(";"):
    if not line: continue
    m, a, l = line.split(",")
    a, l = float(a), int(l)
    if m == "k":
        z = 3*a*np.sqrt(l*(l-1))/np.sqrt(2*(2*l+5)); print(2*stats.norm.sf(z))
    else:
        t = a*np.sqrt((l-2)/(1-a*a)); print(2*stats.t.sf(t, l-2))
`
	type q struct {
		m Measure
		a float64
		l int
	}
	var qs []q
	var in strings.Builder
	for _, l := range []int{3, 10, 121, 200, 1452} {
		for _, a := range []float64{0.01, 0.1, 0.3, 0.5, 0.9, 0.99} {
			for _, m := range []Measure{Pearson, Kendall} {
				qs = append(qs, q{m, a, l})
				c := "r"
				if m == Kendall {
					c = "k"
				}
				in.WriteString(c + "," + strconv.FormatFloat(a, 'g', -1, 64) + "," + strconv.Itoa(l) + ";")
			}
		}
	}
	out := strings.Fields(string(pyref.Run(t, "import sys; sys.stdin = __import__('io').StringIO(sys.argv[1])\n"+script, in.String())))
	for i, c := range qs {
		want, _ := strconv.ParseFloat(out[i], 64)
		got := PValue(c.m, c.a, c.l)
		if want < 1e-300 {
			continue
		}
		if math.Abs(got-want) > 1e-9*want+1e-300 {
			t.Errorf("PValue(%v, %v, L=%d) = %v, scipy %v", c.m, c.a, c.l, got, want)
		}
		if want > 1e-14 && want < 0.9 {
			if a := CriticalValue(c.m, want, c.l); math.Abs(a-c.a) > 1e-7 {
				t.Errorf("CriticalValue(%v, %v, L=%d) = %v, want %v", c.m, want, c.l, a, c.a)
			}
		}
	}
}

// TestAssembler feeds blocks out of order and checks the CSR, including extra edges merged
// into rows.
func TestAssembler(t *testing.T) {
	n, rows := 10, 4
	blocks := PlanBlocks(n, rows)
	a := newAssembler(n, rows, func(e Edge) edgeClass {
		if e.W < 0 {
			return hold
		}
		return keep
	})
	want := map[[2]int]float32{}
	for k := len(blocks) - 1; k >= 0; k-- {
		b := blocks[k]
		var es []Edge
		for i := b.I0; i < b.I1; i++ {
			for j := max(b.J0, i+1); j < b.J1; j++ {
				if (i*7+j*3)%4 == 0 {
					w := float32(i*n + j)
					if j%5 == 0 {
						w = -w
					}
					es = append(es, Edge{uint32(i), uint32(j), w})
				}
			}
		}
		for _, e := range es {
			if e.W > 0 {
				want[[2]int{int(e.I), int(e.J)}] = e.W
			}
		}
		if err := a.add(&BlockResult{Block: b, Edges: es}); err != nil {
			t.Fatal(err)
		}
	}
	extra := []Edge{{0, 5, 1.5}, {3, 8, 2.5}, {6, 9, 3.5}} // pairs the blocks did not emit
	for _, e := range extra {
		want[[2]int{int(e.I), int(e.J)}] = e.W
	}
	nw, err := a.finish(extra)
	if err != nil {
		t.Fatal(err)
	}
	if err := nw.Validate(); err != nil {
		t.Fatal(err)
	}
	if nw.Edges() != int64(len(want)) {
		t.Fatalf("%d edges, want %d", nw.Edges(), len(want))
	}
	for i := 0; i < n; i++ {
		cols, ws := nw.Row(i)
		for k, j := range cols {
			if w, ok := want[[2]int{i, int(j)}]; !ok || w != ws[k] {
				t.Fatalf("edge (%d,%d) = %v, want %v (present %v)", i, j, ws[k], w, ok)
			}
		}
	}
	if len(a.held) == 0 {
		t.Fatal("held edges not collected")
	}
	if err := a.add(&BlockResult{Block: blocks[0]}); err == nil {
		t.Fatal("a block delivered twice was accepted")
	}
}
