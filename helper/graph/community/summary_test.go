package community

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/progress"
)

func TestRelabelBySize(t *testing.T) {
	got := RelabelBySize([]int{5, 9, 9, 2, 9, 5, 7, -1, 2})
	// Sizes: 9→3, 5→2 (first at 0), 2→2 (first at 3), 7→1; unassigned → 0.
	want := []int{2, 1, 1, 3, 1, 2, 4, 0, 3}
	if !slices.Equal(got, want) {
		t.Fatalf("RelabelBySize = %v, want %v", got, want)
	}
}

func TestSummarize(t *testing.T) {
	g := fromEdges(6, []edge{{0, 1, 1}, {0, 2, 1}, {1, 2, 1}, {3, 4, 1}, {3, 5, 1}, {4, 5, 1}, {2, 3, 1}})
	m, err := Summarize("given", g, []int{4, 4, 4, 4, 1, 1}, ModularityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Count() != 2 || !slices.Equal(m.Sizes, []int{4, 2}) || !slices.Equal(m.Membership, []int{0, 0, 0, 0, 1, 1}) {
		t.Fatalf("summary %+v", m)
	}
	// Q = (8/14 − (10/14)²) + (2/14 − (4/14)²): modules {0,1,2,3} (L=8, K=10), {4,5} (L=2, K=4).
	want := 8.0/14 - 100.0/196 + 2.0/14 - 16.0/196
	if math.Abs(m.Q-want) > 1e-15 {
		t.Fatalf("Q = %v, want %v", m.Q, want)
	}
}

// NMI equals igraph's compare_communities(method="nmi") on related and unrelated partitions.
func TestNMIMatchesIgraph(t *testing.T) {
	requireIgraph(t)
	r := rand.New(rand.NewPCG(1, 2))
	n := 500
	a := make([]int, n)
	b := make([]int, n)
	c := make([]int, n)
	for i := range a {
		a[i] = i / 50
		b[i] = a[i]
		if r.Float64() < 0.3 {
			b[i] = r.IntN(12)
		}
		c[i] = r.IntN(4)
	}
	pairs := [][2][]int{{a, b}, {a, c}, {b, c}, {a, a}}
	dir := t.TempDir()
	path := writeJSON(t, dir, "pairs.json", pairs)
	out := pyref.Run(t, `
import sys, json, igraph as ig
print(json.dumps([ig.compare_communities(p, q, method="nmi") for p, q in json.load(open(sys.argv[1]))]))
`, path)
	var want []float64
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	for k, p := range pairs {
		got, err := NormalizedMutualInformation(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want[k]) > 1e-12 {
			t.Errorf("pair %d: NMI = %.15f, igraph %.15f", k, got, want[k])
		}
	}
	if _, err := NormalizedMutualInformation(a, b[:10]); err == nil {
		t.Error("length mismatch accepted")
	}
	if v, _ := NormalizedMutualInformation(make([]int, 5), make([]int, 5)); v != 1 {
		t.Errorf("two single-module partitions: NMI %v, want 1", v)
	}
}

// The z-score uses the sample SD: compare with numpy's std(ddof=1).
func TestModularityZScore(t *testing.T) {
	pyref.Require(t, "numpy")
	random := []float64{0.101, 0.097, 0.104, 0.099, 0.1, 0.098, 0.103, 0.102, 0.096, 0.1, 0.105, 0.099, 0.097, 0.101, 0.1}
	observed := 0.43
	path := writeJSON(t, t.TempDir(), "q.json", random)
	out := pyref.Run(t, `
import sys, json, numpy as np
q = np.array(json.load(open(sys.argv[1]))); obs = float(sys.argv[2])
print(json.dumps([q.mean(), q.std(ddof=1), (obs - q.mean()) / q.std(ddof=1)]))
`, path, "0.43")
	var want [3]float64
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	mean, sd, z, err := ModularityZScore(observed, random)
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range []float64{mean, sd, z} {
		if math.Abs(got-want[i]) > 1e-12*math.Max(1, math.Abs(want[i])) {
			t.Errorf("component %d: %.15g, numpy %.15g", i, got, want[i])
		}
	}
	if _, _, _, err := ModularityZScore(0.4, []float64{0.1}); err == nil {
		t.Error("a single random network accepted")
	}
	if _, _, _, err := ModularityZScore(0.4, []float64{0.1, 0.1, 0.1}); err == nil {
		t.Error("zero spread accepted")
	}
}

// Equal seeds give equal partitions; the result is a valid partition whose Q is recomputed.
func TestLeidenDeterministic(t *testing.T) {
	n, edges, _ := plantedPartition([]int{120, 100, 80, 60}, 0.1, 0.02, 4)
	g := fromEdges(n, edges)
	a, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Membership, b.Membership) || a.Q != b.Q {
		t.Fatal("same seed, different partitions")
	}
	q, _ := Modularity(g, a.Membership, ModularityOptions{})
	if q != a.Q {
		t.Fatalf("reported Q %v, recomputed %v", a.Q, q)
	}
	// Weighted and γ ≠ 1 run and report Q with the same options.
	w, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: 1, Weighted: true, Resolution: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	qw, _ := Modularity(g, w.Membership, ModularityOptions{Weighted: true, Resolution: 2})
	if qw != w.Q || w.Count() < a.Count() {
		t.Fatalf("weighted γ=2: Q %v (recomputed %v), %d modules vs %d at γ=1", w.Q, qw, w.Count(), a.Count())
	}
}

// Isolated nodes and several components: each component is split on its own and isolated
// nodes stay alone, for both methods.
func TestDisconnectedGraph(t *testing.T) {
	// Two cliques of 5 with no edge between them, plus 2 isolated nodes.
	var edges []edge
	for c := 0; c < 2; c++ {
		for i := 0; i < 5; i++ {
			for j := i + 1; j < 5; j++ {
				edges = append(edges, edge{int32(5*c + i), int32(5*c + j), 1})
			}
		}
	}
	g := fromEdges(12, edges)
	le, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := LeidenModules(context.Background(), g, LeidenOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 3}
	// The connectivity check used on Leiden's output notices a module made of two cliques.
	if bad := disconnectedModule(g, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2}); bad != 0 {
		t.Fatalf("disconnectedModule = %d, want 0", bad)
	}
	if bad := disconnectedModule(g, want); bad != -1 {
		t.Fatalf("disconnectedModule = %d on connected modules", bad)
	}
	for _, m := range []*Modules{le, ld} {
		if !slices.Equal(m.Membership, want) || math.Abs(m.Q-0.5) > 1e-15 {
			t.Errorf("%s: membership %v Q %v, want %v Q 0.5", m.Method, m.Membership, m.Q, want)
		}
	}
}

// A cancelled context stops both methods with context.Canceled, and progress reaches all
// nodes for a completed leading-eigenvector run.
func TestCancellationAndProgress(t *testing.T) {
	n, edges, _ := plantedPartition([]int{300, 300, 300}, 0.05, 0.01, 6)
	g := fromEdges(n, edges)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LeadingEigenvectorModules(ctx, g, LeadingEigenvectorOptions{}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("leading eigenvector with cancelled context: %v", err)
	}
	if _, err := LeidenModules(ctx, g, LeidenOptions{}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Leiden with cancelled context: %v", err)
	}
	// Cancel during a power-iteration run that would otherwise take long.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	_, err := LeadingEigenvectorModules(ctx2, g, LeadingEigenvectorOptions{Solver: PowerIteration, Tolerance: 1e-300, MaxProducts: 1 << 30}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("power iteration past its deadline: %v", err)
	}
	tr := progress.NewTracker()
	if _, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{}, tr); err != nil {
		t.Fatal(err)
	}
	if s := tr.Snapshot(); s.Done != int64(n) || s.Total != int64(n) {
		t.Errorf("progress %d/%d, want %d/%d", s.Done, s.Total, n, n)
	}
}

// MinEigenvalue and MaxModules cap the divisions.
func TestLeadingEigenvectorCaps(t *testing.T) {
	n, edges, _ := plantedPartition([]int{200, 200, 200, 200}, 0.1, 0.005, 12)
	g := fromEdges(n, edges)
	full, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	capped, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{MaxModules: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if full.Count() < 4 || capped.Count() != 2 {
		t.Fatalf("modules: full %d, capped %d", full.Count(), capped.Count())
	}
	// A threshold above every accepted eigenvalue forbids all divisions.
	top := slices.Max(full.Eigenvalues)
	none, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{MinEigenvalue: top + 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if none.Count() != 1 || none.Q != 0 {
		t.Fatalf("threshold above β: %d modules, Q %v", none.Count(), none.Q)
	}
}

// The unweighted base level counts links in integers (and reads 16-bit indices); with every
// weight 1 the weighted path's float sums are the same whole numbers. Both must give the same
// partition and the same Q bit for bit, over several levels and both repetitions, and
// Modularity's count path must equal its float path.
func TestLeidenCountsEqualUnitWeights(t *testing.T) {
	for _, seed := range []uint64{3, 11} {
		n, edges, _ := plantedPartition([]int{150, 90, 60, 40, 25}, 0.08, 0.015, seed)
		for k := range edges {
			edges[k].w = 1
		}
		g := fromEdges(n, edges)
		plain, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: seed}, nil)
		if err != nil {
			t.Fatal(err)
		}
		unit, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: seed, Weighted: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(plain.Membership, unit.Membership) || plain.Q != unit.Q {
			t.Fatalf("seed %d: counts give Q %.17g (%d modules), unit weights %.17g (%d modules)",
				seed, plain.Q, plain.Count(), unit.Q, unit.Count())
		}
		for _, gamma := range []float64{1, 1.7} {
			qc, err := Modularity(g, plain.Membership, ModularityOptions{Resolution: gamma})
			if err != nil {
				t.Fatal(err)
			}
			qf, _ := Modularity(g, plain.Membership, ModularityOptions{Resolution: gamma, Weighted: true})
			if qc != qf {
				t.Fatalf("seed %d, γ %v: Modularity by counts %.17g, by unit weights %.17g", seed, gamma, qc, qf)
			}
		}
	}
}
