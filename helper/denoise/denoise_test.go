package denoise

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestButterMatchesScipy: the transfer-function coefficients equal scipy.signal.butter's
// (printed by scipy 1.10.1 and kept here so the check runs without Python).
func TestButterMatchesScipy(t *testing.T) {
	for _, c := range []struct {
		order        int
		hp, lp, fs   float64
		wantB, wantA []float64
	}{
		{5, 0.01, 0.08, 0.5,
			[]float64{0.005232417413840218, 0.0, -0.02616208706920109, 0.0, 0.05232417413840218, 0.0, -0.05232417413840218, 0.0, 0.02616208706920109, 0.0, -0.005232417413840218},
			[]float64{1.0, -6.695276327746034, 20.468957532316534, -37.85787871249325, 47.12727222473014, -41.35432563218332, 25.909490546932826, -11.435123974350232, 3.401160003464625, -0.6156684255105022, 0.05140246268387896}},
		{3, 0, 0.1, 1,
			[]float64{0.018098933007514435, 0.05429679902254331, 0.05429679902254331, 0.018098933007514435},
			[]float64{1.0, -1.7600418803431688, 1.1828932620378303, -0.2780599176345463}},
		{5, 0.01, 0, 0.4,
			[]float64{0.7753165952469473, -3.8765829762347366, 7.753165952469473, -7.753165952469473, 3.8765829762347366, -0.7753165952469473},
			[]float64{1.0, -4.491830965077046, 8.094055417826649, -7.312081280150384, 3.3110475619883992, -0.6011158228598386}},
	} {
		b, a := butterBA(c.order, c.hp, c.lp, c.fs)
		for _, pair := range [][2][]float64{{b, c.wantB}, {a, c.wantA}} {
			got, want := pair[0], pair[1]
			if len(got) != len(want) {
				t.Fatalf("order %d band %g–%g: %d coefficients, want %d", c.order, c.hp, c.lp, len(got), len(want))
			}
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
					t.Errorf("order %d band %g–%g: coefficient %d = %.17g, scipy %.17g", c.order, c.hp, c.lp, i, got[i], want[i])
				}
			}
		}
	}
}

// TestBandPassKeepsBandRemovesRest: a 0.04 Hz sine passes the 0.01–0.08 Hz filter at TR 2 s
// nearly unchanged away from the ends; a 0.2 Hz sine and a linear drift are removed.
func TestBandPassKeepsBandRemovesRest(t *testing.T) {
	const n = 300
	p, err := Compile(n, nil, nil, Options{Filter: FilterButterworth, HighPass: 0.01, LowPass: 0.08, TR: 2, Detrend: true})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 3*n)
	for k := 0; k < n; k++ {
		tk := 2 * float64(k)
		x[k] = float32(100 + math.Sin(2*math.Pi*0.04*tk))
		x[n+k] = float32(100 + math.Sin(2*math.Pi*0.2*tk))
		x[2*n+k] = float32(100 + 0.05*float64(k))
	}
	y := make([]float32, 3*n)
	p.Apply(y, x, 3)
	for k := 50; k < n-50; k++ {
		want := 100 + math.Sin(2*math.Pi*0.04*2*float64(k))
		if d := math.Abs(float64(y[k]) - want); d > 0.06 {
			t.Fatalf("in-band sine changed by %.3g at volume %d", d, k)
		}
		if d := math.Abs(float64(y[n+k]) - 100); d > 0.05 { // ≥ 26 dB down (nilearn leaves 0.043 here too)
			t.Fatalf("0.2 Hz sine kept with amplitude %.3g at volume %d", d, k)
		}
		if d := math.Abs(float64(y[2*n+k]) - 107.475); d > 0.01 { // the drift's mean is added back
			t.Fatalf("drift left %.3g at volume %d", d, k)
		}
	}
}

// TestApplyEqualsOperator: the float32 kernel path equals the float64 operator and
// standardisation for shapes that fill no tile exactly.
func TestApplyEqualsOperator(t *testing.T) {
	old := applyBlock
	applyBlock = 8 // several blocks, the last one partial
	defer func() { applyBlock = old }()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{1, 40}, {7, 37}, {13, 65}, {100, 17}} {
		n, tt := sz[0], sz[1]
		conf := confounds(rng, 3, tt)
		p, err := Compile(tt, conf, maskWithout(tt, 2, 9), Options{Detrend: true, Standardize: ZScoreSample, StandardizeConfounds: true})
		if err != nil {
			t.Fatal(err)
		}
		x := bold(rng, n, tt)
		y := make([]float32, n*p.Out)
		p.Apply(y, x, n)
		m := p.Operator()
		for i := 0; i < n; i++ {
			want := make([]float64, p.Out)
			for r := range want {
				for k := 0; k < tt; k++ {
					want[r] += m[r*tt+k] * float64(x[i*tt+k])
				}
			}
			zscore(want, 1)
			for r, w := range want {
				if math.Abs(float64(y[i*p.Out+r])-w) > 1e-5 {
					t.Fatalf("n=%d T=%d row %d volume %d: %g, operator %g", n, tt, i, r, y[i*p.Out+r], w)
				}
			}
		}
	}
}

// TestRegressionLeavesResidualOrthogonal: after detrending and confound regression the
// series are orthogonal to every (detrended) confound and to a linear trend.
func TestRegressionLeavesResidualOrthogonal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, tt = 20, 64
	conf := confounds(rng, 5, tt)
	p, err := Compile(tt, conf, nil, Options{Detrend: true, StandardizeConfounds: true})
	if err != nil {
		t.Fatal(err)
	}
	x := bold(rng, n, tt)
	y := make([]float32, n*tt)
	p.Apply(y, x, n)
	ramp := make([]float64, tt)
	for k := range ramp {
		ramp[k] = float64(k)
	}
	for i := 0; i < n; i++ {
		row := make([]float64, tt)
		for k := range row {
			row[k] = float64(y[i*tt+k])
		}
		norm := math.Sqrt(dot(row, row))
		for j, c := range append(conf, ramp) {
			if r := corr(row, c); math.Abs(r) > 1e-4 {
				t.Fatalf("row %d (norm %.3g) still correlates %.3g with regressor %d", i, norm, r, j)
			}
		}
	}
}

// TestBadRequests: each impossible request is refused with one line naming the problem.
func TestBadRequests(t *testing.T) {
	band := Options{Filter: FilterButterworth, HighPass: 0.01, LowPass: 0.08, TR: 2}
	conf := [][]float64{make([]float64, 50)}
	for _, c := range []struct {
		name string
		t    int
		conf [][]float64
		mask []int
		o    Options
		want string
	}{
		{"no TR", 100, nil, nil, Options{Filter: FilterButterworth, HighPass: 0.01}, "--tr"},
		{"edge at Nyquist", 100, nil, nil, Options{Filter: FilterButterworth, LowPass: 0.25, TR: 2}, "Nyquist"},
		{"low ≥ high", 100, nil, nil, Options{Filter: FilterButterworth, HighPass: 0.08, LowPass: 0.01, TR: 2}, "below the high edge"},
		{"confound rows", 60, conf, nil, Options{Detrend: true}, "has 50 rows but the scan has 60"},
		{"all censored", 60, nil, []int{}, Options{}, "every volume is censored"},
		{"too few for confounds", 60, [][]float64{make([]float64, 60), make([]float64, 60)}, []int{1, 2, 3}, Options{}, "too few for 2 confounds"},
		{"too short for the filter", 30, nil, nil, band, "too few for the Butterworth filter"},
		{"drop everything", 10, nil, nil, Options{Drop: 10}, "leaves none"},
		{"bad mask", 10, nil, []int{3, 2}, Options{}, "ascending"},
		{"non-finite confound", 10, [][]float64{{0, 1, math.NaN(), 0, 0, 0, 0, 0, 0, 0}}, nil, Options{}, "non-finite"},
	} {
		_, err := Compile(c.t, c.conf, c.mask, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", c.name, err, c.want)
		}
	}
}
