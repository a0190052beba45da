package graph

import (
	"context"

	"github.com/hubscope/hubscope/helper/progress"
)

// Accelerator runs the kernels that dominate the global measures and the random-network
// baselines: triangle counts, multi-source breadth-first search (exact or from a sample of
// sources), sparse adjacency products and Maslov–Sneppen rewiring. CPU is the implementation
// every build has; a compute backend (a GPU) may supply its own, which must give CPU's numbers
// on the same graph (triangles, path sums, products) and random networks with the same
// distribution (every degree kept exactly, no self-loops or multi-edges). Every method may be
// called from several goroutines at once.
type Accelerator interface {
	// Name says where the work runs ("cpu", "cuda").
	Name() string
	// Triangles returns the number of triangles through each node.
	Triangles(ctx context.Context, g *Graph) ([]int64, error)
	// ShortestPaths computes L_p, E_glob and the distance distribution exactly.
	ShortestPaths(ctx context.Context, g *Graph) (PathStats, error)
	// SampledShortestPaths estimates L_p and E_glob from a sample of sources (see the function
	// of that name for the sample and the estimators).
	SampledShortestPaths(ctx context.Context, g *Graph, sources int, seed, stream uint64) (PathEstimate, error)
	// Products sets y = A x for the binary adjacency A of g (len(x) = len(y) = N).
	Products(ctx context.Context, g *Graph, x, y []float64) error
	// Rewire returns a degree-preserving random network of g.
	Rewire(ctx context.Context, g *Graph, opt RewireOptions) (*Graph, RewireStats, error)
}

// CPU is the Accelerator of every build: this package's own parallel implementations.
type CPU struct{}

// Name is "cpu".
func (CPU) Name() string { return "cpu" }

// Triangles is the package's Triangles.
func (CPU) Triangles(ctx context.Context, g *Graph) ([]int64, error) { return Triangles(ctx, g) }

// ShortestPaths is the package's ShortestPaths.
func (CPU) ShortestPaths(ctx context.Context, g *Graph) (PathStats, error) {
	return ShortestPaths(ctx, g, nil)
}

// SampledShortestPaths is the package's SampledShortestPaths.
func (CPU) SampledShortestPaths(ctx context.Context, g *Graph, sources int, seed, stream uint64) (PathEstimate, error) {
	return SampledShortestPaths(ctx, g, sources, seed, stream)
}

// Products computes y = A x row by row over all cores (each y_i is summed in adjacency order,
// so the result does not depend on the schedule).
func (CPU) Products(ctx context.Context, g *Graph, x, y []float64) error {
	return forEachChunk(ctx, g.N, 1024, workerCount((g.N+1023)/1024), false, func(_, lo, hi int) error {
		for i := lo; i < hi; i++ {
			var s float64
			for _, j := range g.Neighbors(i) {
				s += x[j]
			}
			y[i] = s
		}
		return nil
	})
}

// Rewire is the package's Rewire.
func (CPU) Rewire(ctx context.Context, g *Graph, opt RewireOptions) (*Graph, RewireStats, error) {
	return Rewire(ctx, g, opt, progress.Discard)
}

// accelOr returns a, or CPU when a is nil.
func accelOr(a Accelerator) Accelerator {
	if a == nil {
		return CPU{}
	}
	return a
}

// Releaser is implemented by an Accelerator that keeps its own copy of graphs it made or was
// given (a device copy of a random network, say): Release frees the copy of g once the caller
// is done with it. Callers that discard graphs (SmallWorld, after each random network) call it
// when the Accelerator has it.
type Releaser interface {
	Release(g *Graph)
}

// RewireFirst is implemented by an Accelerator whose device runs the rewiring before the other
// work queued there (the CUDA one: its closures run one at a time on the device's thread).
// HoldForRewiring keeps that other work waiting, besides short steps, until release is
// called: a caller that makes several random networks one after another holds it across them
// so that nothing long takes the device in the gap between two (SmallWorld). The holder must
// not wait on the accelerator's other work while holding.
type RewireFirst interface {
	HoldForRewiring() (release func())
}

// release hands g back to a when a keeps copies.
func release(a Accelerator, g *Graph) {
	if r, ok := a.(Releaser); ok {
		r.Release(g)
	}
}

// MeanClusteringWith is MeanClustering with the triangles counted by a (nil: CPU).
func MeanClusteringWith(ctx context.Context, a Accelerator, g *Graph) (float64, error) {
	c, err := clusteringWith(ctx, accelOr(a), g)
	if err != nil || len(c) == 0 {
		return 0, err
	}
	return mean(c), nil
}

// ShortestPathsWith is ShortestPaths run by a (nil: CPU, reporting to rep).
func ShortestPathsWith(ctx context.Context, a Accelerator, g *Graph, rep progress.Reporter) (PathStats, error) {
	if a == nil {
		return ShortestPaths(ctx, g, rep)
	}
	return a.ShortestPaths(ctx, g)
}

// LocalEfficiencyAccelerator is implemented by an Accelerator that also computes every node's
// local efficiency (the CUDA one), with LocalEfficiencies' numbers.
type LocalEfficiencyAccelerator interface {
	LocalEfficiencies(ctx context.Context, g *Graph) ([]float64, error)
}

// LocalEfficienciesWith is LocalEfficiencies run by a when it can (else on the CPU, reporting
// to rep).
func LocalEfficienciesWith(ctx context.Context, a Accelerator, g *Graph, rep progress.Reporter) ([]float64, error) {
	if la, ok := a.(LocalEfficiencyAccelerator); ok {
		return la.LocalEfficiencies(ctx, g)
	}
	return LocalEfficiencies(ctx, g, rep)
}
