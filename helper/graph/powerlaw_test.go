package graph

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"gonum.org/v1/gonum/mathext"
)

// samplePowerLaw draws n exact discrete power-law variates, P(X ≥ x) = ζ(α, x)/ζ(α, xmin), by
// inverting the survival function with a doubling then bisection search.
func samplePowerLaw(rng *rand.Rand, n int, alpha float64, xmin int) []int {
	z0 := mathext.Zeta(alpha, float64(xmin))
	surv := func(x int) float64 { return mathext.Zeta(alpha, float64(x)) / z0 }
	out := make([]int, n)
	for i := range out {
		u := 1 - rng.Float64() // in (0, 1]: u = 0 would have no finite inverse
		lo, hi := xmin, xmin+1 // invariant: surv(lo) ≥ u
		for surv(hi) >= u {
			lo, hi = hi, 2*hi
		}
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			if surv(mid) >= u {
				lo = mid
			} else {
				hi = mid
			}
		}
		out[i] = lo
	}
	return out
}

func TestPowerLawRecoversExponent(t *testing.T) {
	for _, tc := range []struct {
		alpha float64
		xmin  int
		seed  uint64
	}{{2.2, 1, 1}, {2.8, 1, 2}, {3.5, 1, 3}, {2.5, 6, 4}} {
		t.Run(fmt.Sprintf("alpha%.1f_xmin%d", tc.alpha, tc.xmin), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 9))
			x := samplePowerLaw(rng, 10000, tc.alpha, tc.xmin)
			if tc.xmin > 1 {
				// Below x_min the data follow something else (uniform on 1..x_min−1), which
				// the KS criterion has to cut away.
				for i := 0; i < 3000; i++ {
					x = append(x, 1+rng.IntN(tc.xmin-1))
				}
			}
			fit, err := FitPowerLaw(x, PowerLawOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(fit.Alpha-tc.alpha) > 0.1 {
				t.Errorf("α̂ = %.3f ± %.3f, true %.1f", fit.Alpha, fit.AlphaSE, tc.alpha)
			}
			if fit.Xmin < tc.xmin || fit.Xmin > 3*tc.xmin+2 {
				t.Errorf("x̂_min = %d, true %d", fit.Xmin, tc.xmin)
			}
			if fit.AlphaSE <= 0 || fit.AlphaSE > 0.1 {
				t.Errorf("SE(α̂) = %g", fit.AlphaSE)
			}
			t.Logf("α̂=%.4f±%.4f x̂min=%d n=%d KS=%.4f", fit.Alpha, fit.AlphaSE, fit.Xmin, fit.NTail, fit.KS)
		})
	}
}

// TestDegreeDistributionAgainstScipy checks the likelihoods and KS distances against an
// independent evaluation (scipy's Hurwitz zeta; brute-force summation of the truncated law's
// normaliser over 10⁶ terms, e^(−λ·10⁶) being far below rounding) and that scipy's optimiser finds no better maximum.
func TestDegreeDistributionAgainstScipy(t *testing.T) {
	pyref.Require(t, "numpy", "scipy")
	rng := rand.New(rand.NewPCG(5, 6))
	// A power law cut off exponentially: keep a power-law draw with probability e^(−k/150).
	var x []int
	for len(x) < 5000 {
		for _, k := range samplePowerLaw(rng, 1000, 1.8, 3) {
			if rng.Float64() < math.Exp(-float64(k)/150) {
				x = append(x, k)
			}
		}
	}
	x = x[:5000]
	dd, err := FitDegreeDistribution(x, PowerLawOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dd.LogLikelihoodRatio >= 0 || dd.PValue > 0.01 {
		t.Errorf("cut-off data: R = %g, p = %g; the truncated law should win clearly", dd.LogLikelihoodRatio, dd.PValue)
	}
	if lam := dd.Truncated.Lambda; lam < 1.0/300 || lam > 1.0/75 {
		t.Errorf("λ̂ = %g, generated with 1/150", lam)
	}
	var sb strings.Builder
	for i, k := range x {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(k))
	}
	args := []string{sb.String(), strconv.Itoa(dd.PowerLaw.Xmin),
		strconv.FormatFloat(dd.PowerLaw.Alpha, 'g', -1, 64),
		strconv.FormatFloat(dd.Truncated.Alpha, 'g', -1, 64),
		strconv.FormatFloat(dd.Truncated.Lambda, 'g', -1, 64)}
	out := pyref.Run(t, `
import sys, json, numpy as np
from scipy.special import zeta
from scipy.optimize import minimize, minimize_scalar
x = np.array([int(v) for v in sys.argv[1].split(",")]); xmin = int(sys.argv[2])
a_pl, a_t, l_t = map(float, sys.argv[3:6])
t = np.sort(x[x >= xmin]); n = len(t); sl = np.log(t).sum(); s = t.sum()
ll_pl = lambda a: -n * np.log(zeta(a, xmin)) - a * sl
ks_grid = np.arange(xmin, t.max() + 1)
def ks(pmf):
    F = np.cumsum(pmf); Fn = np.searchsorted(t, ks_grid, side="right") / n
    return float(np.max(np.abs(Fn - F)))
K = np.arange(xmin, xmin + 10**6, dtype=np.float64); lK = np.log(K)
def ll_t(a, l, m=10**6):
    Z = np.sum(np.exp(-a * lK[:m] - l * K[:m]))
    return -n * np.log(Z) - a * sl - l * s, Z
best_pl = minimize_scalar(lambda a: -ll_pl(a), bounds=(1.0001, 20), method="bounded", options={"xatol": 1e-10})
Zt = ll_t(a_t, l_t)[1]
best_t = minimize(lambda p: -ll_t(p[0], np.exp(p[1]), 2 * 10**5)[0], [a_t + 0.05, np.log(l_t) + 0.1], method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
print(json.dumps({"ll_pl": ll_pl(a_pl), "ks_pl": ks(ks_grid ** -a_pl / zeta(a_pl, xmin)),
  "best_pl": -best_pl.fun, "best_pl_alpha": best_pl.x,
  "ll_t": ll_t(a_t, l_t)[0], "ks_t": ks(np.exp(-a_t * np.log(ks_grid) - l_t * ks_grid) / Zt),
  "best_t": -best_t.fun}))
`, args...)
	var ref struct {
		LLPL, KSPL, BestPL, BestPLAlpha, LLT, KST, BestT float64
	}
	var raw map[string]float64
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	ref.LLPL, ref.KSPL, ref.BestPL, ref.BestPLAlpha = raw["ll_pl"], raw["ks_pl"], raw["best_pl"], raw["best_pl_alpha"]
	ref.LLT, ref.KST, ref.BestT = raw["ll_t"], raw["ks_t"], raw["best_t"]
	if !close(dd.PowerLaw.LogLikelihood, ref.LLPL, 1e-9) {
		t.Errorf("power-law ln L %.12g, scipy %.12g", dd.PowerLaw.LogLikelihood, ref.LLPL)
	}
	if math.Abs(dd.PowerLaw.KS-ref.KSPL) > 1e-9 {
		t.Errorf("power-law KS %.12g, numpy %.12g", dd.PowerLaw.KS, ref.KSPL)
	}
	if dd.PowerLaw.LogLikelihood < ref.BestPL-1e-7 || math.Abs(dd.PowerLaw.Alpha-ref.BestPLAlpha) > 1e-5 {
		t.Errorf("power-law MLE α=%.8g ln L=%.12g; scipy α=%.8g ln L=%.12g", dd.PowerLaw.Alpha, dd.PowerLaw.LogLikelihood, ref.BestPLAlpha, ref.BestPL)
	}
	if !close(dd.Truncated.LogLikelihood, ref.LLT, 1e-9) {
		t.Errorf("truncated ln L %.12g, brute-force normaliser %.12g", dd.Truncated.LogLikelihood, ref.LLT)
	}
	if math.Abs(dd.Truncated.KS-ref.KST) > 1e-9 {
		t.Errorf("truncated KS %.12g, numpy %.12g", dd.Truncated.KS, ref.KST)
	}
	if dd.Truncated.LogLikelihood < ref.BestT-1e-6 {
		t.Errorf("truncated MLE ln L %.12g, scipy found %.12g", dd.Truncated.LogLikelihood, ref.BestT)
	}
	t.Logf("pl α=%.4f xmin=%d; trunc α=%.4f λ=%.5f; R=%.2f p=%.3g", dd.PowerLaw.Alpha, dd.PowerLaw.Xmin, dd.Truncated.Alpha, dd.Truncated.Lambda, dd.LogLikelihoodRatio, dd.PValue)
}

// TestUpperGamma checks Γ(s, z), including s ≤ 0 where it runs the recurrence, against direct
// quadrature of its defining integral ∫_z^∞ t^(s−1) e^(−t) dt (scipy.integrate.quad).
func TestUpperGamma(t *testing.T) {
	pyref.Require(t, "scipy")
	cases := [][2]float64{{0, 0.5}, {0, 2}, {0, 30}, {-1, 0.5}, {-0.5, 0.01}, {-2.3, 0.1}, {-1.8, 1e-3}, {-3, 5}, {0.7, 0.2}, {2.5, 4}}
	var sb strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&sb, "%g,%g;", c[0], c[1])
	}
	out := pyref.Run(t, `
import sys, json, numpy as np
from scipy.integrate import quad
res = []
for pair in sys.argv[1].strip(";").split(";"):
    s, z = map(float, pair.split(","))
    # split at z+1 so the integrable peak near z is resolved, then the exponential tail
    a = quad(lambda t: t**(s-1) * np.exp(-t), z, z + 1, epsabs=0, epsrel=1e-13, limit=200)[0]
    b = quad(lambda t: t**(s-1) * np.exp(-t), z + 1, np.inf, epsabs=0, epsrel=1e-13, limit=200)[0]
    res.append(a + b)
print(json.dumps(res))
`, sb.String())
	var want []float64
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if got := upperGamma(c[0], c[1]); !close(got, want[i], 1e-9) {
			t.Errorf("Γ(%g, %g) = %.15g, quadrature %.15g", c[0], c[1], got, want[i])
		}
	}
}

func TestLogBinnedDegrees(t *testing.T) {
	deg := []int{0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144}
	h := LogBinnedDegrees(deg, 5)
	total := 0
	for b := range h.Counts {
		total += h.Counts[b]
		if h.Hi[b] <= h.Lo[b] || (b > 0 && h.Lo[b] != h.Hi[b-1]) {
			t.Fatalf("bins not contiguous at %d: %v %v", b, h.Lo, h.Hi)
		}
	}
	if total != 12 || h.Zero != 1 {
		t.Fatalf("%d binned + %d zero, want 12 + 1", total, h.Zero)
	}
	var mass float64
	for b := range h.Density {
		mass += h.Density[b] * float64(h.Hi[b]-h.Lo[b])
	}
	if !close(mass, 1, 1e-12) {
		t.Errorf("densities integrate to %g", mass)
	}
}
