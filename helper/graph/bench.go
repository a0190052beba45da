package graph

import (
	"context"
	"time"
)

// BenchC2 times the parts of BENCHMARKS.md workload C2 that this package computes, on g (the
// 10,000-node, 1 %-density graph of random data): mean clustering C_p, exact L_p and E_glob
// (one shared MS-BFS sweep, so both keys carry the same duration) and one Maslov–Sneppen
// rewiring with 10 accepted swaps per edge. Keys follow the igraph peer's output
// (peers/igraph_metrics.py) so that ratios line up; the CLI's bench subcommand prints them.
func BenchC2(ctx context.Context, g *Graph) (map[string]time.Duration, error) {
	out := make(map[string]time.Duration)
	t0 := time.Now()
	if _, err := MeanClustering(ctx, g); err != nil {
		return nil, err
	}
	out["clustering_avglocal"] = time.Since(t0)
	t0 = time.Now()
	if _, err := ShortestPaths(ctx, g, nil); err != nil {
		return nil, err
	}
	out["char_path_length"] = time.Since(t0)
	out["global_efficiency"] = out["char_path_length"]
	t0 = time.Now()
	if _, _, err := Rewire(ctx, g, RewireOptions{SwapsPerEdge: 10, Seed: 1}, nil); err != nil {
		return nil, err
	}
	out["maslov_rewire_10x"] = time.Since(t0)
	return out, nil
}
