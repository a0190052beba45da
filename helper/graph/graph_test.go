package graph

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/network"
)

// TestFromNetworkMatchesFromEdges: the symmetric CSR derived from the upper triangle equals the
// one built from the same edge list, and is valid (sorted, symmetric, weights mirrored).
func TestFromNetworkMatchesFromEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 1))
	const n = 300
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1)}
	var edges [][2]int32
	var ws []float32
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if rng.Float64() < 0.04 {
				w := float32(rng.Float64())
				nw.Indices = append(nw.Indices, uint32(j))
				nw.Weights = append(nw.Weights, w)
				edges = append(edges, [2]int32{int32(j), int32(i)}) // reversed on purpose
				ws = append(ws, w)
			}
		}
		nw.Indptr[i+1] = uint64(len(nw.Indices))
	}
	if err := nw.Validate(); err != nil {
		t.Fatal(err)
	}
	a := FromNetwork(nw)
	b, err := FromEdges(n, edges, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Graph{a, b} {
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(a.Offsets, b.Offsets) || !slices.Equal(a.Adj, b.Adj) || !slices.Equal(a.Weights, b.Weights) {
		t.Fatal("FromNetwork and FromEdges disagree")
	}
	if a.Edges() != nw.Edges() || a.Density() != nw.Density() {
		t.Errorf("E %d density %g, network says %d %g", a.Edges(), a.Density(), nw.Edges(), nw.Density())
	}
	for _, e := range edges[:50] {
		if !a.HasEdge(int(e[0]), int(e[1])) || !a.HasEdge(int(e[1]), int(e[0])) {
			t.Fatalf("edge %v missing", e)
		}
	}
}

func TestValidateCatchesBrokenGraphs(t *testing.T) {
	good := func() *Graph {
		g, _ := FromEdges(3, [][2]int32{{0, 1}, {1, 2}}, []float32{0.5, 0.7})
		return g
	}
	cases := map[string]func(g *Graph){
		"asymmetric":       func(g *Graph) { g.Adj[0] = 2 },       // 0 lists 2, 2 does not list 0
		"weight mismatch":  func(g *Graph) { g.Weights[0] = 0.9 }, // (0,1) vs (1,0)
		"self-loop":        func(g *Graph) { g.Adj[1] = 1 },       // row 1 lists itself
		"offsets too long": func(g *Graph) { g.Offsets = append(g.Offsets, 4) },
		"out of range":     func(g *Graph) { g.Adj[len(g.Adj)-1] = 7 },
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, breakIt := range cases {
		g := good()
		breakIt(g)
		if err := g.Validate(); err == nil {
			t.Errorf("%s: Validate accepted it", name)
		}
	}
}

// TestTrianglesWideIndices: graphs above 2¹⁶ nodes take the 32-bit index path; padding a graph
// with isolated nodes must not change any triangle count.
func TestTrianglesWideIndices(t *testing.T) {
	small := geometricGraph(t, 300, 0.12, 97)
	var edges [][2]int32
	for i := 0; i < small.N; i++ {
		for _, j := range small.Neighbors(i) {
			if int(j) > i {
				// spread the nodes over the wide index range
				edges = append(edges, [2]int32{int32(i) * 250, j * 250})
			}
		}
	}
	wide, err := FromEdges(300*250, edges, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Triangles(context.Background(), small)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Triangles(context.Background(), wide)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for i := range a {
		if a[i] != b[i*250] {
			t.Fatalf("node %d: %d triangles, %d after padding", i, a[i], b[i*250])
		}
		total += a[i]
	}
	if total == 0 {
		t.Fatal("test graph has no triangles")
	}
}

// TestTrianglesBitRows: Triangles intersects the hubs' rows as bit rows and the others entry by
// entry (docs/algorithms.md, "Triangles"), or every row entry by entry where the bit rows would
// hold less than half of the scan. A graph with hubs and a long tail takes the first way with
// both kinds of rows, one without hubs the second; on both every node's count equals the plain
// count over all pairs of its neighbours, in both index widths.
func TestTrianglesBitRows(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		p    func(i, j int) float64
		bits bool
	}{
		{"hubs", 700, func(i, j int) float64 { return min(1, 9*math.Pow(float64((i+1)*(j+1)), -0.7)) }, true},
		{"no hubs", 4000, func(i, j int) float64 { return 0.006 }, false},
	} {
		n := tc.n
		rng := rand.New(rand.NewPCG(5, 6))
		var edges [][2]int32
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if rng.Float64() < tc.p(i, j) {
					edges = append(edges, [2]int32{int32(i), int32(j)})
				}
			}
		}
		g, err := FromEdges(n, edges, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Which rows take which path, as triangles decides it.
		rank, _ := degreeRanks(g)
		var bitRows, entryRows int
		var scan, bitScan float64
		for i := 0; i < n; i++ {
			var o int64
			for _, j := range g.Neighbors(i) {
				if rank[j] > rank[i] {
					o++
				}
			}
			w := float64(int64(g.Degree(i))-o) * float64(o)
			scan += w
			switch words := int64((n-1)>>6 - int(rank[i]+1)>>6 + 1); {
			case int(rank[i])+1 < n && 2*words <= o:
				bitRows++
				bitScan += w
			case o >= 2:
				entryRows++
			}
		}
		if bits := 2*bitScan >= scan; bits != tc.bits || bits && (bitRows < 20 || entryRows < 20) {
			t.Fatalf("%s: %d bit rows with %.0f of %.0f of the scan, %d entry rows: not the path meant", tc.name, bitRows, bitScan, scan, entryRows)
		}
		want := make([]int64, n)
		var total int64
		for i := 0; i < n; i++ {
			nb := g.Neighbors(i)
			for a := range nb {
				for b := a + 1; b < len(nb); b++ {
					if g.HasEdge(int(nb[a]), int(nb[b])) {
						want[i]++
					}
				}
			}
			total += want[i]
		}
		if total == 0 {
			t.Fatalf("%s: no triangles", tc.name)
		}
		for name, count := range map[string]func(context.Context, *Graph) ([]int64, error){
			"16-bit": triangles[uint16], "32-bit": triangles[int32]} {
			got, err := count(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s, %s: node %d (degree %d): %d triangles, want %d", tc.name, name, i, g.Degree(i), got[i], want[i])
				}
			}
		}
	}
}
