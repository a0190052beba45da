package graph

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"testing"
)

// c2Graph loads the C2 benchmark graph from $HUBSCOPE_C2_EDGES (int64 n, int64 m, then m int32
// rows, m int32 cols, m float32 weights — the peer's graph dumped by numpy), or else generates
// G(n = 10⁴, p = 0.01) with the same node and edge counts.
func c2Graph(b testing.TB) *Graph {
	b.Helper()
	path := os.Getenv("HUBSCOPE_C2_EDGES")
	if path == "" {
		return randomGraph(b, 10000, 0.01, 0, 42)
	}
	g, err := loadBinaryEdges(path)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func loadBinaryEdges(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var hdr [2]int64
	if err := binary.Read(f, binary.LittleEndian, &hdr); err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	n, m := int(hdr[0]), int(hdr[1])
	rows, cols, ws := make([]int32, m), make([]int32, m), make([]float32, m)
	for _, dst := range []any{rows, cols, ws} {
		if err := binary.Read(f, binary.LittleEndian, dst); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if _, err := f.Read(make([]byte, 1)); err != io.EOF {
		return nil, fmt.Errorf("%s: trailing data after %d edges", path, m)
	}
	edges := make([][2]int32, m)
	for e := range edges {
		edges[e] = [2]int32{rows[e], cols[e]}
	}
	return FromEdges(n, edges, ws)
}

func BenchmarkMeanClusteringC2(b *testing.B) {
	g := c2Graph(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := MeanClustering(context.Background(), g); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkShortestPathsC2(b *testing.B) {
	g := c2Graph(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := ShortestPaths(context.Background(), g, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSampledShortestPathsC2: the random networks' path lengths, 1,024 sampled sources
// (graph.SmallWorld's default) on the C2 graph.
func BenchmarkSampledShortestPathsC2(b *testing.B) {
	g := c2Graph(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := SampledShortestPaths(context.Background(), g, 1024, 1, 2); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRewireC2(b *testing.B) {
	g := c2Graph(b)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Rewire(context.Background(), g, RewireOptions{Seed: 1}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBenchC2Report prints BenchC2 on the C2 graph when HUBSCOPE_C2_EDGES is set (a manual
// measurement aid; it asserts nothing about time).
func TestBenchC2Report(t *testing.T) {
	if os.Getenv("HUBSCOPE_C2_EDGES") == "" {
		t.Skip("set HUBSCOPE_C2_EDGES to the C2 graph to time it")
	}
	g := c2Graph(t)
	ctx := context.Background()
	cp, err := MeanClustering(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := ShortestPaths(ctx, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("values: clustering_avglocal %.17g char_path_length %.17g global_efficiency %.17g", cp, ps.CharacteristicPathLength, ps.GlobalEfficiency)
	for rep := 0; rep < 3; rep++ {
		d, err := BenchC2(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("N=%d E=%d: %v", g.N, g.Edges(), d)
	}
}

func BenchmarkLocalEfficienciesC2(b *testing.B) {
	g := c2Graph(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := LocalEfficiencies(context.Background(), g, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWeightedClusteringC2(b *testing.B) {
	g := c2Graph(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := WeightedClusteringCoefficients(context.Background(), g); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBetweennessC2(b *testing.B) {
	g := c2Graph(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Betweenness(context.Background(), g, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEigenvectorCentralityC2(b *testing.B) {
	g := c2Graph(b)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := EigenvectorCentrality(context.Background(), g, EigenvectorOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSmallWorldC2: C_p and L_p of the graph and of 15 random networks (10 swaps/edge).
func BenchmarkSmallWorldC2(b *testing.B) {
	g := c2Graph(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := SmallWorld(context.Background(), g, SmallWorldOptions{Seed: 1}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
