package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
)

func join(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.FormatFloat(v, 'g', 17, 64)
	}
	return strings.Join(s, ",")
}

func TestWelchAgainstScipy(t *testing.T) {
	pyref.Require(t, "scipy")
	rng := rand.New(rand.NewPCG(1, 2))
	var cases [][2][]float64
	for c := 0; c < 30; c++ {
		na, nb := 2+rng.IntN(20), 2+rng.IntN(20)
		a, b := make([]float64, na), make([]float64, nb)
		sa, sb := 0.1+5*rng.Float64(), 0.1+5*rng.Float64()
		shift := rng.NormFloat64() * 2
		for i := range a {
			a[i] = rng.NormFloat64()*sa + shift
		}
		for i := range b {
			b[i] = rng.NormFloat64() * sb
		}
		cases = append(cases, [2][]float64{a, b})
	}
	var arg []string
	for _, c := range cases {
		arg = append(arg, join(c[0])+";"+join(c[1]))
	}
	out := pyref.Run(t, `
import sys
from scipy import stats
for c in sys.argv[1].split("|"):
    a, b = ([float(v) for v in s.split(",")] for s in c.split(";"))
    r = stats.ttest_ind(a, b, equal_var=False)
    print(repr(float(r.statistic)), repr(float(r.pvalue)))
`, strings.Join(arg, "|"))
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		wt, _ := strconv.ParseFloat(f[0], 64)
		wp, _ := strconv.ParseFloat(f[1], 64)
		w, err := WelchT(cases[i][0], cases[i][1])
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(w.T-wt) > 1e-10*math.Max(1, math.Abs(wt)) || math.Abs(w.P-wp) > 1e-10 {
			t.Errorf("case %d: t %.17g p %.17g, scipy t %.17g p %.17g", i, w.T, w.P, wt, wp)
		}
	}
	if _, err := WelchT([]float64{1}, []float64{1, 2}); err == nil {
		t.Error("one value per group accepted")
	}
	if w, _ := WelchT([]float64{1, 1}, []float64{2, 2}); !w.Degenerate || !math.IsNaN(w.P) {
		t.Error("constant groups: want NaN")
	}
}

func TestBHAgainstNumpy(t *testing.T) {
	pyref.Require(t, "numpy")
	rng := rand.New(rand.NewPCG(3, 4))
	p := make([]float64, 300)
	for i := range p {
		p[i] = rng.Float64()
		if i%7 == 0 {
			p[i] *= 1e-4
		}
		if i%50 == 0 {
			p[i] = p[0] // ties
		}
	}
	out := pyref.Run(t, `
import sys, numpy as np
p = np.array([float(v) for v in sys.argv[1].split(",")]); m = len(p)
o = np.argsort(p, kind="stable"); q = np.empty(m)
q[o] = np.minimum.accumulate((p[o] * m / np.arange(1, m + 1))[::-1])[::-1]
print(" ".join(repr(float(min(v, 1.0))) for v in q))
`, join(p))
	q := BH(p)
	for i, f := range strings.Fields(string(out)) {
		want, _ := strconv.ParseFloat(f, 64)
		if math.Abs(q[i]-want) > 1e-15 {
			t.Fatalf("q[%d] = %g, numpy %g", i, q[i], want)
		}
	}
	if q := BH([]float64{0.01, math.NaN(), 0.04}); !math.IsNaN(q[1]) || q[2] != 0.04 || q[0] != 0.02 {
		t.Errorf("NaN handling: %v", q)
	}
}

// nodes simulates subjects × nodes values with a shift of d SD at the planted nodes.
func nodes(rng *rand.Rand, na, nb, n int, planted map[int]bool, d float64) ([][]float64, []bool) {
	inA := make([]bool, na+nb)
	for i := 0; i < na; i++ {
		inA[i] = true
	}
	v := make([][]float64, n)
	for k := range v {
		v[k] = make([]float64, na+nb)
		for s := range v[k] {
			v[k][s] = rng.NormFloat64()
			if planted[k] && inA[s] {
				v[k][s] += d
			}
		}
	}
	return v, inA
}

func discoveries(t *testing.T, v [][]float64, inA []bool, alpha float64) []int {
	p := make([]float64, len(v))
	for k, row := range v {
		a, b := split(row, inA)
		w, err := WelchT(a, b)
		if err != nil {
			t.Fatal(err)
		}
		p[k] = w.P
	}
	var d []int
	for k, q := range BH(p) {
		if q <= alpha {
			d = append(d, k)
		}
	}
	return d
}

// A planted group difference is found (recall ≥ 0.8 at FDR 0.05); null cohorts give ≤ 5 %
// false positives over repetitions; the permutation p agrees with Welch's on the planted nodes.
func TestPlantedAndNull(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	planted := map[int]bool{}
	for k := 0; k < 40; k++ {
		planted[k*5] = true
	}
	v, inA := nodes(rng, 12, 12, 200, planted, 2.5)
	d := discoveries(t, v, inA, 0.05)
	hit := 0
	for _, k := range d {
		if planted[k] {
			hit++
		}
	}
	recall := float64(hit) / float64(len(planted))
	t.Logf("planted: %d discoveries, recall %.2f, %d false", len(d), recall, len(d)-hit)
	if recall < 0.8 {
		t.Errorf("recall %.2f < 0.8", recall)
	}
	pp, err := PermutationP(v[:20], inA, 999, 7)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 20; k++ {
		if planted[k] && pp[k] > 0.01 {
			t.Errorf("planted node %d: permutation p %g", k, pp[k])
		}
	}
	reps, fp, tests := 20, 0, 0
	for r := 0; r < reps; r++ {
		v, inA := nodes(rng, 10, 10, 200, nil, 0)
		fp += len(discoveries(t, v, inA, 0.05))
		tests += 200
	}
	rate := float64(fp) / float64(tests)
	t.Logf("null: %d false positives in %d tests over %d cohorts (%.3f %%)", fp, tests, reps, 100*rate)
	if rate > 0.05 {
		t.Errorf("null false-positive rate %.3f > 0.05", rate)
	}
	// Permutation p under the null is roughly uniform: its 5 % tail holds about 5 %.
	v, inA = nodes(rng, 8, 8, 200, nil, 0)
	pp, _ = PermutationP(v, inA, 199, 9)
	small := 0
	for _, p := range pp {
		if p <= 0.05 {
			small++
		}
	}
	if small > 25 {
		t.Errorf("null permutation p ≤ 0.05 at %d of 200 nodes", small)
	}
}

func TestResidualizeAgainstNumpy(t *testing.T) {
	pyref.Require(t, "numpy")
	rng := rand.New(rand.NewPCG(8, 9))
	n := 15
	y := make([]float64, n)
	X := make([][]float64, n)
	var xs []string
	for i := range y {
		X[i] = []float64{20 + 40*rng.Float64(), float64(i % 2)}
		y[i] = 0.1*X[i][0] + X[i][1] + rng.NormFloat64()
		xs = append(xs, fmt.Sprintf("%.17g:%.17g", X[i][0], X[i][1]))
	}
	out := pyref.Run(t, `
import sys, numpy as np
y = np.array([float(v) for v in sys.argv[1].split(",")])
X = np.array([[float(v) for v in r.split(":")] for r in sys.argv[2].split(",")])
A = np.column_stack([np.ones(len(y)), X]); b = np.linalg.lstsq(A, y, rcond=None)[0]
print(" ".join(repr(float(v)) for v in y - A @ b + y.mean()))
`, join(y), strings.Join(xs, ","))
	r, err := Residualize(y, X)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range strings.Fields(string(out)) {
		want, _ := strconv.ParseFloat(f, 64)
		if math.Abs(r[i]-want) > 1e-10 {
			t.Fatalf("residual %d: %g, numpy %g", i, r[i], want)
		}
	}
	if _, err := Residualize(y[:2], X[:2]); err == nil {
		t.Error("2 subjects, 2 covariates accepted")
	}
}
