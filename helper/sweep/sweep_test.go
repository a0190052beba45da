package sweep

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/network"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"r=0.45:0.70:0.05", "r=0.45,0.5,0.55,0.6,0.65,0.7"},
		{"density=0.01:0.10:0.01", "density=0.01,0.02,0.03,0.04,0.05,0.06,0.07,0.08,0.09,0.1"},
		{"r=0.6,0.3, 0.5", "r=0.3,0.5,0.6"},
		{"DENSITY=0.05,0.1", "density=0.05,0.1"},
	} {
		s, err := Parse(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if s.String() != c.want {
			t.Errorf("%s → %s, want %s", c.in, s, c.want)
		}
		if again, _ := Parse(s.String()); again.String() != s.String() {
			t.Errorf("%s does not parse back", s)
		}
	}
	for _, bad := range []string{"r", "x=0.1,0.2", "r=0.5", "r=0.5,0.5", "r=0.7:0.4:0.1", "r=0.1:0.5:0", "density=0:0.1:0.05",
		"r=0.5,1.2", "r=a,b", "density=0.1:0.2", "r=0:0.9:0.0001"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// series returns n×l float32 series with block structure, so that edges span a wide range.
func series(n, l int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	const groups = 5
	sig := make([][]float64, groups)
	for g := range sig {
		sig[g] = make([]float64, l)
		for t := range sig[g] {
			sig[g][t] = rng.NormFloat64()
		}
	}
	x := make([]float32, n*l)
	for i := 0; i < n; i++ {
		a := 0.3 + 0.6*rng.Float64()
		for t := 0; t < l; t++ {
			x[i*l+t] = float32(a*sig[i%groups][t] + rng.NormFloat64())
		}
	}
	return x
}

func build(t *testing.T, x []float32, n, l int, cfg fc.Config) *network.Network {
	t.Helper()
	be := cpu.New(cpu.Options{})
	defer be.Close()
	nw, _, err := fc.Build(context.Background(), be, x, n, l, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return nw
}

func sameNetwork(a, b *network.Network) error {
	if a.N != b.N || a.Edges() != b.Edges() {
		return fmt.Errorf("%d nodes %d edges vs %d nodes %d edges", a.N, a.Edges(), b.N, b.Edges())
	}
	for i := range a.Indptr {
		if a.Indptr[i] != b.Indptr[i] {
			return fmt.Errorf("row %d starts differ", i)
		}
	}
	for p := range a.Indices {
		if a.Indices[p] != b.Indices[p] || a.Weights[p] != b.Weights[p] {
			return fmt.Errorf("edge %d differs", p)
		}
	}
	return nil
}

// Each threshold's filtered network equals the network built at that threshold alone.
func TestFilterEqualsSingleBuild(t *testing.T) {
	n, l := 180, 60
	if testing.Short() || raceEnabled {
		n = 80
	}
	x := series(n, l, 3)
	for _, spec := range []string{"r=0.1:0.5:0.05", "density=0.01:0.10:0.01", "density=0.02,0.2,0.33"} {
		for _, abs := range []bool{false, true} {
			sp, err := Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			cfg := fc.Config{Measure: fc.Pearson, Abs: abs}
			sp.FC(&cfg)
			loose := build(t, x, n, l, cfg)
			for _, v := range sp.Values {
				got, _, err := Filter(loose, sp.Kind, v)
				if err != nil {
					t.Fatal(err)
				}
				one := fc.Config{Measure: fc.Pearson, Abs: abs}
				Spec{Kind: sp.Kind, Values: []float64{v}}.FC(&one)
				want := build(t, x, n, l, one)
				if err := sameNetwork(got, want); err != nil {
					t.Errorf("%s abs=%v at %g: %v", spec, abs, v, err)
				}
			}
		}
	}
}

// Ties: equal values at the density boundary go to the smaller (i, j), as fc's density mode.
func TestFilterDensityTies(t *testing.T) {
	n := 6
	loose := &network.Network{N: n, Indptr: make([]uint64, n+1)}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			loose.Indices = append(loose.Indices, uint32(j))
			loose.Weights = append(loose.Weights, 0.5)
		}
		loose.Indptr[i+1] = uint64(len(loose.Indices))
	}
	got, weakest, err := Filter(loose, KindDensity, 0.2) // k = round(0.2·15) = 3
	if err != nil {
		t.Fatal(err)
	}
	if got.Edges() != 3 || got.Indptr[1] != 3 || weakest != 0.5 {
		t.Fatalf("ties: got %v %v, want row 0's three edges", got.Indptr, got.Indices)
	}
}

func TestAnalyseAUCAndStability(t *testing.T) {
	n, l := 150, 60
	x := series(n, l, 5)
	sp, _ := Parse("density=0.02:0.10:0.02")
	cfg := fc.Config{Measure: fc.Pearson}
	sp.FC(&cfg)
	loose := build(t, x, n, l, cfg)
	res, err := Analyse(context.Background(), loose, sp, Options{HubSD: 1, Paths: true, Clustering: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 5 {
		t.Fatalf("%d points", len(res.Points))
	}
	// Hub stability is the share of thresholds with degree > mean + SD, recounted here.
	for i := 0; i < n; i++ {
		c := 0
		for _, deg := range res.Degrees {
			var s, ss float64
			for _, k := range deg {
				s += float64(k)
			}
			mu := s / float64(n)
			for _, k := range deg {
				ss += (float64(k) - mu) * (float64(k) - mu)
			}
			if float64(deg[i]) > mu+math.Sqrt(ss/float64(n)) {
				c++
			}
		}
		if want := float32(float64(c) / 5); res.HubStability[i] != want {
			t.Fatalf("node %d stability %g, want %g", i, res.HubStability[i], want)
		}
	}
	// AUC against numpy's trapezoid over the same points.
	pyref.Require(t, "numpy")
	var xs, ys []string
	for _, p := range res.Points {
		xs = append(xs, strconv.FormatFloat(p.Threshold, 'g', 17, 64))
		ys = append(ys, strconv.FormatFloat(p.ClusteringCoefficient, 'g', 17, 64)+":"+strconv.FormatFloat(p.GlobalEfficiency, 'g', 17, 64)+":"+strconv.FormatFloat(p.MeanDegree, 'g', 17, 64))
	}
	out := pyref.Run(t, `
import sys, numpy as np
x = np.array([float(v) for v in sys.argv[1].split(",")])
y = np.array([[float(v) for v in r.split(":")] for r in sys.argv[2].split(",")])
tr = getattr(np, "trapezoid", None) or np.trapz
print(" ".join(repr(float(tr(y[:, c], x))) for c in range(3)))
`, strings.Join(xs, ","), strings.Join(ys, ","))
	f := strings.Fields(string(out))
	for c, key := range []string{"clustering_coefficient", "global_efficiency", "mean_degree"} {
		want, _ := strconv.ParseFloat(f[c], 64)
		if got := res.AUC[key]; math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("AUC %s = %.17g, numpy %.17g", key, got, want)
		}
	}
	var tsv strings.Builder
	if err := res.Rows(func(f ...string) error { tsv.WriteString(strings.Join(f, "\t") + "\n"); return nil }); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(tsv.String(), "\n"); lines != 6 {
		t.Errorf("sweep.tsv body has %d lines, want 5 thresholds + auc", lines)
	}
	for _, format := range []string{"png", "svg"} {
		var b strings.Builder
		if err := res.Plot(&b, format); err != nil || b.Len() < 1000 {
			t.Errorf("plot %s: %v (%d bytes)", format, err, b.Len())
		}
	}
}

// Q and the small-world measures at each threshold equal those of the network built at that
// threshold alone, found by the same Leiden and the same random networks.
func TestAnalyseModularityAndSmallWorldPerThreshold(t *testing.T) {
	n, l, random := 120, 60, 6
	if testing.Short() || raceEnabled {
		n, random = 60, 3
	}
	x := series(n, l, 11)
	ctx := context.Background()
	lo := community.LeidenOptions{Seed: 3, MaxIterations: 2}
	swo := graph.SmallWorldOptions{Random: random, Seed: 5, SwapsPerEdge: 5, PathSources: 16}
	for _, spec := range []string{"density=0.03,0.06,0.12", "r=0.2,0.3,0.45"} {
		sp, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		cfg := fc.Config{Measure: fc.Pearson}
		sp.FC(&cfg)
		loose := build(t, x, n, l, cfg)
		res, err := Analyse(ctx, loose, sp, Options{HubSD: 1, Clustering: true, Paths: true, Modules: &lo, SmallWorld: &swo}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sw := res.SmallWorld; sw == nil || sw.RandomNetworks != random || sw.SwapsPerEdge != 5 || sw.PathSources != 16 || sw.Seed != 5 {
			t.Fatalf("%s: sweep.json's small_world %+v", spec, sw)
		}
		sigmas := 0
		for i, v := range sp.Values {
			one := fc.Config{Measure: fc.Pearson}
			Spec{Kind: sp.Kind, Values: []float64{v}}.FC(&one)
			g := graph.FromNetwork(build(t, x, n, l, one))
			p := res.Points[i]
			mod, err := community.LeidenModules(ctx, g, lo, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.Modularity == nil || *p.Modularity != mod.Q {
				t.Errorf("%s at %g: Q %v, built alone %g", spec, v, p.Modularity, mod.Q)
			}
			want, err := graph.SmallWorld(ctx, g, swo, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name string
				got  *float64
				want float64
			}{{"gamma", p.Gamma, want.Gamma}, {"lambda", p.Lambda, want.Lambda}, {"sigma", p.Sigma, want.Sigma}} {
				if c.got == nil || math.Abs(*c.got-c.want) > 1e-12*math.Abs(c.want) {
					t.Errorf("%s at %g: %s %v, built alone %.17g", spec, v, c.name, c.got, c.want)
				}
			}
			if p.Sigma != nil && *p.Sigma > 0 {
				sigmas++
			}
		}
		if sigmas != len(sp.Values) {
			t.Errorf("%s: σ defined and positive at %d of %d thresholds", spec, sigmas, len(sp.Values))
		}
		for _, key := range []string{"modularity", "sigma"} {
			ys := make([]float64, len(res.Points))
			for i := range res.Points {
				ys[i], _ = res.Points[i].Measure(key)
			}
			if got, want := res.AUC[key], Trapezoid(sp.Values, ys); got != want || want == 0 {
				t.Errorf("%s: AUC %s %g, trapezoid %g", spec, key, got, want)
			}
		}
	}
	// Measures known of the loosest network are taken there, and only there.
	sp, _ := Parse("density=0.03,0.06")
	cfg := fc.Config{Measure: fc.Pearson}
	sp.FC(&cfg)
	q := 0.123
	res, err := Analyse(ctx, build(t, x, n, l, cfg), sp, Options{Clustering: true, Paths: true, Modules: &lo, SmallWorld: &swo,
		Loosest: &Known{Modularity: &q, SmallWorld: &graph.SmallWorldResult{Gamma: 2, Lambda: 1, Sigma: 2, RandomClusteringMean: 0.1, RandomPathLengthMean: 2, CharacteristicPathLength: 2}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Points[1]; *p.Modularity != q || *p.Sigma != 2 {
		t.Errorf("loosest: Q %g σ %g, want the known 0.123 and 2", *p.Modularity, *p.Sigma)
	}
	if p := res.Points[0]; *p.Modularity == q || *p.Sigma == 2 {
		t.Errorf("density 0.03 took the loosest's known values")
	}
	// An empty network (no pair above r = 0.99) has neither Q nor σ: absent, no AUC.
	sp, _ = Parse("r=0.98,0.99")
	cfg = fc.Config{Measure: fc.Pearson}
	sp.FC(&cfg)
	res, err = Analyse(ctx, build(t, x, n, l, cfg), sp, Options{HubSD: 1, Clustering: true, Paths: true, Modules: &lo, SmallWorld: &swo}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Points[1]; p.Edges != 0 || p.Modularity != nil || p.Sigma != nil {
		t.Errorf("empty network: %d edges, Q %v, σ %v", p.Edges, p.Modularity, p.Sigma)
	}
	if _, ok := res.AUC["sigma"]; ok {
		t.Error("an AUC of σ over a threshold without σ")
	}
	if _, err := Analyse(ctx, build(t, x, n, l, cfg), sp, Options{SmallWorld: &swo}, nil); err == nil {
		t.Error("σ without C_p and L_p was accepted")
	}
}
