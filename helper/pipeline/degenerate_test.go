package pipeline

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/dfc"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/settings"
)

// degenerateGraph is one of the small graphs every measure must turn into a result, with
// the values the conventions give (hand-computed; nil = undefined, written as null):
// C_p with C_i = 0 for degree < 2 (igraph transitivity_local_undirected mode="zero"), L_p
// over connected pairs (igraph average_path_length unconn=True; undefined without any), E_glob
// over all pairs (Latora & Marchiori; 0 without paths), diameter the longest finite distance,
// Newman's assortativity (undefined when the degrees at the edges' ends do not vary; −1 for a
// star, −1/2 for the path of four), and the best modularity Q (0 for one module holding
// every edge; undefined without edges).
type degenerateGraph struct {
	name                  string
	n                     int
	edges                 [][2]int
	cp, lp, eglob, assort *float64
	diameter, components  int
	largest               int
	q                     *float64
}

func degenerateGraphs() []degenerateGraph {
	star, complete := [][2]int{}, [][2]int{}
	for j := 1; j < 6; j++ {
		star = append(star, [2]int{0, j})
	}
	for i := 0; i < 5; i++ {
		for j := i + 1; j < 5; j++ {
			complete = append(complete, [2]int{i, j})
		}
	}
	f := func(v float64) *float64 { return &v }
	return []degenerateGraph{
		{"two nodes, no edge", 2, nil, f(0), nil, f(0), nil, 0, 2, 1, nil},
		{"two nodes, one edge", 2, [][2]int{{0, 1}}, f(0), f(1), f(1), nil, 1, 1, 2, f(0)},
		{"five nodes, no edges", 5, nil, f(0), nil, f(0), nil, 0, 5, 1, nil},
		{"five nodes, one edge", 5, [][2]int{{1, 3}}, f(0), f(1), f(0.1), nil, 1, 4, 2, f(0)},
		{"star of six", 6, star, f(0), f(25.0 / 15), f(10.0 / 15), f(-1), 2, 1, 6, f(0)},
		{"complete five", 5, complete, f(1), f(1), f(1), nil, 1, 1, 5, f(0)},
		{"two triangles, disconnected", 6, [][2]int{{0, 1}, {1, 2}, {0, 2}, {3, 4}, {4, 5}, {3, 5}}, f(1), f(1), f(0.4), nil, 1, 2, 3, f(0.5)},
		{"path of four", 4, [][2]int{{0, 1}, {1, 2}, {2, 3}}, f(0), f(10.0 / 6), f(13.0 / 18), f(-0.5), 3, 1, 4, f(1.0 / 6)},
	}
}

// csr builds the upper-triangle network of an edge list (i < j), weights 0.5.
func csr(n int, edges [][2]int) *network.Network {
	rows := make([][]uint32, n)
	for _, e := range edges {
		i, j := min(e[0], e[1]), max(e[0], e[1])
		rows[i] = append(rows[i], uint32(j))
	}
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1)}
	for i, r := range rows {
		nw.Indices = append(nw.Indices, r...)
		nw.Indptr[i+1] = uint64(len(nw.Indices))
	}
	nw.Weights = make([]float32, len(nw.Indices))
	for k := range nw.Weights {
		nw.Weights[k] = 0.5
	}
	return nw
}

// TestDegenerateNetworksAreResults runs every metric (full metrics with random networks)
// on each degenerate graph and writes metrics.json through the bundle writer: the write
// never fails, and every value is either a finite number or null with a reason in
// "undefined".
func TestDegenerateNetworksAreResults(t *testing.T) {
	for _, dg := range degenerateGraphs() {
		for _, level := range []string{settings.MetricsBasic, settings.MetricsFull} {
			t.Run(dg.name+"/"+level, func(t *testing.T) {
				nw := csr(dg.n, dg.edges)
				s := &scan.Scan{N: dg.n, L: 10, Source: "degenerate.csv", Data: make([]float32, dg.n*10)}
				fr := &fc.Report{Measure: fc.Pearson, Mode: fc.Density, Edges: nw.Edges(), Density: nw.Density(), Threshold: math.Inf(1), Backend: "cpu"}
				if len(dg.edges) > 0 {
					fr.Threshold = 0.5
				}
				cfg := Defaults()
				cfg.Metrics, cfg.Random = level, 3
				m, _, err := computeMetrics(context.Background(), cfg, s, nw, fr, nil, progress.Discard, func(*Metrics, []nodeMap) error { return nil })
				if err != nil {
					t.Fatalf("metrics: %v", err)
				}
				w, err := bundle.Create(filepath.Join(t.TempDir(), "b"), false)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Abort()
				if err := writeMetrics(w, m); err != nil {
					t.Fatalf("write: %v", err)
				}
				dir, err := w.Commit()
				if err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(filepath.Join(dir, "metrics.json"))
				var v map[string]any
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatal(err)
				}
				und, _ := v["undefined"].(map[string]any)
				for path, reason := range und {
					if r, _ := reason.(string); r == "" {
						t.Errorf("%s undefined without a reason", path)
					}
				}
				nulls := nullPaths(v, "")
				for _, p := range nulls {
					if _, ok := und[p]; !ok {
						t.Errorf("%s is null without a reason in \"undefined\"", p)
					}
				}
				t.Logf("null: %v", strings.Join(nulls, ", "))
				g, _ := v["global"].(map[string]any)
				if level == settings.MetricsBasic {
					g, _ = v["global_basic"].(map[string]any)
				}
				if g == nil {
					t.Fatalf("no global measures in %s", b)
				}
				check := func(key string, want *float64) {
					t.Helper()
					got, present := g[key]
					if want == nil {
						if got != nil || !present {
							t.Errorf("%s = %v, want null", key, got)
						}
						return
					}
					if x, ok := got.(float64); !ok || math.Abs(x-*want) > 1e-9 {
						t.Errorf("%s = %v, want %g", key, got, *want)
					}
				}
				f := func(n int) *float64 { x := float64(n); return &x }
				check("clustering_coefficient", dg.cp)
				check("assortativity", dg.assort)
				check("components", f(dg.components))
				check("largest_component_size", f(dg.largest))
				if level == settings.MetricsFull {
					check("characteristic_path_length", dg.lp)
					check("global_efficiency", dg.eglob)
					check("diameter", f(dg.diameter))
				}
				mods, _ := v["modules"].([]any)
				if dg.q == nil {
					if len(mods) != 0 || und["modules"] == nil {
						t.Errorf("modules %v without edges; want none and a reason", mods)
					}
				} else if len(mods) == 0 {
					t.Errorf("no modules")
				} else if q := mods[0].(map[string]any)["q"].(float64); math.Abs(q-*dg.q) > 1e-9 {
					t.Errorf("Q = %g, want %g", q, *dg.q)
				}
			})
		}
	}
}

// nullPaths lists the JSON paths (a.b[0].c) of the null values in a decoded document.
func nullPaths(v any, path string) []string {
	var out []string
	switch x := v.(type) {
	case nil:
		return []string{path}
	case map[string]any:
		for k, e := range x {
			if k == "undefined" && path == "" {
				continue
			}
			p := k
			if path != "" {
				p = path + "." + k
			}
			out = append(out, nullPaths(e, p)...)
		}
	case []any:
		for i, e := range x {
			out = append(out, nullPaths(e, path+"["+itoa(int64(i))+"]")...)
		}
	}
	return out
}

// TestDFCSummaryUndefined: a window that keeps no pair has no threshold and no modularity;
// dfc/summary.json leaves them out of its measures and says why in the window's "undefined".
func TestDFCSummaryUndefined(t *testing.T) {
	q := 0.3
	res := &dfc.Result{Windows: []dfc.Window{
		{Index: 0, Start: 0, Measures: dfc.Measures{Threshold: math.Inf(1)}},
		{Index: 1, Start: 5, Measures: dfc.Measures{Threshold: 0.5, Edges: 3, Density: 0.1, Modularity: &q}},
	}}
	cfg := Defaults()
	cfg.Metrics, cfg.DFCWindow, cfg.DFCStep = settings.MetricsBasic, 10, 5
	sum := dfcSummary(cfg, 2, res)
	w0, w1 := sum.Windows[0], sum.Windows[1]
	if _, ok := w0.Measures["threshold"]; ok || !strings.Contains(w0.Undefined["threshold"], "no pair of nodes is kept") ||
		!strings.Contains(w0.Undefined["modularity"], "no edges") {
		t.Errorf("empty window: measures %v, undefined %v", w0.Measures, w0.Undefined)
	}
	if w1.Undefined != nil || w1.Measures["threshold"] != 0.5 || w1.Measures["modularity"] != q {
		t.Errorf("full window: measures %v, undefined %v", w1.Measures, w1.Undefined)
	}
	if _, err := json.Marshal(sum); err != nil {
		t.Fatal(err)
	}
}
