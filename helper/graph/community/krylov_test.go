package community

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
)

// groupOp applies B^(G) from a GroupOperator alone, as a device does with what it was given.
type groupOp struct{ op GroupOperator }

func (g groupOp) dim() int { return len(g.op.K) }

func (g groupOp) apply(y, x []float64) {
	var kx float64
	for i, k := range g.op.K {
		kx += k * x[i]
	}
	for i := range y {
		var ax float64
		for p := g.op.Offsets[i]; p < g.op.Offsets[i+1]; p++ {
			w := 1.0
			if g.op.Weights != nil {
				w = g.op.Weights[p]
			}
			ax += w * x[g.op.Adj[p]]
		}
		y[i] = ax - g.op.K[i]*(kx/g.op.TwoM) - g.op.RowSum[i]*x[i]
	}
}

// fakeDevice is a KrylovDevice that solves on the host from the GroupOperator it is handed.
// Groups are bound from several workers at once.
type fakeDevice struct {
	mu              sync.Mutex
	groups, largest int
}

func (f *fakeDevice) BindGroup(op GroupOperator, capacity int) (KrylovBasis, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups++
	f.largest = max(f.largest, len(op.K))
	return newHostKrylov(groupOp{op}, capacity), nil
}

// TestKrylovDeviceGetsTheGroupOperator: with a KrylovDevice every group of ≥ KrylovMinNodes
// nodes is bound to it, and the GroupOperator it receives (CSR with local indices, degrees,
// row sums, 2m) is B^(G) itself: the modules and Q are the host's exactly, weighted or not.
func TestKrylovDeviceGetsTheGroupOperator(t *testing.T) {
	n, edges, _ := plantedPartition([]int{120, 90, 150, 60}, 0.2, 0.02, 3)
	g := fromEdges(n, edges)
	for _, weighted := range []bool{false, true} {
		host, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{Seed: 2, Weighted: weighted}, nil)
		if err != nil {
			t.Fatal(err)
		}
		dev := &fakeDevice{}
		got, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{Seed: 2, Weighted: weighted, Krylov: dev, KrylovMinNodes: 50}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if dev.groups == 0 || dev.largest != n {
			t.Errorf("weighted %v: %d groups bound, the largest of %d nodes (want the whole graph, %d)", weighted, dev.groups, dev.largest, n)
		}
		if got.Count() != host.Count() || math.Abs(got.Q-host.Q) > 1e-12 {
			t.Errorf("weighted %v: Q %.12f with %d modules through the device interface, %.12f with %d on the host", weighted, got.Q, got.Count(), host.Q, host.Count())
		}
	}
}

// TestLeadingEigenvectorIndependentOfWorkers: groups are divided by up to Workers goroutines at
// once, and every group's random start comes from its place in the division tree, so the
// membership, Q and eigenvalues are bit for bit the same for 1, 3 and 8 workers, and through
// the device interface. The pendant nodes (degree 1) leave groups without an internal link.
func TestLeadingEigenvectorIndependentOfWorkers(t *testing.T) {
	sizes := []int{70, 50, 90, 40, 60}
	n, edges, _ := plantedPartition(sizes, 0.25, 0.05, 5)
	const pendants = 120
	for p := 0; p < pendants; p++ {
		edges = append(edges, edge{int32((p * 37) % n), int32(n + p), 1})
	}
	g := fromEdges(n+pendants, edges)
	var first *Modules
	for _, c := range []struct {
		workers int
		dev     bool
	}{{1, false}, {3, false}, {8, false}, {4, true}} {
		opts := LeadingEigenvectorOptions{Seed: 3, Workers: c.workers}
		if c.dev {
			opts.Krylov, opts.KrylovMinNodes = &fakeDevice{}, 30
		}
		m, err := LeadingEigenvectorModules(context.Background(), g, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = m
			if len(m.Eigenvalues) < 4 {
				t.Fatalf("%d divisions, want a tree of at least 4", len(m.Eigenvalues))
			}
			continue
		}
		// Through the device interface the products and Gram–Schmidt run in another order:
		// equal to rounding, the same division.
		same := slices.Equal(m.Membership, first.Membership) && len(m.Eigenvalues) == len(first.Eigenvalues)
		if !c.dev {
			same = same && m.Q == first.Q && slices.Equal(m.Eigenvalues, first.Eigenvalues)
		} else {
			same = same && math.Abs(m.Q-first.Q) <= 1e-12
		}
		if !same {
			t.Errorf("%d workers (device %v): Q %.15f, %d modules, eigenvalues %v; 1 worker: Q %.15f, %d modules, eigenvalues %v",
				c.workers, c.dev, m.Q, m.Count(), m.Eigenvalues, first.Q, first.Count(), first.Eigenvalues)
		}
	}
}

// TestLeadingEigenvectorEdgelessGroupsApart: a group left without an internal link is split
// into single nodes at once (every division of it raises Q, and singles are its best
// partition), so no module of ≥ 2 nodes lacks a link and Q is at least that of the
// bisections, which stop at pairs; with MaxModules the bisections run as before and leave
// such pairs on this graph.
func TestLeadingEigenvectorEdgelessGroupsApart(t *testing.T) {
	n, edges, _ := plantedPartition([]int{70, 50, 90, 40, 60}, 0.25, 0.05, 5)
	for p := 0; p < 120; p++ {
		edges = append(edges, edge{int32((p * 37) % n), int32(n + p), 1})
	}
	g := fromEdges(n+120, edges)
	unlinked := func(m *Modules) int {
		links := make([]int, m.Count())
		for v := 0; v < g.N; v++ {
			for _, u := range g.Neighbors(v) {
				if m.Membership[u] == m.Membership[v] {
					links[m.Membership[v]]++
				}
			}
		}
		count := 0
		for c, size := range m.Sizes {
			if size >= 2 && links[c] == 0 {
				count++
			}
		}
		return count
	}
	apart, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bisected, err := LeadingEigenvectorModules(context.Background(), g, LeadingEigenvectorOptions{Seed: 3, MaxModules: g.N}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := unlinked(apart); u != 0 {
		t.Errorf("%d modules of ≥ 2 nodes without an internal link", u)
	}
	if u := unlinked(bisected); u == 0 {
		t.Errorf("the bisections left no pair without a link: the graph does not test the rule")
	}
	if apart.Q < bisected.Q {
		t.Errorf("Q %.12f with the groups apart, %.12f bisected", apart.Q, bisected.Q)
	}
	t.Logf("apart: Q %.9f, %d modules; bisected: Q %.9f, %d modules (%d pairs without a link)", apart.Q, apart.Count(), bisected.Q, bisected.Count(), unlinked(bisected))
}
