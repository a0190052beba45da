package community

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/internal/pyref"
)

// c2Script builds BENCHMARKS.md's C2 graph exactly as the igraph peer (shared/peers/igraph_metrics.py beside the repository) does
// (10,000 random-normal series of length 200, seed 0, Pearson r, the top 1 % of the upper
// triangle) and writes its edges as little-endian int32 (i, j) pairs.
const c2Script = `
import sys, numpy as np
n, l, density, seed, out = 10000, 200, 0.01, 0, sys.argv[1]
X = np.random.default_rng(seed).standard_normal((n, l), dtype=np.float32)
X -= X.mean(1, keepdims=True); X /= np.linalg.norm(X, axis=1, keepdims=True)
R = X @ X.T; iu = np.triu_indices(n, 1); v = R[iu]
k = int(density * v.size); thr = np.partition(v, -k)[-k]
sel = v >= thr
np.column_stack([iu[0][sel], iu[1][sel]]).astype("<i4").tofile(out)
`

var (
	c2Once  sync.Once
	c2Graph *graph.Graph
)

// c2 loads (building and caching it on first use) the C2 benchmark graph. Set
// HUBSCOPE_C2_EDGES to reuse an edge file across runs.
func c2(b *testing.B) *graph.Graph {
	b.Helper()
	c2Once.Do(func() {
		path := os.Getenv("HUBSCOPE_C2_EDGES")
		if path == "" {
			path = filepath.Join(os.TempDir(), "hubscope-c2-edges-n10000-l200-d0.01-seed0.i32")
		}
		if _, err := os.Stat(path); err != nil {
			pyref.Require(b, "numpy")
			pyref.Run(b, c2Script, path)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		edges := make([]edge, len(raw)/8)
		for k := range edges {
			edges[k] = edge{int32(binary.LittleEndian.Uint32(raw[8*k:])), int32(binary.LittleEndian.Uint32(raw[8*k+4:])), 1}
		}
		c2Graph = fromEdges(10000, edges)
	})
	if c2Graph == nil {
		b.Fatal("C2 graph unavailable")
	}
	return c2Graph
}

func BenchmarkLeadingEigenvectorC2(b *testing.B) {
	g := c2(b)
	b.ResetTimer()
	defer reportCPU(b, processCPUSeconds())
	for i := 0; i < b.N; i++ {
		m, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(m.Q, "Q")
		b.ReportMetric(float64(m.Count()), "modules")
	}
}

func BenchmarkLeadingEigenvectorPowerC2(b *testing.B) {
	g := c2(b)
	b.ResetTimer()
	defer reportCPU(b, processCPUSeconds())
	for i := 0; i < b.N; i++ {
		m, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{Solver: PowerIteration}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(m.Q, "Q")
	}
}

func BenchmarkLeidenC2(b *testing.B) {
	g := c2(b)
	b.ResetTimer()
	defer reportCPU(b, processCPUSeconds())
	for i := 0; i < b.N; i++ {
		m, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: uint64(i)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(m.Q, "Q")
		b.ReportMetric(float64(m.Count()), "modules")
	}
}

func BenchmarkModularityC2(b *testing.B) {
	g := c2(b)
	membership := make([]int, g.N)
	for i := range membership {
		membership[i] = i % 7
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Modularity(g, membership, ModularityOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// reportCPU adds the CPU seconds per operation since start (all threads of the process).
func reportCPU(b *testing.B, start float64) {
	b.ReportMetric((processCPUSeconds()-start)/float64(b.N), "cpu-s/op")
}
