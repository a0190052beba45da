package graph

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/progress"
)

func TestGlobalMeasuresConsistentAndJSON(t *testing.T) {
	ctx := context.Background()
	g := geometricGraph(t, 400, 0.09, 41)
	s, err := GlobalMeasures(ctx, g, GlobalOptions{LocalEfficiency: true, DegreeDistribution: true,
		SmallWorld: &SmallWorldOptions{Random: 3, Seed: 1}, PowerLaw: PowerLawOptions{MinTail: 20}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := MeanClustering(ctx, g)
	ps, _ := ShortestPaths(ctx, g, nil)
	if s.ClusteringCoefficient != cp || s.CharacteristicPathLength != ps.CharacteristicPathLength || s.GlobalEfficiency != ps.GlobalEfficiency {
		t.Errorf("summary disagrees with the measures it gathers: %+v", s)
	}
	if s.SmallWorld == nil || s.DegreeDistribution == nil || s.LocalEfficiency == nil || s.WeightedClusteringCoefficient == nil {
		t.Fatalf("optional parts missing: %+v", s)
	}
	if s.SmallWorld.ClusteringCoefficient != cp || s.SmallWorld.CharacteristicPathLength != ps.CharacteristicPathLength {
		t.Errorf("small-world block uses C_p %g L_p %g, graph has %g %g", s.SmallWorld.ClusteringCoefficient, s.SmallWorld.CharacteristicPathLength, cp, ps.CharacteristicPathLength)
	}
	if s.MeanDegree != 2*float64(g.Edges())/float64(g.N) {
		t.Errorf("mean degree %g", s.MeanDegree)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("metrics do not encode as JSON: %v", err)
	}
	for _, key := range []string{`"clustering_coefficient"`, `"characteristic_path_length"`, `"global_efficiency"`, `"largest_component_share"`, `"small_world":{`, `"sigma"`, `"power_law":{`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("metrics.json lacks %s", key)
		}
	}
}

// TestDegenerateGraphs runs every measure on graphs with no nodes, no edges, one edge and a
// regular graph: no panic, no NaN (json.Marshal rejects NaN), undefined values flagged.
func TestDegenerateGraphs(t *testing.T) {
	ctx := context.Background()
	ring := make([][2]int32, 6)
	for i := range ring {
		ring[i] = [2]int32{int32(i), int32((i + 1) % 6)}
	}
	cases := map[string]struct {
		n     int
		edges [][2]int32
	}{
		"empty": {0, nil}, "no_edges": {5, nil}, "one_edge": {3, [][2]int32{{0, 2}}}, "ring": {6, ring},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			g, err := FromEdges(c.n, c.edges, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := GlobalMeasures(ctx, g, GlobalOptions{LocalEfficiency: true, DegreeDistribution: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := json.Marshal(s); err != nil {
				t.Fatalf("JSON: %v (%+v)", err, s)
			}
			if name == "ring" && s.Assortativity != nil {
				t.Errorf("ring: assortativity %g, undefined for a regular graph", *s.Assortativity)
			}
			if name == "ring" && (s.CharacteristicPathLength != 1.8 || s.Diameter != 3) {
				t.Errorf("ring C6: L_p %g diameter %d, want 1.8 and 3", s.CharacteristicPathLength, s.Diameter)
			}
			nd, err := NodalMeasures(ctx, g, NodalOptions{LocalEfficiency: true, Betweenness: true, Eigenvector: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := json.Marshal(nd); err != nil {
				t.Fatalf("nodal JSON: %v", err)
			}
			if _, err := SmallWorld(ctx, g, SmallWorldOptions{Random: 2}, nil); err == nil && g.Edges() < 2 {
				t.Error("small-world analysis of a graph with < 2 edges should be refused")
			}
		})
	}
}

func TestHubs(t *testing.T) {
	deg := []int{1, 2, 2, 3, 10, 2, 1, 9}
	// mean 3.75, population SD ≈ 3.27: threshold ≈ 7.02
	if h := Hubs(deg); !slices.Equal(h, []int32{4, 7}) {
		t.Errorf("hubs %v, want [4 7]", h)
	}
	z := DegreeZScores(deg)
	if z[4] <= 1 || z[0] >= 0 {
		t.Errorf("z-scores %v", z)
	}
}

func TestFromEdgesRejectsBadInput(t *testing.T) {
	for name, edges := range map[string][][2]int32{
		"self-loop": {{1, 1}}, "duplicate": {{0, 1}, {1, 0}}, "out of range": {{0, 3}}, "negative": {{-1, 0}},
	} {
		if _, err := FromEdges(3, edges, nil); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := FromEdges(3, [][2]int32{{0, 1}}, []float32{1, 2}); err == nil {
		t.Error("weights/edges length mismatch accepted")
	}
}

// TestCancellation: every long measure returns ctx's error promptly once it is cancelled.
func TestCancellation(t *testing.T) {
	g := randomGraph(t, 3000, 0.01, 0, 51)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checks := map[string]func() error{
		"paths":       func() error { _, err := ShortestPaths(ctx, g, nil); return err },
		"betweenness": func() error { _, err := Betweenness(ctx, g, nil); return err },
		"local eff":   func() error { _, err := LocalEfficiencies(ctx, g, nil); return err },
		"clustering":  func() error { _, err := MeanClustering(ctx, g); return err },
		"small world": func() error { _, err := SmallWorld(ctx, g, SmallWorldOptions{}, nil); return err },
		"eigenvector": func() error { _, _, err := EigenvectorCentrality(ctx, g, EigenvectorOptions{}); return err },
	}
	for name, f := range checks {
		if err := f(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", name, err)
		}
	}
	// Mid-run: betweenness on this graph takes far longer than the deadline.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := Betweenness(ctx2, randomGraph(t, 6000, 0.01, 0, 52), nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("betweenness after deadline: %v", err)
	}
}

// TestProgressCountsUnits: each long stage reports exactly its total.
func TestProgressCountsUnits(t *testing.T) {
	ctx := context.Background()
	g := randomGraph(t, 300, 0.03, 0, 61)
	stages := map[string]func(r *progress.Tracker) (int64, error){
		"paths":       func(r *progress.Tracker) (int64, error) { _, err := ShortestPaths(ctx, g, r); return int64(g.N), err },
		"betweenness": func(r *progress.Tracker) (int64, error) { _, err := Betweenness(ctx, g, r); return int64(g.N), err },
		"local eff": func(r *progress.Tracker) (int64, error) {
			_, err := LocalEfficiencies(ctx, g, r)
			return int64(g.N), err
		},
		"rewire": func(r *progress.Tracker) (int64, error) {
			_, _, err := Rewire(ctx, g, RewireOptions{}, r)
			return 10 * g.Edges(), err
		},
		"small world": func(r *progress.Tracker) (int64, error) {
			_, err := SmallWorld(ctx, g, SmallWorldOptions{Random: 3}, r)
			return 3, err
		},
	}
	for name, run := range stages {
		tr := progress.NewTracker()
		want, err := run(tr)
		if err != nil {
			t.Fatal(err)
		}
		if s := tr.Snapshot(); s.Done != want || s.Total != want {
			t.Errorf("%s: progress %d of %d, want %d of %d", name, s.Done, s.Total, want, want)
		}
	}
}

func TestEigenvectorNotConvergedKeepsIterate(t *testing.T) {
	g := geometricGraph(t, 300, 0.1, 91)
	x, _, err := EigenvectorCentrality(context.Background(), g, EigenvectorOptions{MaxIter: 2})
	if !errors.Is(err, ErrNotConverged) || len(x) != g.N {
		t.Fatalf("err = %v, %d values", err, len(x))
	}
}

// TestGlobalMeasuresReusesClustering: C_p from clustering coefficients computed beforehand
// equals GlobalMeasures' own, and coefficients of the wrong length are refused.
func TestGlobalMeasuresReusesClustering(t *testing.T) {
	g := randomGraph(t, 300, 0.05, 5, 11)
	ctx := context.Background()
	own, err := GlobalMeasures(ctx, g, GlobalOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := ClusteringCoefficients(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	given, err := GlobalMeasures(ctx, g, GlobalOptions{Clustering: cc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if given.ClusteringCoefficient != own.ClusteringCoefficient || own.ClusteringCoefficient == 0 {
		t.Fatalf("C_p %v from given coefficients, %v computed", given.ClusteringCoefficient, own.ClusteringCoefficient)
	}
	if _, err := GlobalMeasures(ctx, g, GlobalOptions{Clustering: cc[1:]}, nil); err == nil {
		t.Fatal("clustering of the wrong length accepted")
	}
}
