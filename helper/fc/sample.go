package fc

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// sampleOverride replaces the sampled bounds in tests of the fallback paths.
var sampleOverride func(sampleBounds) sampleBounds

// sampleBounds are lower bounds for the k-th largest of the m pair values, read off all pairs
// among a seeded random subset of s nodes (S = s(s−1)/2 sample pairs). With p = k/m the sample
// holds about e = p·S pairs at or above the k-th value; their count X has variance
// Var X = S·p(1−p) + 2S(s−2)·ζ₁ (Hoeffding's decomposition of a U-statistic of order 2: two
// pairs sharing a node are dependent, ζ₁ = Var_a P(pair passes | node a)), so a bound at
// sample rank e + zσ, σ = √Var X, is below the k-th value unless X exceeds its mean by z σ.
type sampleBounds struct {
	// tight is the sample value of rank e + 5σ + 20: the density histogram's lower end (the
	// pairs above it are the ones a GPU histogram counts with atomics, ≈ k of them).
	tight float64
	// wide is the value of rank max(2e + 6√e + 50, e + 12σ + 100): the range of the histogram
	// repeated when tight was too high, and the single pass's bound (the rank the driver
	// used before the variance estimate, so the CPU single pass keeps its candidate budget).
	// wideOK is false when that rank exceeds the sample; wideFrac is the rank over S.
	wide, wideFrac float64
	wideOK         bool
}

type sampleResult struct {
	sb sampleBounds
	ok bool
}

// densityK is the density mode's k = round(D·m) of the m = N(N−1)/2 pairs.
func (d *driver) densityK() (k, m int64) {
	m = d.pairs()
	return int64(math.Round(d.cfg.Density * float64(m))), m
}

// sampleBounds computes the pairs of the sample in float64, spread over GOMAXPROCS workers,
// and finds the ranks by selection (no sort). ok is false when the sample is too small to
// bound anything (fewer than 50 nodes, or the tight rank beyond the sample).
func (d *driver) sampleBounds(k, m int64) (sb sampleBounds, ok bool) {
	s := 600
	if d.cfg.Measure == Kendall {
		s = 300
	}
	s = min(s, d.n)
	if s < 50 {
		return sb, false
	}
	nodes := SampleNodes(d.n, s)
	vals := sampleValues(d.cfg.Measure, d.cfg.Abs, nodes, d.x, d.l)
	return boundsFromSample(vals, s, k, m)
}

// SampleDensityBounds returns lower bounds for the k-th largest of m pair values from the
// values of all s(s−1)/2 pairs among s sampled nodes (vals in the order (a, c), a < c, row by
// row; a pair that cannot pass, e.g. of a constant row, as −Inf): tight has about k(1 + a few
// σ) pairs above it, wide about twice that (−Inf when beyond the sample). ok is false when the
// sample cannot bound the rank (fewer than 50 nodes, or the tight rank beyond the sample).
// Used by the density mode (sampleBounds) and by incremental sliding windows, which cut each
// window's candidates at its own tight bound.
func SampleDensityBounds(vals []float64, s int, k, m int64) (tight, wide float64, ok bool) {
	if s < 50 || len(vals) != s*(s-1)/2 || m <= 0 {
		return 0, 0, false
	}
	sb, ok := boundsFromSample(vals, s, k, m)
	return sb.tight, sb.wide, ok
}

// SampleNodes draws s of n nodes with the density mode's fixed seed (reproducible runs), in
// increasing order.
func SampleNodes(n, s int) []int {
	rng := rand.New(rand.NewPCG(0x68756273636f7065, uint64(n)))
	return sampleNodes(rng, n, s)
}

// boundsFromSample is sampleBounds' arithmetic on the sample's values (left as they are:
// the selections work on copies).
func boundsFromSample(vals []float64, s int, k, m int64) (sb sampleBounds, ok bool) {
	S := len(vals)
	p := float64(k) / float64(m)
	e := p * float64(S)

	// σ: ζ₁ from the spread of the per-node pass fractions at the sample's own e-th value,
	// less the binomial noise p(1−p)/(s−1) that each fraction carries by itself.
	sel := largestValues(vals, int(4*e)+200)
	that := KthLargest(sel, max(int(math.Ceil(e))-1, 0))
	cnt := make([]int32, s)
	idx := 0
	for a := 0; a < s; a++ {
		for c := a + 1; c < s; c++ {
			if vals[idx] >= that {
				cnt[a]++
				cnt[c]++
			}
			idx++
		}
	}
	var mean, ss float64
	for _, c := range cnt {
		mean += float64(c) / float64(s-1)
	}
	mean /= float64(s)
	for _, c := range cnt {
		q := float64(c)/float64(s-1) - mean
		ss += q * q
	}
	zeta1 := max(0, ss/float64(s)-p*(1-p)/float64(s-1))
	sigma := math.Sqrt(float64(S)*p*(1-p) + 2*float64(S)*float64(s-2)*zeta1)

	rt := int(math.Ceil(e + 5*sigma + 20))
	if rt >= S {
		return sb, false
	}
	rw := int(math.Ceil(max(2*e+6*math.Sqrt(e)+50, e+12*sigma+100)))
	if max(rt, min(rw, S-1)) >= len(sel) { // beyond the largest values kept: select among all
		sel = slices.Clone(vals)
	}
	sb.tight = KthLargest(sel, rt)
	if rw < S {
		sb.wide, sb.wideFrac, sb.wideOK = KthLargest(sel, rw), float64(rw)/float64(S), true
	} else {
		sb.wide = math.Inf(-1)
	}
	return sb, true
}

// largestValues returns a copy of the values of vals that are ≥ some h, more than need of
// them, so that every rank 0…need of vals is the same rank of the result — or a copy of all
// of vals when that is not cheaper. h is a rank of every 8th value with room for twice need:
// the ranks the sample wants then come from a few thousand values instead of all S (three
// selections over W1's 180 k values were 3 ms of serial work, longer than the GPU's Prepare).
func largestValues(vals []float64, need int) []float64 {
	const stride = 8
	if 2*stride*(need+1) > len(vals) {
		return slices.Clone(vals)
	}
	sub := make([]float64, 0, len(vals)/stride+1)
	for i := 0; i < len(vals); i += stride {
		sub = append(sub, vals[i])
	}
	h := KthLargest(sub, min(len(sub)-1, 2*(need+1)/stride+16))
	top := make([]float64, 0, 4*(need+1))
	for _, v := range vals {
		if v >= h {
			top = append(top, v)
		}
	}
	if len(top) <= need {
		return slices.Clone(vals)
	}
	return top
}

// sampleNodes draws s distinct nodes of n in increasing order (Floyd's algorithm: s draws, no
// permutation of all n nodes).
func sampleNodes(rng *rand.Rand, n, s int) []int {
	chosen := make(map[int]bool, s)
	out := make([]int, 0, s)
	for j := n - s; j < n; j++ {
		t := rng.IntN(j + 1)
		if chosen[t] {
			t = j
		}
		chosen[t] = true
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// KthLargest returns the value of rank r (0-based, in decreasing order) of v, reordering v:
// quickselect with a median-of-three pivot and Hoare partitioning (equal values stop both
// scans, so ties do not degrade it). Expected O(len(v)). The sliding windows' density cuts
// (helper/dfc) select from float32 candidates with it.
func KthLargest[T float32 | float64](v []T, r int) T {
	lo, hi := 0, len(v)-1
	for lo < hi {
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi]
		piv := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for v[i] > piv {
				i++
			}
			for v[j] < piv {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		// v[lo..j] ≥ piv ≥ v[i..hi], and v[j+1..i−1] (if any) equals piv
		switch {
		case r <= j:
			hi = j
		case r >= i:
			lo = i
		default:
			return v[r]
		}
	}
	return v[r]
}

// sampleValues computes the measure for all pairs (a, c), a < c, of the given nodes in
// float64, in that order; rows a are shared among GOMAXPROCS workers, each writing its rows'
// pairs in place, so the result does not depend on the scheduling.
func sampleValues(meas Measure, abs bool, nodes []int, x []float32, l int) []float64 {
	s := len(nodes)
	out := make([]float64, s*(s-1)/2)
	val := func(v float64) float64 {
		if abs {
			return math.Abs(v)
		}
		return v
	}
	var pair func(a, c int) float64
	if meas == Kendall {
		w := (SignPairs(l) + 63) / 64
		pos, neg := make([]uint64, s*w), make([]uint64, s*w)
		cnt := make([]int64, s)
		parallelRange(s, runtime.GOMAXPROCS(0), func(lo, hi int) {
			for a := lo; a < hi; a++ {
				v := nodes[a]
				cnt[a] = SignBitPlanes(pos[a*w:(a+1)*w], neg[a*w:(a+1)*w], x[v*l:(v+1)*l])
			}
		})
		pair = func(a, c int) float64 {
			dot := SignDot(pos[a*w:(a+1)*w], neg[a*w:(a+1)*w], pos[c*w:(c+1)*w], neg[c*w:(c+1)*w])
			return float64(KendallTau(dot, cnt[a], cnt[c]))
		}
	} else {
		u := make([]float64, s*l)
		parallelRange(s, runtime.GOMAXPROCS(0), func(lo, hi int) {
			var rk Ranker
			tmp := make([]float32, l)
			for a := lo; a < hi; a++ {
				v := nodes[a]
				row := x[v*l : (v+1)*l]
				if meas == Spearman {
					rk.Ranks(tmp, row)
					row = tmp
				}
				var sum, ss float64
				for _, q := range row {
					sum += float64(q)
				}
				mean := sum / float64(l)
				for _, q := range row {
					ss += (float64(q) - mean) * (float64(q) - mean)
				}
				inv := 1 / math.Sqrt(ss)
				for t, q := range row {
					u[a*l+t] = (float64(q) - mean) * inv
				}
			}
		})
		pair = func(a, c int) float64 { return Dot(u[a*l:(a+1)*l], u[c*l:(c+1)*l]) }
	}
	// rows handed out in chunks through an atomic counter: row a has s−1−a pairs, so static
	// shares would be uneven
	const chunk = 8
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), (s+chunk-1)/chunk) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				a0 := int(next.Add(chunk)) - chunk
				if a0 >= s {
					return
				}
				for a := a0; a < min(a0+chunk, s); a++ {
					off := a*s - a*(a+1)/2 // pairs of the rows before a
					for c := a + 1; c < s; c++ {
						out[off+c-a-1] = val(pair(a, c))
					}
				}
			}
		}()
	}
	wg.Wait()
	return out
}
