package community

import (
	"context"
	"encoding/binary"
	"os"
	"sync"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
)

var (
	w7Once         sync.Once
	w7Graph, w7Rnd *graph.Graph
)

// w7 loads W7's network (BENCHMARKS.md: the phantom on the 3 mm grey-matter mask at density
// 0.151 %, 51,618 nodes, 2,011,597 edges) from HUBSCOPE_W7_EDGES, little-endian int32 (i, j)
// pairs (for instance network.npz's upper triangle of `run --metrics none`), and its first
// random network as the pipeline makes it (seed 1, stream 0, 5 swaps per edge).
func w7(b *testing.B) (*graph.Graph, *graph.Graph) {
	b.Helper()
	path := os.Getenv("HUBSCOPE_W7_EDGES")
	if path == "" {
		b.Skip("HUBSCOPE_W7_EDGES names no W7 edge file")
	}
	w7Once.Do(func() {
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		edges := make([]edge, len(raw)/8)
		n := int32(0)
		for k := range edges {
			edges[k] = edge{int32(binary.LittleEndian.Uint32(raw[8*k:])), int32(binary.LittleEndian.Uint32(raw[8*k+4:])), 1}
			n = max(n, edges[k].i+1, edges[k].j+1)
		}
		w7Graph = fromEdges(int(n), edges)
		w7Graph.Weights = nil
		w7Rnd, _, err = graph.Rewire(context.Background(), w7Graph, graph.RewireOptions{SwapsPerEdge: 5, Seed: 1, Stream: 0}, nil)
		if err != nil {
			b.Fatal(err)
		}
	})
	return w7Graph, w7Rnd
}

func benchLeiden(b *testing.B, g *graph.Graph) {
	b.ResetTimer()
	defer reportCPU(b, processCPUSeconds())
	for i := 0; i < b.N; i++ {
		m, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: 1, MaxIterations: 2}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(m.Q, "Q")
		b.ReportMetric(float64(m.Count()), "modules")
	}
}

// BenchmarkLeidenW7 is the pipeline's Leiden call (seed 1, two repetitions) on W7's network.
func BenchmarkLeidenW7(b *testing.B) {
	g, _ := w7(b)
	benchLeiden(b, g)
}

// BenchmarkLeidenW7Random is the same call on W7's first random network (Q's z-score).
func BenchmarkLeidenW7Random(b *testing.B) {
	_, r := w7(b)
	benchLeiden(b, r)
}

// BenchmarkLeadingEigenvectorW7 is the pipeline's leading-eigenvector call (seed 1, one worker
// as on the CPU backend) on W7's network; "linked" counts its modules of ≥ 2 nodes.
func BenchmarkLeadingEigenvectorW7(b *testing.B) {
	g, _ := w7(b)
	b.ResetTimer()
	defer reportCPU(b, processCPUSeconds())
	for i := 0; i < b.N; i++ {
		m, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{Seed: 1}, nil)
		if err != nil {
			b.Fatal(err)
		}
		linked := 0
		for _, size := range m.Sizes {
			if size >= 2 {
				linked++
			}
		}
		b.ReportMetric(m.Q, "Q")
		b.ReportMetric(float64(linked), "linked")
	}
}
