package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/hubscope/hubscope/ipc/schema"
	"gonum.org/v1/gonum/mathext"
)

// DegreeHistogram is schema.DegreeHistogram (the bundle's file schemas live in package schema).
type DegreeHistogram = schema.DegreeHistogram

// LogBinnedDegrees bins degrees on a logarithmic grid with binsPerDecade bins per factor of 10
// (default 10 when ≤ 0), widened where needed so every bin holds at least one integer.
func LogBinnedDegrees(degrees []int, binsPerDecade int) DegreeHistogram {
	if binsPerDecade <= 0 {
		binsPerDecade = 10
	}
	var h DegreeHistogram
	kmax, n := 0, 0
	for _, k := range degrees {
		if k <= 0 {
			h.Zero++
			continue
		}
		n++
		kmax = max(kmax, k)
	}
	if n == 0 {
		return h
	}
	ratio := math.Pow(10, 1/float64(binsPerDecade))
	for lo := 1; lo <= kmax; {
		hi := max(lo+1, int(math.Ceil(float64(lo)*ratio)))
		h.Lo = append(h.Lo, lo)
		h.Hi = append(h.Hi, hi)
		h.Centers = append(h.Centers, math.Sqrt(float64(lo)*float64(hi-1)))
		lo = hi
	}
	h.Counts = make([]int, len(h.Lo))
	for _, k := range degrees {
		if k > 0 {
			b, _ := slices.BinarySearch(h.Lo, k+1) // first bin starting above k
			h.Counts[b-1]++
		}
	}
	h.Density = make([]float64, len(h.Lo))
	for b := range h.Counts {
		h.Density[b] = float64(h.Counts[b]) / (float64(n) * float64(h.Hi[b]-h.Lo[b]))
	}
	return h
}

// PowerLawFit is schema.PowerLawFit (the bundle's file schemas live in package schema).
type PowerLawFit = schema.PowerLawFit

// TruncatedPowerLawFit is schema.TruncatedPowerLawFit (the bundle's file schemas live in package schema).
type TruncatedPowerLawFit = schema.TruncatedPowerLawFit

// DegreeDistribution is schema.DegreeDistribution (the bundle's file schemas live in package schema).
type DegreeDistribution = schema.DegreeDistribution

// FitError is a degree distribution a law cannot be fitted to (a property of the network, not
// a failure of the program); Why says so in words.
type FitError struct{ Fit, Why string }

func (e *FitError) Error() string { return "graph: " + e.Fit + ": " + e.Why }

// PowerLawOptions tunes FitPowerLaw; zero values ask for the defaults.
type PowerLawOptions struct {
	// MinTail is the smallest tail a k_min candidate may leave (default 50): a KS distance on a
	// handful of points is small by chance, which would pull k_min into the extreme tail.
	MinTail int
	// BinsPerDecade for the histogram (default 10).
	BinsPerDecade int
}

// FitDegreeDistribution bins the degrees and fits both laws to them.
func FitDegreeDistribution(degrees []int, opt PowerLawOptions) (DegreeDistribution, error) {
	var dd DegreeDistribution
	dd.Histogram = LogBinnedDegrees(degrees, opt.BinsPerDecade)
	pl, err := FitPowerLaw(degrees, opt)
	if err != nil {
		return dd, err
	}
	dd.PowerLaw = pl
	tp, err := FitTruncatedPowerLaw(degrees, pl.Xmin, pl.Alpha)
	if err != nil {
		return dd, err
	}
	dd.Truncated = tp
	dd.LogLikelihoodRatio = pl.LogLikelihood - tp.LogLikelihood
	// The maximum over a superset cannot be lower; clamp optimiser noise of order 1e-9.
	d := max(0, -dd.LogLikelihoodRatio)
	dd.PValue = math.Erfc(math.Sqrt(d)) // P(χ²₁ ≥ 2d) = erfc(√d)
	return dd, nil
}

// FitPowerLaw fits the discrete power law to the positive degrees (Clauset et al. 2009): for
// every distinct degree k_min leaving at least MinTail values, α̂ maximises
// ln L(α) = −n ln ζ(α, k_min) − α Σ ln k_i (concave in α, so a golden-section search on
// (1, 20] finds it), and the KS distance D = max_k |F_n(k) − F(k)| is taken over every integer
// of the tail; the k_min with the smallest D wins.
func FitPowerLaw(degrees []int, opt PowerLawOptions) (PowerLawFit, error) {
	if opt.MinTail <= 0 {
		opt.MinTail = 50
	}
	x := positiveSorted(degrees)
	if len(x) < 2 {
		return PowerLawFit{}, &FitError{"power-law fit", fmt.Sprintf("only %d node(s) have an edge; a fit needs at least 2", len(x))}
	}
	minTail := min(opt.MinTail, len(x))
	// suffix sums of ln k over the sorted degrees: tail starting at index i.
	sufLog := make([]float64, len(x)+1)
	for i := len(x) - 1; i >= 0; i-- {
		sufLog[i] = sufLog[i+1] + math.Log(float64(x[i]))
	}
	best := PowerLawFit{KS: math.Inf(1)}
	for i := 0; i < len(x); {
		xmin := x[i]
		n := len(x) - i
		if n < minTail {
			break
		}
		if x[len(x)-1] == xmin { // a single distinct value: no distribution to fit
			break
		}
		tail := x[i:]
		alpha := fitAlpha(float64(n), sufLog[i], float64(xmin))
		ks := powerLawKS(tail, alpha)
		if ks < best.KS {
			z := mathext.Zeta(alpha, float64(xmin))
			best = PowerLawFit{Alpha: alpha, Xmin: xmin, NTail: n, KS: ks,
				LogLikelihood: -float64(n)*math.Log(z) - alpha*sufLog[i]}
		}
		for i < len(x) && x[i] == xmin {
			i++
		}
	}
	if math.IsInf(best.KS, 1) {
		return best, &FitError{"power-law fit", "every connected node has the same degree, so there is no tail to fit"}
	}
	// Fisher information per observation is Var[ln k] = d²/dα² ln ζ(α, k_min), by finite
	// differences of ln ζ.
	h := 1e-4 * best.Alpha
	lz := func(a float64) float64 { return math.Log(mathext.Zeta(a, float64(best.Xmin))) }
	info := (lz(best.Alpha+h) - 2*lz(best.Alpha) + lz(best.Alpha-h)) / (h * h)
	if info > 0 {
		best.AlphaSE = 1 / math.Sqrt(float64(best.NTail)*info)
	}
	return best, nil
}

func positiveSorted(degrees []int) []int {
	x := make([]int, 0, len(degrees))
	for _, k := range degrees {
		if k > 0 {
			x = append(x, k)
		}
	}
	slices.Sort(x)
	return x
}

// fitAlpha maximises −n ln ζ(α, xmin) − α·sumLog over α ∈ (1, 20] by golden-section search.
func fitAlpha(n, sumLog, xmin float64) float64 {
	ll := func(a float64) float64 { return -n*math.Log(mathext.Zeta(a, xmin)) - a*sumLog }
	return goldenMax(ll, 1+1e-9, 20, 1e-12)
}

// goldenMax returns the maximiser of a unimodal f on [a, b] to within tol.
func goldenMax(f func(float64) float64, a, b, tol float64) float64 {
	const invPhi = 0.6180339887498949
	c, d := b-invPhi*(b-a), a+invPhi*(b-a)
	fc, fd := f(c), f(d)
	for b-a > tol*(1+math.Abs(a)) {
		if fc > fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = f(d)
		}
	}
	return (a + b) / 2
}

// powerLawKS is max over integers k ≥ k_min of |F_n(k) − F(k)|. F_n is constant between
// consecutive distinct data values u_j < u_{j+1} while F rises, so the supremum on that stretch is
// reached at k = u_j or k = u_{j+1} − 1; F(k) = 1 − ζ(α, k+1)/ζ(α, k_min) costs one Hurwitz zeta
// per distinct value (the differences lose relative accuracy deep in the tail, but KS needs
// only absolute accuracy, ~1e-15 here).
func powerLawKS(tail []int, alpha float64) float64 {
	n := float64(len(tail))
	z0 := mathext.Zeta(alpha, float64(tail[0]))
	var d float64
	for p := 0; p < len(tail); {
		u := tail[p]
		for p < len(tail) && tail[p] == u {
			p++
		}
		fn := float64(p) / n
		sAt := mathext.Zeta(alpha, float64(u)) / z0 // P(X ≥ u)
		fAtU := 1 - (sAt - math.Pow(float64(u), -alpha)/z0)
		d = max(d, math.Abs(fn-fAtU))
		if p < len(tail) && tail[p] > u+1 {
			fBeforeNext := 1 - mathext.Zeta(alpha, float64(tail[p]))/z0 // F(u_{j+1} − 1)
			d = max(d, math.Abs(fn-fBeforeNext))
		}
	}
	return d
}

// cdfKS compares the empirical CDF of the sorted tail with the model whose probability mass at
// integer k is pmf(k), over every integer of the tail's range.
func cdfKS(tail []int, pmf func(int) float64) float64 {
	n := float64(len(tail))
	var d, cdf float64
	p := 0
	for k := tail[0]; k <= tail[len(tail)-1]; k++ {
		cdf += pmf(k)
		for p < len(tail) && tail[p] <= k {
			p++
		}
		d = max(d, math.Abs(float64(p)/n-cdf))
	}
	return d
}

// FitTruncatedPowerLaw fits p(k) ∝ k^(−α) e^(−λk), k ≥ xmin, by maximum likelihood: Nelder–Mead
// over (α, ln λ) on ln L = −n ln Z − α Σ ln k − λ Σ k, started from the power law's α0. The
// normaliser Z(α, λ, xmin) = Σ_{k≥xmin} k^(−α) e^(−λk) is summed exactly for the first 2,000
// terms and the rest by the Euler–Maclaurin formula, whose integral is the upper incomplete gamma
// function: ∫_M^∞ k^(−α) e^(−λk) dk = λ^(α−1) Γ(1−α, λM).
func FitTruncatedPowerLaw(degrees []int, xmin int, alpha0 float64) (TruncatedPowerLawFit, error) {
	x := positiveSorted(degrees)
	i, _ := slices.BinarySearch(x, xmin)
	tail := x[i:]
	if len(tail) < 2 {
		return TruncatedPowerLawFit{}, &FitError{"truncated power-law fit", fmt.Sprintf("only %d degree(s) ≥ %d to fit", len(tail), xmin)}
	}
	var sumLog, sum float64
	for _, k := range tail {
		sumLog += math.Log(float64(k))
		sum += float64(k)
	}
	n := float64(len(tail))
	lnk := logTable(xmin)
	negLL := func(p []float64) float64 {
		a, l := p[0], math.Exp(p[1])
		z := truncatedNormalizerLog(a, l, xmin, lnk)
		if !(z > 0) || math.IsInf(z, 0) {
			return math.Inf(1)
		}
		return n*math.Log(z) + a*sumLog + l*sum
	}
	mean := sum / n
	bestF, bestX := math.Inf(1), []float64(nil)
	// Two starts, near the power law (weak cut-off) and near an exponential (strong cut-off);
	// the likelihood is concave in (α, λ), so both should agree, and the better one is kept.
	for _, start := range [][2]float64{{alpha0, math.Log(1e-3 / mean)}, {1, math.Log(1 / mean)}} {
		x, f := nelderMead2(negLL, start, [2]float64{0.1, 0.5}, 1e-13, 4000)
		if f < bestF {
			bestF, bestX = f, x[:]
		}
	}
	if math.IsInf(bestF, 1) {
		return TruncatedPowerLawFit{}, &FitError{"truncated power-law fit", "no parameters give a finite likelihood"}
	}
	a, l := bestX[0], math.Exp(bestX[1])
	z := truncatedNormalizer(a, l, xmin)
	fit := TruncatedPowerLawFit{Alpha: a, Lambda: l, Xmin: xmin, LogLikelihood: -bestF}
	fit.KS = cdfKS(tail, func(k int) float64 { return math.Pow(float64(k), -a) * math.Exp(-l*float64(k)) / z })
	return fit, nil
}

// truncatedExplicit is the number of terms truncatedNormalizer sums one by one before the
// Euler–Maclaurin tail.
const truncatedExplicit = 2000

// logTable is ln k for k = xmin … xmin + truncatedExplicit − 1.
func logTable(xmin int) []float64 {
	t := make([]float64, truncatedExplicit)
	for i := range t {
		t[i] = math.Log(float64(xmin + i))
	}
	return t
}

// truncatedNormalizer is Z(α, λ, xmin) = Σ_{k=xmin}^∞ k^(−α) e^(−λk) for λ > 0.
func truncatedNormalizer(alpha, lambda float64, xmin int) float64 {
	return truncatedNormalizerLog(alpha, lambda, xmin, logTable(xmin))
}

// truncatedNormalizerLog is truncatedNormalizer with ln k tabulated (logTable(xmin)): each term
// is one exp(−α ln k − λk) instead of a pow and an exp, which made the fit's likelihood
// searches (hundreds of normalisers) cost 2 CPU-s on the C5 degrees.
func truncatedNormalizerLog(alpha, lambda float64, xmin int, lnk []float64) float64 {
	m := xmin + truncatedExplicit
	var s float64
	for k := xmin; k < m; k++ {
		t := math.Exp(-alpha*lnk[k-xmin] - lambda*float64(k))
		s += t
		if t < 1e-18*s {
			return s // terms decrease from here on (k > α/λ); the rest is below rounding
		}
	}
	fm := float64(m)
	f := math.Pow(fm, -alpha) * math.Exp(-lambda*fm)
	df := -f * (alpha/fm + lambda)
	// Euler–Maclaurin: Σ_{k≥M} f(k) = ∫_M^∞ f + f(M)/2 − f′(M)/12 + O(f‴).
	integral := math.Pow(lambda, alpha-1) * upperGamma(1-alpha, lambda*fm)
	return s + integral + f/2 - df/12
}

// upperGamma is Γ(s, z) = ∫_z^∞ t^(s−1) e^(−t) dt for z > 0 and any real s: gonum's regularised
// Q(s, z)·Γ(s) for s > 0, otherwise the recurrence Γ(s, z) = (Γ(s+1, z) − z^s e^(−z)) / s run
// down from Γ(s₀, z), s₀ = s + ⌈−s⌉ ∈ (0, 1), or from Γ(0, z) = E₁(z) when s is an integer.
func upperGamma(s, z float64) float64 {
	if s > 0 {
		return mathext.GammaIncRegComp(s, z) * math.Gamma(s)
	}
	steps := math.Ceil(-s)
	s0 := s + steps
	var g float64
	if s0 == 0 {
		g = expIntE1(z)
	} else {
		g = mathext.GammaIncRegComp(s0, z) * math.Gamma(s0)
		steps = math.Ceil(-s) // s0 ∈ (0,1): recur from s0 down to s
	}
	for t := s0 - 1; steps > 0; t, steps = t-1, steps-1 {
		g = (g - math.Pow(z, t)*math.Exp(-z)) / t
	}
	return g
}

// expIntE1 is the exponential integral E₁(z), z > 0: the power series below 1, Lentz's
// continued fraction above (Numerical Recipes, §6.3).
func expIntE1(z float64) float64 {
	const eulerGamma = 0.5772156649015329
	if z < 1 {
		sum, term := 0.0, 1.0
		for k := 1; k < 200; k++ {
			term *= -z / float64(k)
			sum += term / float64(k)
			if math.Abs(term) < 1e-18 {
				break
			}
		}
		return -eulerGamma - math.Log(z) - sum
	}
	b := z + 1
	c := 1 / 1e-300
	d := 1 / b
	h := d
	for i := 1; i < 500; i++ {
		an := -float64(i * i)
		b += 2
		d = 1 / (an*d + b)
		c = b + an/c
		del := c * d
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return h * math.Exp(-z)
}

// nelderMead2 minimises f over R² by the Nelder–Mead simplex (standard coefficients: reflection
// 1, expansion 2, contraction ½, shrink ½), restarting once from the best point so a collapsed
// simplex cannot stop it early. It stops when the simplex's function values agree within tol
// (absolute) or after maxIter iterations.
func nelderMead2(f func([]float64) float64, x0, step [2]float64, tol float64, maxIter int) ([2]float64, float64) {
	eval := func(p [2]float64) float64 { return f(p[:]) }
	best, fbest := x0, eval(x0)
	for restart := 0; restart < 2; restart++ {
		s := [3][2]float64{best, {best[0] + step[0], best[1]}, {best[0], best[1] + step[1]}}
		fs := [3]float64{fbest, eval(s[1]), eval(s[2])}
		for it := 0; it < maxIter; it++ {
			// order: s[0] best, s[2] worst
			for i := 0; i < 2; i++ {
				for j := 0; j < 2-i; j++ {
					if fs[j+1] < fs[j] {
						fs[j], fs[j+1] = fs[j+1], fs[j]
						s[j], s[j+1] = s[j+1], s[j]
					}
				}
			}
			if math.Abs(fs[2]-fs[0]) <= tol && !math.IsInf(fs[0], 0) {
				break
			}
			c := [2]float64{(s[0][0] + s[1][0]) / 2, (s[0][1] + s[1][1]) / 2}
			at := func(t float64) [2]float64 { return [2]float64{c[0] + t*(s[2][0]-c[0]), c[1] + t*(s[2][1]-c[1])} }
			r := at(-1)
			fr := eval(r)
			switch {
			case fr < fs[0]:
				e := at(-2)
				if fe := eval(e); fe < fr {
					s[2], fs[2] = e, fe
				} else {
					s[2], fs[2] = r, fr
				}
			case fr < fs[1]:
				s[2], fs[2] = r, fr
			default:
				var k [2]float64
				if fr < fs[2] {
					k = at(-0.5)
				} else {
					k = at(0.5)
				}
				if fk := eval(k); fk < min(fr, fs[2]) {
					s[2], fs[2] = k, fk
				} else {
					for i := 1; i < 3; i++ {
						s[i] = [2]float64{(s[0][0] + s[i][0]) / 2, (s[0][1] + s[i][1]) / 2}
						fs[i] = eval(s[i])
					}
				}
			}
		}
		for i := 0; i < 3; i++ {
			if fs[i] < fbest {
				best, fbest = s[i], fs[i]
			}
		}
		step = [2]float64{step[0] / 10, step[1] / 10}
	}
	return best, fbest
}
