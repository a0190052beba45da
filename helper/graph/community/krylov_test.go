package community

import (
	"context"
	"math"
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
type fakeDevice struct{ groups, largest int }

func (f *fakeDevice) BindGroup(op GroupOperator, capacity int) (KrylovBasis, error) {
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
