package graph

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/hubscope/hubscope/helper/internal/pyref"
	"github.com/hubscope/hubscope/helper/progress"
)

func edgeKey(u, v int32) uint64 {
	if u > v {
		u, v = v, u
	}
	return uint64(u)<<32 | uint64(uint32(v))
}

func TestEdgeSetAgainstMap(t *testing.T) {
	testEdgeSet[uint64](t)
	testEdgeSet[uint32](t)
}

func testEdgeSet[K uint32 | uint64](t *testing.T) {
	s := newEdgeSet[K](500)
	ref := map[K]bool{}
	rng := rand.New(rand.NewPCG(3, 4))
	for op := 0; op < 200000; op++ {
		// a small key space forces long probe runs and many deletions inside them
		k := K(rng.IntN(40))<<16 | K(40+rng.IntN(25))
		switch rng.IntN(3) {
		case 0:
			s.insert(k)
			ref[k] = true
		case 1:
			s.remove(k)
			delete(ref, k)
		default:
			if s.has(k) != ref[k] {
				t.Fatalf("op %d: has(%x) = %v, want %v", op, k, s.has(k), ref[k])
			}
		}
	}
	for k := range ref {
		if !s.has(k) {
			t.Fatalf("key %x lost", k)
		}
	}
}

func edgeList(g *Graph) []uint64 {
	var e []uint64
	for i := 0; i < g.N; i++ {
		for _, j := range g.Neighbors(i) {
			if int(j) > i {
				e = append(e, edgeKey(int32(i), j))
			}
		}
	}
	return e
}

func TestRewirePreservesDegreesAndRandomises(t *testing.T) {
	ctx := context.Background()
	for _, g := range []*Graph{randomGraph(t, 400, 0.05, 3, 21), geometricGraph(t, 500, 0.08, 22)} {
		r, st, err := Rewire(ctx, g, RewireOptions{Seed: 7}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Validate(); err != nil { // no self-loops, no multi-edges, symmetric
			t.Fatalf("rewired graph invalid: %v", err)
		}
		if r.N != g.N || r.Edges() != g.Edges() {
			t.Fatalf("rewired graph has N=%d E=%d, original N=%d E=%d", r.N, r.Edges(), g.N, g.Edges())
		}
		if !slices.Equal(Degrees(r), Degrees(g)) {
			t.Fatal("rewiring changed a node's degree")
		}
		if st.Swaps != 10*g.Edges() {
			t.Errorf("%d swaps for %d edges, want 10 per edge", st.Swaps, g.Edges())
		}
		orig := map[uint64]bool{}
		for _, e := range edgeList(g) {
			orig[e] = true
		}
		kept := 0
		for _, e := range edgeList(r) {
			if orig[e] {
				kept++
			}
		}
		if changed := 1 - float64(kept)/float64(g.Edges()); changed < 0.9 {
			t.Errorf("only %.1f %% of edges changed", 100*changed)
		}
		// Reproducible for a seed, different for another.
		r2, _, _ := Rewire(ctx, g, RewireOptions{Seed: 7}, nil)
		if !slices.Equal(edgeList(r), edgeList(r2)) {
			t.Error("same seed gave different random networks")
		}
		r3, _, _ := Rewire(ctx, g, RewireOptions{Seed: 8}, nil)
		if slices.Equal(edgeList(r), edgeList(r3)) {
			t.Error("different seeds gave the same random network")
		}
	}
}

// TestRewireLargeNodeIDs covers the 64-bit key path (N > 2¹⁶ nodes).
func TestRewireLargeNodeIDs(t *testing.T) {
	const n = 70000
	rng := rand.New(rand.NewPCG(8, 8))
	seen := map[uint64]bool{}
	var edges [][2]int32
	for len(edges) < 30000 {
		u, v := int32(rng.IntN(n)), int32(rng.IntN(n))
		if u != v && !seen[edgeKey(u, v)] {
			seen[edgeKey(u, v)] = true
			edges = append(edges, [2]int32{u, v})
		}
	}
	g, err := FromEdges(n, edges, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, st, err := Rewire(context.Background(), g, RewireOptions{Seed: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(Degrees(r), Degrees(g)) || st.Swaps != 10*g.Edges() {
		t.Fatalf("degrees changed or swaps short: %+v", st)
	}
}

func TestRewireImpossibleSwapsStop(t *testing.T) {
	// In a complete graph every swap would create a multi-edge: none may happen, and the
	// attempt cap must end the run.
	var edges [][2]int32
	for i := int32(0); i < 8; i++ {
		for j := i + 1; j < 8; j++ {
			edges = append(edges, [2]int32{i, j})
		}
	}
	g, err := FromEdges(8, edges, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, st, err := Rewire(context.Background(), g, RewireOptions{MaxAttemptsPerSwap: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Swaps != 0 || st.Attempts != 3*10*g.Edges() || !slices.Equal(edgeList(r), edgeList(g)) {
		t.Errorf("complete graph: %+v", st)
	}
}

func TestRewireCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Rewire(ctx, randomGraph(t, 300, 0.05, 0, 5), RewireOptions{}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestSmallWorld checks the bookkeeping of SmallWorld and, through igraph, the C_p and L_p of
// one of its random networks.
func TestSmallWorld(t *testing.T) {
	pyref.Require(t, "igraph")
	ctx := context.Background()
	g := geometricGraph(t, 500, 0.09, 31)
	var mu sync.Mutex
	seen := map[int]bool{}
	path := filepath.Join(t.TempDir(), "random0.txt")
	opt := SmallWorldOptions{Random: 6, Seed: 99, PerRandom: func(k int, r *Graph) error {
		if !slices.Equal(Degrees(r), Degrees(g)) {
			return errors.New("random network does not keep the degrees")
		}
		if k == 0 {
			writeEdges(t, r, path)
		}
		mu.Lock()
		seen[k] = true
		mu.Unlock()
		return nil
	}}
	res, err := SmallWorld(ctx, g, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 6 {
		t.Fatalf("PerRandom saw %d random networks, want 6", len(seen))
	}
	m, sd := meanSD(res.RandomClustering)
	if res.RandomClusteringMean != m || res.RandomClusteringSD != sd || sd <= 0 {
		t.Errorf("random C_p mean/SD %g/%g, recomputed %g/%g", res.RandomClusteringMean, res.RandomClusteringSD, m, sd)
	}
	if want := res.ClusteringCoefficient / res.RandomClusteringMean; !close(res.Gamma, want, 1e-12) {
		t.Errorf("γ = %g, want %g", res.Gamma, want)
	}
	if want := res.Gamma / (res.CharacteristicPathLength / res.RandomPathLengthMean); !close(res.Sigma, want, 1e-12) {
		t.Errorf("σ = %g, want %g", res.Sigma, want)
	}
	// A geometric graph is the textbook lattice-like case: far more clustered than its random
	// counterparts, with longer paths.
	if res.Gamma < 3 || res.Lambda < 1 || res.Sigma < 1.5 {
		t.Errorf("geometric graph: γ=%.2f λ=%.2f σ=%.2f, expected clear small-world/lattice signature", res.Gamma, res.Lambda, res.Sigma)
	}
	var ref struct {
		Cp  float64 `json:"cp"`
		Apl float64 `json:"apl"`
	}
	out := pyref.Run(t, `
import sys, json, igraph as ig
with open(sys.argv[1]) as f:
    n = int(f.readline()); E = [tuple(map(int, l.split()[:2])) for l in f]
G = ig.Graph(n=n, edges=E)
print(json.dumps({"cp": G.transitivity_avglocal_undirected(mode="zero"), "apl": G.average_path_length(unconn=True)}))
`, path)
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	if !close(res.RandomClustering[0], ref.Cp, 1e-9) || !close(res.RandomPathLength[0], ref.Apl, 1e-9) {
		t.Errorf("random network 0: C_p %.15g L_p %.15g, igraph %.15g %.15g", res.RandomClustering[0], res.RandomPathLength[0], ref.Cp, ref.Apl)
	}
	// Reproducible for a seed whatever the scheduling.
	opt.PerRandom = nil
	res2, err := SmallWorld(ctx, g, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.RandomClustering, res2.RandomClustering) || !slices.Equal(res.RandomPathLength, res2.RandomPathLength) {
		t.Error("same seed, different random-network measures")
	}
	// The hook's error stops the run.
	opt.PerRandom = func(int, *Graph) error { return errors.New("boom") }
	if _, err := SmallWorld(ctx, g, opt, nil); err == nil {
		t.Error("PerRandom's error was swallowed")
	}
}

// The bit-matrix chain draws the same random stream and applies the same swap rule as the
// hash-set chain, so both must give the very same random network (and the same counts).
func TestRewireBitsMatchesHashSet(t *testing.T) {
	ctx := context.Background()
	g := randomTestGraph(t, 700, 0.05, 11)
	opt := RewireOptions{SwapsPerEdge: 10, MaxAttemptsPerSwap: 100, Seed: 5, Stream: 3}
	rb, sb, err := rewireBits(ctx, g, opt, progress.Discard)
	if err != nil {
		t.Fatal(err)
	}
	rh, sh, err := rewire[uint32](ctx, g, opt, 16, progress.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if sb != sh {
		t.Fatalf("bit matrix: %+v, hash set: %+v", sb, sh)
	}
	if !slices.Equal(rb.Adj, rh.Adj) || !slices.Equal(rb.Offsets, rh.Offsets) {
		t.Fatal("the bit-matrix and hash-set chains gave different random networks")
	}
	if err := rb.Validate(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < g.N; i++ {
		if rb.Degree(i) != g.Degree(i) {
			t.Fatalf("node %d: degree %d, was %d", i, rb.Degree(i), g.Degree(i))
		}
	}
}

// randomTestGraph is a G(n, p) graph from a fixed seed.
func randomTestGraph(t *testing.T, n int, p float64, seed uint64) *Graph {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var e [][2]int32
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if rng.Float64() < p {
				e = append(e, [2]int32{int32(i), int32(j)})
			}
		}
	}
	g, err := FromEdges(n, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
