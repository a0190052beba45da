package fc

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestKthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ n, levels int }{{1, 0}, {2, 0}, {7, 0}, {1000, 0}, {1000, 3}, {5000, 1}, {5000, 40}} {
		v := make([]float64, c.n)
		for i := range v {
			if c.levels > 0 {
				v[i] = float64(rng.IntN(c.levels)) // ties
			} else {
				v[i] = rng.NormFloat64()
			}
		}
		want := slices.Clone(v)
		slices.Sort(want)
		slices.Reverse(want)
		for _, r := range []int{0, c.n / 3, c.n / 2, c.n - 1} {
			w := slices.Clone(v)
			if got := KthLargest(w, r); got != want[r] {
				t.Fatalf("n=%d levels=%d rank %d: %v, want %v", c.n, c.levels, r, got, want[r])
			}
			slices.Sort(w)
			s := slices.Clone(v)
			slices.Sort(s)
			if !slices.Equal(w, s) {
				t.Fatalf("n=%d: selection lost values", c.n)
			}
		}
	}
}

func TestSampleNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct{ n, s int }{{50, 50}, {51, 50}, {1000, 600}, {200000, 600}} {
		got := sampleNodes(rng, c.n, c.s)
		if len(got) != c.s || got[0] < 0 || got[c.s-1] >= c.n {
			t.Fatalf("n=%d s=%d: %d nodes in [%d, %d]", c.n, c.s, len(got), got[0], got[len(got)-1])
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("n=%d s=%d: nodes not distinct and increasing at %d: %d, %d", c.n, c.s, i, got[i-1], got[i])
			}
		}
	}
}

// TestSampleBoundsBelowKth: on data with and without node effects (a shared signal of
// varying strength makes some nodes hubs), both bounds lie below the k-th largest of all
// pairs, the wide one below the tight one, and the tight one keeps few more than k pairs.
func TestSampleBoundsBelowKth(t *testing.T) {
	n, l := 1500, 40
	for _, hubs := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, 7))
		x := make([]float32, n*l)
		common := make([]float64, l)
		for q := range common {
			common[q] = rng.NormFloat64()
		}
		for i := 0; i < n; i++ {
			g := 0.0
			if hubs {
				g = 1.5 * math.Pow(rng.Float64(), 3) // most nodes weak, a few strongly coupled
			}
			for q := 0; q < l; q++ {
				x[i*l+q] = float32(rng.NormFloat64() + g*common[q])
			}
		}
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		for _, meas := range []Measure{Pearson, Kendall} {
			vals := sampleValues(meas, false, all, x, l) // every pair
			for _, dens := range []float64{0.001, 0.01, 0.1} {
				d := &driver{x: x, n: n, l: l, cfg: Config{Measure: meas, Mode: Density, Density: dens}, rpt: &Report{}}
				m := d.pairs()
				k := int64(math.Round(dens * float64(m)))
				sb, ok := d.sampleBounds(k, m)
				if !ok || !sb.wideOK {
					t.Fatalf("hubs %v %s density %g: no bounds", hubs, meas, dens)
				}
				kth := KthLargest(vals, int(k-1))
				above := 0
				for _, v := range vals {
					if v >= sb.tight {
						above++
					}
				}
				if !(sb.wide <= sb.tight && sb.tight <= kth) {
					t.Errorf("hubs %v %s density %g: wide %.5f, tight %.5f, k-th value %.5f", hubs, meas, dens, sb.wide, sb.tight, kth)
				}
				t.Logf("hubs %v %s density %g: k = %d, %d pairs ≥ tight bound (%.2f k), wide at %.2f k",
					hubs, meas, dens, k, above, float64(above)/float64(k), sb.wideFrac*float64(m)/float64(k))
			}
		}
	}
}

// TestDensityStagedFallback: a tight bound above the k-th value and a wide one below it must
// take one repeated histogram (over [wide, h]); both above it, two (the last over the full
// range); the network is always the full-range histogram method's.
func TestDensityStagedFallback(t *testing.T) {
	n, l := 120, 30
	x := randomSeries(n, l, 4)
	for _, abs := range []bool{false, true} {
		base := Config{Mode: Density, Density: 0.1, Abs: abs, Bins: 1 << 12, DensityMethod: DensityHistogram}
		want, rpt, err := Build(context.Background(), &naive{}, x, n, l, base, nil)
		if err != nil {
			t.Fatal(err)
		}
		thr := rpt.Threshold
		for _, c := range []struct {
			tight, wide float64
			repeats     int
		}{{thr - 0.02, thr - 0.05, 0}, {thr + 0.05, thr - 0.05, 1}, {thr + 0.1, thr + 0.05, 2}, {thr + 1e-4, thr - 1e-4, 1}} {
			sampleOverride = func(sampleBounds) sampleBounds {
				return sampleBounds{tight: c.tight, wide: c.wide, wideOK: true}
			}
			cfg := base
			cfg.DensityMethod = DensityTwoPass
			got, rpt, err := Build(context.Background(), &naive{}, x, n, l, cfg, nil)
			sampleOverride = nil
			if err != nil {
				t.Fatal(err)
			}
			repeats, hists := 0, 0
			for _, note := range rpt.Notes {
				if strings.Contains(note, "histogram repeated") {
					repeats++
				}
			}
			for _, p := range rpt.Passes {
				if p.Stage == "histogram" {
					hists++
				}
			}
			if repeats != c.repeats || hists != c.repeats+1 {
				t.Errorf("abs %v, bounds %.4f/%.4f around k-th %.4f: %d repeats noted, %d histogram passes; want %d repeats",
					abs, c.tight, c.wide, thr, repeats, hists, c.repeats)
			}
			if !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Indices, want.Indices) || !slices.Equal(got.Weights, want.Weights) {
				t.Fatalf("abs %v, bounds %.4f/%.4f: network differs from the full-range histogram method's", abs, c.tight, c.wide)
			}
		}
	}
}

// TestAddHist: the chunked parallel sum equals the plain one, for bin counts that do and do
// not divide among the workers.
func TestAddHist(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, bins := range []int{10, 1 << 16, 1<<16 + 7, 1 << 20} {
		for _, workers := range []int{1, 3, 16} {
			src := make([]uint64, bins)
			dst := make([]uint64, bins)
			for i := range src {
				src[i], dst[i] = rng.Uint64N(1000), rng.Uint64N(1000)
			}
			want := slices.Clone(dst)
			var wantTotal uint64
			for i, c := range src {
				want[i] += c
				wantTotal += c
			}
			if got := addHist(dst, src, workers); got != wantTotal || !slices.Equal(dst, want) {
				t.Fatalf("bins %d workers %d: total %d want %d, or bins differ", bins, workers, got, wantTotal)
			}
		}
	}
}

// TestCheckSeriesParallel: bad rows scattered over the workers' ranges are all counted and
// Rows lists the first ten in row order, whatever GOMAXPROCS.
func TestCheckSeriesParallel(t *testing.T) {
	n, l := 20000, 100
	x := BenchData(n, l, 1)
	rng := rand.New(rand.NewPCG(8, 8))
	var bad []int
	nonFinite, constant := 0, 0
	for range 40 {
		i := rng.IntN(n)
		if slices.Contains(bad, i) {
			continue
		}
		bad = append(bad, i)
		switch rng.IntN(3) {
		case 0:
			x[i*l+rng.IntN(l)] = float32(math.NaN())
			nonFinite++
		case 1:
			x[i*l+rng.IntN(l)] = float32(math.Inf(-1))
			nonFinite++
		default:
			for q := range l {
				x[i*l+q] = 2.5
			}
			constant++
		}
	}
	slices.Sort(bad)
	for _, procs := range []int{1, 3, 8} {
		old := runtime.GOMAXPROCS(procs)
		err := CheckSeries(x, n, l)
		runtime.GOMAXPROCS(old)
		var se *SeriesError
		if !errors.As(err, &se) {
			t.Fatalf("GOMAXPROCS %d: %v", procs, err)
		}
		if se.NonFinite != nonFinite || se.ZeroVariance != constant || !slices.Equal(se.Rows, bad[:10]) {
			t.Fatalf("GOMAXPROCS %d: %d non-finite, %d constant, rows %v; want %d, %d, %v", procs,
				se.NonFinite, se.ZeroVariance, se.Rows, nonFinite, constant, bad[:10])
		}
	}
}

// TestLargestValues: every rank 0…need of the values (ties included) must be the same rank
// of largestValues' result, whichever path it takes (top set or full copy).
func TestLargestValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct{ n, need, levels int }{{180000, 7400, 0}, {180000, 7400, 50}, {1000, 10, 0}, {1000, 600, 0}, {5000, 20, 3}} {
		v := make([]float64, c.n)
		for i := range v {
			v[i] = rng.NormFloat64()
			if c.levels > 0 {
				v[i] = float64(rng.IntN(c.levels))
			}
		}
		top := largestValues(v, c.need)
		if len(top) <= c.need {
			t.Fatalf("%+v: %d values for need %d", c, len(top), c.need)
		}
		all := slices.Clone(v)
		slices.Sort(all)
		slices.Reverse(all)
		slices.Sort(top)
		slices.Reverse(top)
		if !slices.Equal(top[:c.need+1], all[:c.need+1]) {
			t.Fatalf("%+v: ranks 0…need differ", c)
		}
	}
}
