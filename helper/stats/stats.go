// Package stats holds the two-group statistics of cohort comparisons: Welch's t-test (unequal
// variances; Welch 1947), a label-permutation test of the same statistic, Benjamini–Hochberg
// false-discovery-rate control (Benjamini & Hochberg 1995), and covariate regression by
// ordinary least squares. The network-based statistic lives in nbs.go.
package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Welch is the result of a two-sample t-test with unequal variances.
type Welch struct {
	T, DF, P   float64 // statistic (mean a − mean b), Welch–Satterthwaite df, two-sided p
	MeanA      float64
	MeanB      float64
	NA, NB     int
	Degenerate bool // both groups constant: t and p undefined (NaN)
}

// WelchT is scipy.stats.ttest_ind(a, b, equal_var=False): t = (ā − b̄)/√(s²_a/n_a + s²_b/n_b)
// with unbiased variances, df = (s²_a/n_a + s²_b/n_b)² / ((s²_a/n_a)²/(n_a−1) + (s²_b/n_b)²/(n_b−1)),
// p = 2·P(T_df > |t|).
func WelchT(a, b []float64) (Welch, error) {
	if len(a) < 2 || len(b) < 2 {
		return Welch{}, fmt.Errorf("Welch t-test needs at least 2 values per group, got %d and %d", len(a), len(b))
	}
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	w := Welch{MeanA: ma, MeanB: mb, NA: len(a), NB: len(b)}
	qa, qb := va/float64(len(a)), vb/float64(len(b))
	se2 := qa + qb
	if se2 == 0 {
		w.T, w.DF, w.P, w.Degenerate = math.NaN(), math.NaN(), math.NaN(), true
		return w, nil
	}
	w.T = (ma - mb) / math.Sqrt(se2)
	w.DF = se2 * se2 / (qa*qa/float64(len(a)-1) + qb*qb/float64(len(b)-1))
	w.P = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: w.DF}.Survival(math.Abs(w.T))
	return w, nil
}

func meanVar(x []float64) (m, v float64) {
	for _, y := range x {
		m += y
	}
	m /= float64(len(x))
	for _, y := range x {
		v += (y - m) * (y - m)
	}
	return m, v / float64(len(x)-1)
}

// welchStat is Welch's t alone (for permutations), 0 when both groups are constant.
func welchStat(a, b []float64) float64 {
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	se2 := va/float64(len(a)) + vb/float64(len(b))
	if se2 == 0 {
		return 0
	}
	return (ma - mb) / math.Sqrt(se2)
}

// PermutationP is the two-sided permutation p of Welch's t for every measure (rows of values,
// one value per subject; inA marks group A), from n random relabellings that keep the group
// sizes, the same relabellings for every measure: p = (1 + #{|t*| ≥ |t|}) / (n + 1)
// (Phipson & Smyth 2010: never 0).
func PermutationP(values [][]float64, inA []bool, n int, seed uint64) ([]float64, error) {
	if n < 1 {
		return nil, errors.New("permutation test needs at least 1 permutation")
	}
	na := 0
	for _, a := range inA {
		if a {
			na++
		}
	}
	s := len(inA)
	if na < 2 || s-na < 2 {
		return nil, fmt.Errorf("permutation test needs at least 2 subjects per group, got %d and %d", na, s-na)
	}
	obs := make([]float64, len(values))
	for m, v := range values {
		a, b := split(v, inA)
		obs[m] = math.Abs(welchStat(a, b))
	}
	count := make([]int, len(values))
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	perm := make([]bool, s)
	copy(perm, inA)
	for k := 0; k < n; k++ {
		rng.Shuffle(s, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		for m, v := range values {
			a, b := split(v, perm)
			if math.Abs(welchStat(a, b)) >= obs[m]-1e-12*math.Abs(obs[m]) {
				count[m]++
			}
		}
	}
	p := make([]float64, len(values))
	for m := range p {
		p[m] = float64(1+count[m]) / float64(n+1)
	}
	return p, nil
}

func split(v []float64, inA []bool) (a, b []float64) {
	for i, x := range v {
		if inA[i] {
			a = append(a, x)
		} else {
			b = append(b, x)
		}
	}
	return a, b
}

// BH is Benjamini–Hochberg: the adjusted p (q-value) of every test, q_(i) = min_{k ≥ i} p_(k)·m/k
// over the p sorted increasingly, capped at 1; a test is discovered at level α when q ≤ α.
// NaN p-values (undefined tests) stay NaN and do not count in m.
func BH(p []float64) []float64 {
	idx := make([]int, 0, len(p))
	for i, v := range p {
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	q := make([]float64, len(p))
	for i := range q {
		q[i] = math.NaN()
	}
	m := float64(len(idx))
	run := 1.0
	for r := len(idx) - 1; r >= 0; r-- {
		v := p[idx[r]] * m / float64(r+1)
		run = math.Min(run, v)
		q[idx[r]] = run
	}
	return q
}

// Residualize returns y minus its least-squares fit on an intercept and the covariate columns
// X (subjects × covariates), plus the mean of y (so group differences keep their scale).
func Residualize(y []float64, X [][]float64) ([]float64, error) {
	n := len(y)
	if len(X) == 0 {
		return append([]float64(nil), y...), nil
	}
	k := len(X[0]) + 1
	if n <= k {
		return nil, fmt.Errorf("covariates: %d subjects cannot fit an intercept and %d covariates", n, k-1)
	}
	A := mat.NewDense(n, k, nil)
	for i := 0; i < n; i++ {
		A.Set(i, 0, 1)
		for j, x := range X[i] {
			A.Set(i, j+1, x)
		}
	}
	var qr mat.QR
	qr.Factorize(A)
	var beta mat.Dense
	if err := qr.SolveTo(&beta, false, mat.NewDense(n, 1, append([]float64(nil), y...))); err != nil {
		return nil, fmt.Errorf("covariates: %w (are two covariates the same?)", err)
	}
	var fit mat.Dense
	fit.Mul(A, &beta)
	var my float64
	for _, v := range y {
		my += v
	}
	my /= float64(n)
	r := make([]float64, n)
	for i := range r {
		r[i] = y[i] - fit.At(i, 0) + my
	}
	return r, nil
}
