package bundle_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/scan"
)

// A pipeline writes every result into the Writer and commits once; any failure before that
// leaves no bundle behind.
func Example() {
	tmp, err := os.MkdirTemp("", "hubscope-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	// Three regions of a plain time-series matrix, one edge 0–2 with r = 0.62.
	s := &scan.Scan{N: 3, L: 100, Labels: []string{"PCC", "mPFC", "LIPC"}}
	nw := &network.Network{N: 3, Indptr: []uint64{0, 1, 1, 1}, Indices: []uint32{2}, Weights: []float32{0.62}}

	w, err := bundle.Create(filepath.Join(tmp, "sub-01"), false)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort() // no-op after a successful Commit
	if err := w.WriteNodes(s); err != nil {
		log.Fatal(err)
	}
	if err := w.WriteNetwork(nw); err != nil {
		log.Fatal(err)
	}
	if err := w.WriteJSON("metrics.json", map[string]any{"nodes": nw.N, "edges": nw.Edges()}); err != nil {
		log.Fatal(err)
	}
	dir, err := w.Commit()
	if err != nil {
		log.Fatal(err)
	}

	back, err := bundle.ReadNetwork(filepath.Join(dir, "network.npz"))
	if err != nil {
		log.Fatal(err)
	}
	edges, _ := os.ReadFile(filepath.Join(dir, "edges.tsv"))
	fmt.Printf("%d nodes, %d edge, weight %v\n%s", back.N, back.Edges(), back.Weights[0], edges)
	// Output:
	// 3 nodes, 1 edge, weight 0.62
	// i	j	weight
	// 0	2	0.62
}
