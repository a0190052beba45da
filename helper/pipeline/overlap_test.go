package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestOverlappedMetricsEqualSequential: with an accelerator the full metrics run their parts
// at once (global measures, random networks and Leiden first, the leading eigenvector beside them);
// with the CPU's own accelerator every part computes what it computes without one, so
// metrics.json and the staged maps must be the same as the sequential order's, value for value.
func TestOverlappedMetricsEqualSequential(t *testing.T) {
	s, nw, fr := overlapNetwork()
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

// overlapNetwork is a 240-node graph of local links with some long ones, as its scan and report.
func overlapNetwork() (*scan.Scan, *network.Network, *fc.Report) {
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
	return s, nw, fr
}

// failingRewire is the CPU accelerator whose second random network fails.
type failingRewire struct {
	graph.CPU
	calls atomic.Int32
}

func (f *failingRewire) Rewire(ctx context.Context, g *graph.Graph, opt graph.RewireOptions) (*graph.Graph, graph.RewireStats, error) {
	if f.calls.Add(1) == 2 {
		return nil, graph.RewireStats{}, errors.New("device lost")
	}
	return f.CPU.Rewire(ctx, g, opt)
}

// TestFailedBackgroundStage: random networks that fail beside the other stages (with an
// accelerator) fail the metrics with their error, and the display shows their stage failed
// with that error, never complete.
func TestFailedBackgroundStage(t *testing.T) {
	s, nw, fr := overlapNetwork()
	cfg := Defaults()
	cfg.Metrics, cfg.Random = settings.MetricsFull, 3
	var buf bytes.Buffer
	d := progress.NewDisplay(&buf)
	_, _, err := computeMetrics(context.Background(), cfg, s, nw, fr, &failingRewire{}, d, func(*Metrics, []nodeMap) error { return nil })
	d.Close(err == nil)
	out := buf.String()
	if err == nil || !strings.Contains(err.Error(), "device lost") {
		t.Fatalf("metrics with a failing random network: %v", err)
	}
	if !regexp.MustCompile(`small-world: random networks: \d+% \(\d/3\) .* — failed: .*device lost`).MatchString(out) ||
		strings.Contains(out, "random networks: 100%") {
		t.Errorf("display:\n%s", out)
	}
}
