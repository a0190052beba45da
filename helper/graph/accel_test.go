package graph

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/hubscope/hubscope/helper/progress"
)

// recording is an Accelerator that runs the CPU's code through the seams a device uses
// (PathStatsFromHistogram, SampledShortestPathsWith's per-source sums) and counts its calls.
type recording struct {
	CPU
	mu       sync.Mutex
	calls    map[string]int
	released int
}

func (r *recording) count(op string) {
	r.mu.Lock()
	r.calls[op]++
	r.mu.Unlock()
}

func (r *recording) Triangles(ctx context.Context, g *Graph) ([]int64, error) {
	r.count("triangles")
	return Triangles(ctx, g)
}

func (r *recording) ShortestPaths(ctx context.Context, g *Graph) (PathStats, error) {
	r.count("paths")
	hist, err := distanceHistogram(ctx, g.Offsets, g.Adj, g.N, 2, progress.Discard)
	if err != nil {
		return PathStats{}, err
	}
	return PathStatsFromHistogram(g, hist), nil
}

func (r *recording) SampledShortestPaths(ctx context.Context, g *Graph, sources int, seed, stream uint64) (PathEstimate, error) {
	r.count("sampled")
	sums := func(ctx context.Context, g *Graph, list []int32) ([]SourceSums, error) {
		s, err := perSourceSums(ctx, g, list)
		out := make([]SourceSums, len(s))
		for i, v := range s {
			out[i] = SourceSums{Reached: v.reached, Dist: v.dist, Inv: v.inv}
		}
		return out, err
	}
	return SampledShortestPathsWith(ctx, g, sources, seed, stream, sums, r.ShortestPaths)
}

func (r *recording) Rewire(ctx context.Context, g *Graph, opt RewireOptions) (*Graph, RewireStats, error) {
	r.count("rewire")
	return r.CPU.Rewire(ctx, g, opt)
}

func (r *recording) Release(*Graph) {
	r.mu.Lock()
	r.released++
	r.mu.Unlock()
}

func (r *recording) LocalEfficiencies(ctx context.Context, g *Graph) ([]float64, error) {
	r.count("eloc")
	return LocalEfficiencies(ctx, g, nil)
}

// TestAcceleratorSeams: the nodal and global measures with an Accelerator use it for the
// triangles, the exact and sampled searches, the local efficiencies and the rewiring, release
// every random network, and give the CPU's numbers exactly (the seams a device implements
// reproduce the host's arithmetic).
func TestAcceleratorSeams(t *testing.T) {
	ctx := context.Background()
	g := randomGraph(t, 300, 0.04, 3, 5)
	rec := &recording{calls: map[string]int{}}
	ndCPU, err := NodalMeasures(ctx, g, NodalOptions{LocalEfficiency: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ndAcc, err := NodalMeasures(ctx, g, NodalOptions{LocalEfficiency: true, Accelerator: rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ndCPU, ndAcc) {
		t.Error("nodal measures differ with the accelerator")
	}
	sw := func() *SmallWorldOptions {
		return &SmallWorldOptions{Random: 4, SwapsPerEdge: 2, Seed: 3, PathSources: 50}
	}
	glCPU, err := GlobalMeasures(ctx, g, GlobalOptions{LocalEfficiency: true, SmallWorld: sw()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	glAcc, err := GlobalMeasures(ctx, g, GlobalOptions{LocalEfficiency: true, SmallWorld: sw(), Accelerator: rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(glCPU, glAcc) {
		t.Errorf("global measures differ with the accelerator:\n%+v\n%+v", glCPU, glAcc)
	}
	for _, op := range []string{"triangles", "paths", "sampled", "rewire", "eloc"} {
		if rec.calls[op] == 0 {
			t.Errorf("the accelerator's %s was never called (%v)", op, rec.calls)
		}
	}
	if rec.released != rec.calls["rewire"] {
		t.Errorf("%d random networks made, %d released", rec.calls["rewire"], rec.released)
	}
}
