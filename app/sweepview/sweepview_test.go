package sweepview

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/sweep"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Parse reads sweep.json as helper/sweep writes it (the engine's own type, marshalled), in
// increasing threshold order; the path and clustering curves are drawn only when the sweep
// measured them (they have an AUC); the words name the marked threshold and the AUCs.
func TestParse(t *testing.T) {
	res := sweep.Result{Sweep: schema.Sweep{Spec: schema.SweepSpec{Kind: "r", Values: []float64{0.5, 0.4, 0.3}}, HubSD: 1,
		AUC: map[string]float64{"hubs": 12, "clustering_coefficient": 0.05}}}
	w := 0.42
	for i, th := range []float64{0.5, 0.4, 0.3} {
		res.Points = append(res.Points, sweep.Point{Threshold: th, WeakestValue: &w, Hubs: 10 + i, ClusteringCoefficient: 0.1 * float64(i+1), MeanDegree: 3})
	}
	b, err := json.Marshal(&res)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	x, y := s.Values("hubs")
	if len(x) != 3 || x[0] != 0.3 || x[2] != 0.5 || y[0] != 12 || y[2] != 10 {
		t.Fatalf("hubs curve x %v y %v", x, y)
	}
	if _, c := s.Values("clustering_coefficient"); math.Abs(c[0]-0.3) > 1e-12 {
		t.Fatalf("C_p curve %v", c)
	}
	shown := map[string]bool{}
	for _, c := range Curves {
		shown[c.Key] = s.Shown(c)
	}
	if !shown["clustering_coefficient"] || shown["modularity"] || shown["sigma"] || shown["characteristic_path_length"] || shown["global_efficiency"] || !shown["hubs"] {
		t.Fatalf("curves shown %v", shown)
	}
	if s.Loosest() != 0.3 {
		t.Fatalf("loosest r %g, want 0.3", s.Loosest())
	}
	text := strings.Join(s.Lines(0.3, true), "\n")
	for _, want := range []string{"Thresholds (r): 0.3, 0.4, 0.5", "r = 0.3, the threshold of this bundle's own network", "hubs 12", "clustering_coefficient 0.05"} {
		if !strings.Contains(text, want) {
			t.Errorf("words lack %q:\n%s", want, text)
		}
	}
	if _, err := Parse([]byte(`{"thresholds": []}`)); err == nil {
		t.Error("a sweep without thresholds was read")
	}
}
