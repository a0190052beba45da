package pipeline

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestOverlappedMetricsEqualSequential: with an accelerator the full metrics run their parts
// at once (global measures and random networks first, the leading eigenvector beside Leiden);
// with the CPU's own accelerator every part computes what it computes without one, so
// metrics.json and the staged maps must be the same as the sequential order's, value for value.
func TestOverlappedMetricsEqualSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n := 240
	var edges [][2]int
	seen := map[[2]int]bool{}
	for i := 0; i < n; i++ {
		for q := 0; q < 4; q++ {
			j := (i/40)*40 + rng.IntN(40)
			if rng.Float64() < 0.1 {
				j = rng.IntN(n)
			}
			if e := [2]int{min(i, j), max(i, j)}; i != j && !seen[e] {
				seen[e] = true
				edges = append(edges, e)
			}
		}
	}
	nw := csr(n, edges)
	s := &scan.Scan{N: n, L: 10, Source: "overlap.csv", Data: make([]float32, n*10)}
	fr := &fc.Report{Measure: fc.Pearson, Mode: fc.Density, Edges: nw.Edges(), Density: nw.Density(), Threshold: 0.5, Backend: "cpu"}
	cfg := Defaults()
	cfg.Metrics, cfg.Random = settings.MetricsFull, 3
	var out [2][]byte
	var staged [2][]string
	for k, acc := range []graph.Accelerator{nil, graph.CPU{}} {
		var mu sync.Mutex
		m, maps, err := computeMetrics(context.Background(), cfg, s, nw, fr, acc, progress.Discard, func(_ *Metrics, maps []nodeMap) error {
			mu.Lock()
			defer mu.Unlock()
			for _, mp := range maps {
				staged[k] = append(staged[k], mp.name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, mp := range maps {
			staged[k] = append(staged[k], mp.name)
		}
		slices.Sort(staged[k])
		if out[k], err = json.Marshal(m.Metrics); err != nil {
			t.Fatal(err)
		}
	}
	if string(out[0]) != string(out[1]) {
		t.Errorf("metrics differ:\nsequential %s\noverlapped %s", out[0], out[1])
	}
	if !slices.Equal(staged[0], staged[1]) {
		t.Errorf("maps staged: sequential %v, overlapped %v", staged[0], staged[1])
	}
}
