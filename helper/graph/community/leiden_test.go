package community

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
)

// A run's scratch space comes from a pool and is reused by later runs, also of other sizes,
// weighted or not and at once on several goroutines: every partition must equal the one a
// fresh run finds, so nothing a run leaves behind may reach the next one.
func TestLeidenScratchReuse(t *testing.T) {
	type run struct {
		g    *graph.Graph
		opts LeidenOptions
	}
	var runs []run
	for k, sizes := range [][]int{{120, 100, 80, 60}, {40, 30}, {200, 150, 150, 100, 90}} {
		n, edges, _ := plantedPartition(sizes, 0.1, 0.015, uint64(k+1))
		g := fromEdges(n, edges)
		runs = append(runs, run{g, LeidenOptions{Seed: uint64(k)}},
			run{g, LeidenOptions{Seed: uint64(k), Weighted: true, Resolution: 1.5}},
			run{g, LeidenOptions{Seed: 9, MaxIterations: 2}})
	}
	want := make([][]int, len(runs))
	for i, r := range runs {
		leidenPool = sync.Pool{} // a fresh run: nothing to reuse
		m, err := LeidenModules(context.Background(), r.g, r.opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = m.Membership
	}
	var wg sync.WaitGroup
	errs := make([]string, len(runs))
	for rep := range 3 {
		for i := range runs {
			i := (i*7 + rep) % len(runs) // another order each time
			wg.Add(1)
			go func() {
				defer wg.Done()
				m, err := LeidenModules(context.Background(), runs[i].g, runs[i].opts, nil)
				if err != nil {
					errs[i] = err.Error()
				} else if !slices.Equal(m.Membership, want[i]) {
					errs[i] = "partition differs from a fresh run's"
				}
			}()
		}
		wg.Wait()
	}
	for i, e := range errs {
		if e != "" {
			t.Errorf("run %d (%d nodes, %+v): %s", i, runs[i].g.N, runs[i].opts, e)
		}
	}
}

// Graphs whose 2m does not fit 32 bits aggregate into float64 weights instead of int32 link
// counts; both hold the same whole numbers, so the partitions are equal.
func TestLeidenFloatAggregatesEqualCounts(t *testing.T) {
	n, edges, _ := plantedPartition([]int{150, 90, 60, 40, 25}, 0.08, 0.015, 5)
	g := fromEdges(n, edges)
	counted, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func(v float64) { maxCountedTwoM = v }(maxCountedTwoM)
	maxCountedTwoM = 0
	leidenPool = sync.Pool{}
	float, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(counted.Membership, float.Membership) || counted.Q != float.Q {
		t.Fatalf("int32 link counts give Q %.17g (%d modules), float64 aggregates %.17g (%d modules)",
			counted.Q, counted.Count(), float.Q, float.Count())
	}
}

// Isolated nodes at the end of the numbering have no adjacency row at all (their offset is
// the adjacency's length): the local moving's look-ahead must not read past it, and each stays
// a module of its own.
func TestLeidenIsolatedLastNodes(t *testing.T) {
	n, edges, _ := plantedPartition([]int{60, 50, 40}, 0.2, 0.02, 3)
	for seed := range uint64(20) {
		g := fromEdges(n+3, edges)
		m, err := LeidenModules(context.Background(), g, LeidenOptions{Seed: seed}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for v := n; v < n+3; v++ {
			if c := m.Membership[v]; m.Sizes[c] != 1 {
				t.Fatalf("seed %d: isolated node %d is in module %d of %d nodes", seed, v, c, m.Sizes[c])
			}
		}
	}
}
