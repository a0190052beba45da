//go:build cuda

package cuda

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/helper/graph/graphtest"
	"github.com/hubscope/hubscope/helper/progress"
)

// newGraphAccel opens the backend and returns its graph.Accelerator with the notes it makes.
func newGraphAccel(t *testing.T) (graph.Accelerator, *[]string) {
	t.Helper()
	be := newTestBackend(t, Options{})
	t.Cleanup(func() { be.Close() })
	ga, ok := be.(GraphAccelerator)
	if !ok {
		t.Fatal("the CUDA backend does not implement GraphAccelerator")
	}
	notes := new([]string)
	tr := &progress.Tracker{OnNote: func(s string) { *notes = append(*notes, s) }}
	return ga.GraphAccelerator(tr), notes
}

// modular builds a graph of n nodes in modules of size about n/modules, each node linked to
// about k others, a share out of them outside its module; the last isolated nodes have no
// edge and a few pairs form small components, so the searches meet several components.
func modular(t testing.TB, n, modules, k int, out float64, isolated int, seed uint64) *graph.Graph {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	core := n - isolated - 6
	seen := map[[2]int32]bool{}
	var edges [][2]int32
	add := func(u, v int) {
		if u == v {
			return
		}
		e := [2]int32{int32(min(u, v)), int32(max(u, v))}
		if !seen[e] {
			seen[e] = true
			edges = append(edges, e)
		}
	}
	size := max(core/modules, 2)
	for u := 0; u < core; u++ {
		m := u / size
		for q := 0; q < k/2; q++ {
			if rng.Float64() < out {
				add(u, rng.IntN(core))
				continue
			}
			lo := m * size
			hi := min(lo+size, core)
			add(u, lo+rng.IntN(hi-lo))
		}
	}
	// three two-node components, then the isolated nodes
	for p := 0; p < 3; p++ {
		add(core+2*p, core+2*p+1)
	}
	g, err := graph.FromEdges(n, edges, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// hubbed is a modular graph with one node linked to a third of the others (a long row for the
// kernels' warps and the row sort).
func hubbed(t testing.TB) *graph.Graph {
	g := modular(t, 3000, 12, 10, 0.1, 5, 3)
	var edges [][2]int32
	for i := 0; i < g.N; i++ {
		for _, j := range g.Neighbors(i) {
			if int(j) > i {
				edges = append(edges, [2]int32{int32(i), j})
			}
		}
	}
	for v := 1; v < g.N-20; v += 3 {
		if !g.HasEdge(0, v) {
			edges = append(edges, [2]int32{0, int32(v)})
		}
	}
	h, err := graph.FromEdges(g.N, edges, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func karate(t testing.TB) *graph.Graph {
	g, err := graph.FromEdges(graphtest.KarateNodes, graphtest.Karate, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// testGraphs are the conformance graphs: the karate club, modular graphs with isolated nodes
// and small components (one over several BFS batches of 1,024 sources), and one with a hub.
func testGraphs(t *testing.T) map[string]*graph.Graph {
	gs := map[string]*graph.Graph{
		"karate":        karate(t),
		"modular-3000":  modular(t, 3000, 10, 16, 0.05, 7, 1),
		"modular-2500":  modular(t, 2500, 50, 8, 0.02, 0, 2),
		"hub-3000":      hubbed(t),
		"sparse-chains": modular(t, 1500, 300, 2, 0.01, 40, 4),
	}
	if !testing.Short() {
		gs["modular-12000"] = modular(t, 12000, 40, 30, 0.03, 11, 5)
	}
	return gs
}

// TestGraphAcceleratorExact: on the same graph the device gives the CPU's numbers — every
// node's triangles, the adjacency products, the local efficiencies and eigenvector centrality
// (vector and λ) bit for bit, the exact path statistics (L_p, E_glob,
// distance counts, diameter) and the sampled estimate from the same sample (L_p and its SE
// identical, E_glob within rounding of the per-source inverse sums).
func TestGraphAcceleratorExact(t *testing.T) {
	acc, _ := newGraphAccel(t)
	ctx := context.Background()
	for name, g := range testGraphs(t) {
		t.Run(name, func(t *testing.T) {
			tg, err := acc.Triangles(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			tc, err := graph.Triangles(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tg, tc) {
				t.Errorf("triangles differ from the CPU's (first differences: %v)", firstDiffs(tg, tc))
			}
			x := make([]float64, g.N)
			rng := rand.New(rand.NewPCG(9, 9))
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			yg, yc := make([]float64, g.N), make([]float64, g.N)
			if err := acc.Products(ctx, g, x, yg); err != nil {
				t.Fatal(err)
			}
			if err := (graph.CPU{}).Products(ctx, g, x, yc); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(yg, yc) {
				t.Errorf("products differ from the CPU's")
			}
			lg, err := acc.(graph.LocalEfficiencyAccelerator).LocalEfficiencies(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			lc, err := graph.LocalEfficiencies(ctx, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(lg, lc) {
				for i := range lg {
					if lg[i] != lc[i] {
						t.Errorf("local efficiency of node %d (degree %d): %.17g on the GPU, %.17g on the CPU", i, g.Degree(i), lg[i], lc[i])
						break
					}
				}
			}
			eg, lg1, errG := graph.EigenvectorCentrality(ctx, g, graph.EigenvectorOptions{Accelerator: acc})
			ec, lc1, errC := graph.EigenvectorCentrality(ctx, g, graph.EigenvectorOptions{})
			if (errG == nil) != (errC == nil) || lg1 != lc1 || !slices.Equal(eg, ec) {
				t.Errorf("eigenvector centrality: λ %v (%v) on the GPU, %v (%v) on the CPU, vectors equal %v", lg1, errG, lc1, errC, slices.Equal(eg, ec))
			}
			pg, err := acc.ShortestPaths(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			pc, err := graph.ShortestPaths(ctx, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pg, pc) {
				t.Errorf("path statistics:\n GPU %+v\n CPU %+v", pg, pc)
			}
			for _, sources := range []int{100, 700, 1500} {
				eg, err := acc.SampledShortestPaths(ctx, g, sources, 11, 5)
				if err != nil {
					t.Fatal(err)
				}
				ec, err := graph.SampledShortestPaths(ctx, g, sources, 11, 5)
				if err != nil {
					t.Fatal(err)
				}
				if eg.CharacteristicPathLength != ec.CharacteristicPathLength || eg.CharacteristicPathLengthSE != ec.CharacteristicPathLengthSE ||
					eg.Sources != ec.Sources || eg.Exact != ec.Exact ||
					math.Abs(eg.GlobalEfficiency-ec.GlobalEfficiency) > 1e-12*ec.GlobalEfficiency ||
					math.Abs(eg.GlobalEfficiencySE-ec.GlobalEfficiencySE) > 1e-9*ec.GlobalEfficiencySE+1e-15 {
					t.Errorf("%d sources: estimate\n GPU %+v\n CPU %+v", sources, eg, ec)
				}
			}
		})
	}
}

func firstDiffs(a, b []int64) [][3]int64 {
	var d [][3]int64
	for i := range a {
		if a[i] != b[i] && len(d) < 5 {
			d = append(d, [3]int64{int64(i), a[i], b[i]})
		}
	}
	return d
}

// TestGraphAcceleratorRewire: every random network keeps every degree exactly, is a simple
// graph (graph.Validate: sorted rows, symmetric, no self-loops, no repeated edges), made the
// swaps asked for, differs from the original, comes out the same for the same seed and
// stream and differently for another stream; the device's triangles and searches on it (its
// copy kept on the device) equal the CPU's on the copy it returned.
func TestGraphAcceleratorRewire(t *testing.T) {
	acc, _ := newGraphAccel(t)
	ctx := context.Background()
	for name, g := range testGraphs(t) {
		t.Run(name, func(t *testing.T) {
			opt := graph.RewireOptions{SwapsPerEdge: 5, Seed: 3, Stream: 1}
			r, st, err := acc.Rewire(ctx, g, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer acc.(graph.Releaser).Release(r)
			if err := r.Validate(); err != nil {
				t.Fatalf("random network: %v", err)
			}
			for i := 0; i < g.N; i++ {
				if r.Degree(i) != g.Degree(i) {
					t.Fatalf("node %d: degree %d, %d in the original", i, r.Degree(i), g.Degree(i))
				}
			}
			want := int64(5 * float64(g.Edges()))
			if st.Swaps != want && st.Attempts < 100*want {
				t.Errorf("%d swaps of %d after %d attempts", st.Swaps, want, st.Attempts)
			}
			kept := 0
			for i := 0; i < g.N; i++ {
				for _, j := range r.Neighbors(i) {
					if g.HasEdge(i, int(j)) {
						kept++
					}
				}
			}
			t.Logf("%d swaps in %d attempts; %.1f %% of the edges kept", st.Swaps, st.Attempts, 50*float64(kept)/float64(g.Edges()))
			if g.N > 100 && float64(kept) > 0.5*2*float64(g.Edges()) {
				t.Errorf("%d of %d edges kept: barely rewired", kept/2, g.Edges())
			}
			again, _, err := acc.Rewire(ctx, g, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer acc.(graph.Releaser).Release(again)
			if !slices.Equal(again.Adj, r.Adj) {
				t.Error("the same seed and stream gave another network")
			}
			other, _, err := acc.Rewire(ctx, g, graph.RewireOptions{SwapsPerEdge: 5, Seed: 3, Stream: 2})
			if err != nil {
				t.Fatal(err)
			}
			acc.(graph.Releaser).Release(other)
			if g.N > 100 && slices.Equal(other.Adj, r.Adj) {
				t.Error("another stream gave the same network")
			}
			tg, err := acc.Triangles(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			tc, err := graph.Triangles(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tg, tc) {
				t.Errorf("triangles of the random network differ from the CPU's: %v", firstDiffs(tg, tc))
			}
			eg, err := acc.SampledShortestPaths(ctx, r, 300, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			ec, err := graph.SampledShortestPaths(ctx, r, 300, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			if eg.CharacteristicPathLength != ec.CharacteristicPathLength {
				t.Errorf("random network's estimate: GPU %+v, CPU %+v", eg, ec)
			}
		})
	}
}

// TestGraphAcceleratorSmallWorld: γ, λ and σ from 15 device random networks agree with the
// CPU's in distribution — the mean of each network's C_rand and L_rand within 2 SD (of the
// CPU's 15) of the CPU's mean, and γ, λ, σ within the matching bounds.
func TestGraphAcceleratorSmallWorld(t *testing.T) {
	acc, _ := newGraphAccel(t)
	ctx := context.Background()
	gs := map[string]*graph.Graph{"modular-3000": modular(t, 3000, 10, 16, 0.05, 7, 1), "hub-3000": hubbed(t)}
	for name, g := range gs {
		t.Run(name, func(t *testing.T) {
			var res [2]graph.SmallWorldResult
			for k, a := range []graph.Accelerator{graph.CPU{}, acc} {
				var err error
				res[k], err = graph.SmallWorld(ctx, g, graph.SmallWorldOptions{Random: 15, SwapsPerEdge: 5, Seed: 1, Accelerator: a}, nil)
				if err != nil {
					t.Fatal(err)
				}
			}
			c, d := res[0], res[1]
			t.Logf("CPU: C_rand %.5f ± %.5f, L_rand %.5f ± %.5f, γ %.4f λ %.4f σ %.4f", c.RandomClusteringMean, c.RandomClusteringSD,
				c.RandomPathLengthMean, c.RandomPathLengthSD, c.Gamma, c.Lambda, c.Sigma)
			t.Logf("GPU: C_rand %.5f ± %.5f, L_rand %.5f ± %.5f, γ %.4f λ %.4f σ %.4f", d.RandomClusteringMean, d.RandomClusteringSD,
				d.RandomPathLengthMean, d.RandomPathLengthSD, d.Gamma, d.Lambda, d.Sigma)
			if d.ClusteringCoefficient != c.ClusteringCoefficient || d.CharacteristicPathLength != c.CharacteristicPathLength {
				t.Errorf("observed C_p, L_p: GPU %v %v, CPU %v %v", d.ClusteringCoefficient, d.CharacteristicPathLength, c.ClusteringCoefficient, c.CharacteristicPathLength)
			}
			within := func(what string, gpu, cpu, sd float64) {
				// sd is floored at the sampled L_p's stated standard error and 1e-12.
				if math.Abs(gpu-cpu) > 2*math.Max(sd, 1e-12) {
					t.Errorf("%s: GPU %.6g, CPU %.6g, more than 2 SD (%.3g) apart", what, gpu, cpu, sd)
				}
			}
			within("mean C_rand", d.RandomClusteringMean, c.RandomClusteringMean, c.RandomClusteringSD)
			within("mean L_rand", d.RandomPathLengthMean, c.RandomPathLengthMean, math.Max(c.RandomPathLengthSD, c.RandomPathLengthMeanSE))
			within("γ", d.Gamma, c.Gamma, c.Gamma*c.RandomClusteringSD/c.RandomClusteringMean)
			within("λ", d.Lambda, c.Lambda, c.Lambda*math.Max(c.RandomPathLengthSD, c.RandomPathLengthMeanSE)/c.RandomPathLengthMean)
			within("σ", d.Sigma, c.Sigma, math.Max(c.SigmaSD, c.SigmaSE))
		})
	}
}

// TestGraphAcceleratorLeadingEigenvector: the leading-eigenvector modules with the Lanczos
// solves on the device (every group of ≥ 64 nodes there) give the host's Q within 1e-6, the
// same number of modules and eigenvalues within 1e-6 (relative).
func TestGraphAcceleratorLeadingEigenvector(t *testing.T) {
	acc, _ := newGraphAccel(t)
	kd, ok := acc.(community.KrylovDevice)
	if !ok {
		t.Fatal("the graph accelerator is no community.KrylovDevice")
	}
	ctx := context.Background()
	gs := testGraphs(t)
	delete(gs, "sparse-chains")
	for name, g := range gs {
		t.Run(name, func(t *testing.T) {
			host, err := community.LeadingEigenvectorModules(ctx, g, community.LeadingEigenvectorOptions{Seed: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			dev, err := community.LeadingEigenvectorModules(ctx, g, community.LeadingEigenvectorOptions{Seed: 1, Krylov: kd, KrylovMinNodes: 64}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("host Q %.9f, %d modules; device Q %.9f, %d modules", host.Q, host.Count(), dev.Q, dev.Count())
			if math.Abs(host.Q-dev.Q) > 1e-6 || host.Count() != dev.Count() {
				t.Errorf("device Q %.9f with %d modules, host %.9f with %d", dev.Q, dev.Count(), host.Q, host.Count())
			}
			for i := range min(len(host.Eigenvalues), len(dev.Eigenvalues)) {
				if a, b := host.Eigenvalues[i], dev.Eigenvalues[i]; math.Abs(a-b) > 1e-6*math.Max(1, math.Abs(a)) {
					t.Errorf("division %d: eigenvalue %.9g on the device, %.9g on the host", i, b, a)
				}
			}
		})
	}
}

// TestGraphAcceleratorFallsBack: a graph without room on the device is measured on the CPU —
// the same numbers as the CPU's (the random network the CPU's own for the seed) — and one
// note says so.
func TestGraphAcceleratorFallsBack(t *testing.T) {
	acc, notes := newGraphAccel(t)
	acc.(*graphAccel).roomLimit = 1 // no byte to spare
	ctx := context.Background()
	g := modular(t, 2000, 10, 12, 0.05, 3, 6)
	tg, err := acc.Triangles(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := graph.Triangles(ctx, g)
	pg, err := acc.ShortestPaths(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	pc, _ := graph.ShortestPaths(ctx, g, nil)
	lg, err := acc.(graph.LocalEfficiencyAccelerator).LocalEfficiencies(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	lc, _ := graph.LocalEfficiencies(ctx, g, nil)
	eg, _, err := graph.EigenvectorCentrality(ctx, g, graph.EigenvectorOptions{Accelerator: acc})
	if err != nil {
		t.Fatal(err)
	}
	ec, _, _ := graph.EigenvectorCentrality(ctx, g, graph.EigenvectorOptions{})
	opt := graph.RewireOptions{SwapsPerEdge: 2, Seed: 4, Stream: 1}
	rg, _, err := acc.Rewire(ctx, g, opt)
	if err != nil {
		t.Fatal(err)
	}
	rc, _, _ := graph.CPU{}.Rewire(ctx, g, opt)
	if !slices.Equal(tg, tc) || !reflect.DeepEqual(pg, pc) || !slices.Equal(lg, lc) || !slices.Equal(eg, ec) || !slices.Equal(rg.Adj, rc.Adj) {
		t.Error("the CPU fallback differs from the CPU's own results")
	}
	if len(*notes) != 1 || !strings.Contains((*notes)[0], "does not fit in the GPU's free memory") {
		t.Errorf("notes %q, want one saying the network does not fit", *notes)
	}
}
