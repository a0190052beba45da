package graph

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gonumgraph "gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/network"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/hubscope/hubscope/helper/graph/graphtest"
)

// The in-Go oracles: published values of Zachary's karate club, hand-checkable small graphs,
// and gonum's independent implementations on random graphs. They run without Python, so a
// plain go test checks every measure here against numbers HubScope did not compute.

func karate(t *testing.T) *Graph {
	t.Helper()
	g, err := FromEdges(graphtest.KarateNodes, graphtest.Karate, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestKarateClubPublishedValues(t *testing.T) {
	ctx := context.Background()
	g := karate(t)
	if g.N != 34 || g.Edges() != 78 {
		t.Fatalf("karate club: %d nodes, %d edges", g.N, g.Edges())
	}
	bc, err := Betweenness(ctx, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range graphtest.KarateBetweenness {
		if !near(bc[i], want, 1e-5) {
			t.Errorf("betweenness of member %d: %.6f, published %.6f", i+1, bc[i], want)
		}
	}
	cc, err := ClusteringCoefficients(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range graphtest.KarateClustering {
		if !near(cc[i], want, 1e-6) {
			t.Errorf("clustering of member %d: %.6f, published %.6f", i+1, cc[i], want)
		}
	}
	if m, err := MeanClustering(ctx, g); err != nil || !near(m, graphtest.KarateMeanClustering, 1e-12) {
		t.Errorf("mean clustering %.12f (%v), published %.12f", m, err, graphtest.KarateMeanClustering)
	}
	ps, err := ShortestPaths(ctx, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !near(ps.CharacteristicPathLength, graphtest.KaratePathLength, 1e-12) || !near(ps.GlobalEfficiency, graphtest.KarateGlobalEfficiency, 1e-12) ||
		ps.Diameter != graphtest.KarateDiameter || ps.ConnectedPairs != 34*33/2 {
		t.Errorf("paths: L_p %.12f E_glob %.12f diameter %d pairs %d; published %.12f %.12f %d 561", ps.CharacteristicPathLength,
			ps.GlobalEfficiency, ps.Diameter, ps.ConnectedPairs, graphtest.KaratePathLength, graphtest.KarateGlobalEfficiency, graphtest.KarateDiameter)
	}
	le, err := LocalEfficiencies(ctx, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := mean64(le); !near(m, graphtest.KarateLocalEfficiency, 1e-12) {
		t.Errorf("mean local efficiency %.12f, published %.12f", m, graphtest.KarateLocalEfficiency)
	}
	if r, ok := DegreeAssortativity(g); !ok || !near(r, graphtest.KarateAssortativity, 1e-12) {
		t.Errorf("assortativity %.12f, published %.12f", r, graphtest.KarateAssortativity)
	}
}

func mean64(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// TestHandCheckableGraphs: graphs whose measures follow from counting by hand.
func TestHandCheckableGraphs(t *testing.T) {
	ctx := context.Background()
	path := func(n int) [][2]int32 {
		var e [][2]int32
		for i := 0; i+1 < n; i++ {
			e = append(e, [2]int32{int32(i), int32(i + 1)})
		}
		return e
	}
	star := func(n int) [][2]int32 {
		var e [][2]int32
		for i := 1; i < n; i++ {
			e = append(e, [2]int32{0, int32(i)})
		}
		return e
	}
	complete := func(n int) [][2]int32 {
		var e [][2]int32
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				e = append(e, [2]int32{int32(i), int32(j)})
			}
		}
		return e
	}
	for _, c := range []struct {
		name        string
		n           int
		edges       [][2]int32
		lp, eglob   float64
		diameter    int
		clustering  float64
		centreBetw  float64 // betweenness of node 0 (path: node 1)
		betwNode    int
		components  int
		largestPart float64
	}{
		// Path 0–1–2–3: distances 1,1,1,2,2,3 → L_p = 10/6, E_glob = (3 + 2·½ + ⅓)/6; node 1 lies
		// on the shortest paths 0–2 and 0–3: betweenness 2.
		{"path of 4", 4, path(4), 10.0 / 6, (3 + 1 + 1.0/3) / 6, 3, 0, 2, 1, 1, 1},
		// Star with 5 leaves: leaf pairs at distance 2 (10 of them), hub pairs at 1 (5):
		// L_p = 25/15, E_glob = (5 + 10·½)/15, the hub on all 10 leaf–leaf paths.
		{"star of 6", 6, star(6), 25.0 / 15, 10.0 / 15, 2, 0, 10, 0, 1, 1},
		// Complete graph on 5: everything at distance 1, clustering 1, nobody in between.
		{"K5", 5, complete(5), 1, 1, 1, 1, 0, 0, 1, 1},
		// Two disjoint triangles: L_p over connected pairs only (1), E_glob over all 15 pairs
		// (6 of them at distance 1), two components of half the nodes.
		{"two triangles", 6, [][2]int32{{0, 1}, {1, 2}, {0, 2}, {3, 4}, {4, 5}, {3, 5}}, 1, 6.0 / 15, 1, 1, 0, 0, 2, 0.5},
	} {
		g, err := FromEdges(c.n, c.edges, nil)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := ShortestPaths(ctx, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !near(ps.CharacteristicPathLength, c.lp, 1e-12) || !near(ps.GlobalEfficiency, c.eglob, 1e-12) || ps.Diameter != c.diameter {
			t.Errorf("%s: L_p %v E_glob %v diameter %d, want %v %v %d", c.name, ps.CharacteristicPathLength, ps.GlobalEfficiency, ps.Diameter, c.lp, c.eglob, c.diameter)
		}
		if m, _ := MeanClustering(ctx, g); !near(m, c.clustering, 1e-12) {
			t.Errorf("%s: mean clustering %v, want %v", c.name, m, c.clustering)
		}
		bc, _ := Betweenness(ctx, g, nil)
		if !near(bc[c.betwNode], c.centreBetw, 1e-12) {
			t.Errorf("%s: betweenness of node %d %v, want %v", c.name, c.betwNode, bc[c.betwNode], c.centreBetw)
		}
		if comps, _, share := LargestComponent(g); comps != c.components || !near(share, c.largestPart, 1e-12) {
			t.Errorf("%s: %d components, largest share %v; want %d, %v", c.name, comps, share, c.components, c.largestPart)
		}
	}
}

// gonumRandomGraph is an Erdős–Rényi graph G(n, p) as an edge list and as a gonum graph.
func gonumRandomGraph(n int, p float64, seed uint64) ([][2]int32, *simple.UndirectedGraph) {
	rng := rand.New(rand.NewPCG(seed, 7))
	ug := simple.NewUndirectedGraph()
	for i := 0; i < n; i++ {
		ug.AddNode(simple.Node(i))
	}
	var e [][2]int32
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if rng.Float64() < p {
				e = append(e, [2]int32{int32(i), int32(j)})
				ug.SetEdge(simple.Edge{F: simple.Node(i), T: simple.Node(j)})
			}
		}
	}
	return e, ug
}

// TestAgainstGonum compares betweenness and connected components with gonum's independent
// implementations (network.Betweenness, topo.ConnectedComponents) on random graphs from
// sparse (many components) to dense.
func TestAgainstGonum(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		n int
		p float64
	}{{60, 0.02}, {80, 0.05}, {120, 0.1}, {50, 0.3}} {
		edges, ug := gonumRandomGraph(c.n, c.p, uint64(c.n))
		g, err := FromEdges(c.n, edges, nil)
		if err != nil {
			t.Fatal(err)
		}
		bc, err := Betweenness(ctx, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		// gonum counts each unordered pair from both ends on an undirected graph.
		ref := network.Betweenness(ug)
		for i := 0; i < c.n; i++ {
			if want := ref[int64(i)] / 2; !near(bc[i], want, 1e-9*math.Max(1, want)) {
				t.Fatalf("G(%d, %g): betweenness of node %d %v, gonum %v", c.n, c.p, i, bc[i], want)
			}
		}
		label, sizes := Components(g)
		comps := topo.ConnectedComponents(ug)
		if len(comps) != len(sizes) {
			t.Fatalf("G(%d, %g): %d components, gonum %d", c.n, c.p, len(sizes), len(comps))
		}
		ours := append([]int(nil), sizes...)
		var theirs []int
		for _, comp := range comps {
			theirs = append(theirs, len(comp))
			// every member of a gonum component carries one label of ours
			l := label[comp[0].ID()]
			for _, v := range comp {
				if label[v.ID()] != l {
					t.Fatalf("G(%d, %g): nodes %d and %d share a component but not a label", c.n, c.p, comp[0].ID(), v.ID())
				}
			}
		}
		slices.Sort(ours)
		slices.Sort(theirs)
		if !slices.Equal(ours, theirs) {
			t.Fatalf("G(%d, %g): component sizes %v, gonum %v", c.n, c.p, ours, theirs)
		}
	}
}

var _ gonumgraph.Undirected = (*simple.UndirectedGraph)(nil)
