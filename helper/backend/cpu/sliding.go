package cpu

import (
	"context"

	"github.com/hubscope/hubscope/helper/fc"
)

// PrepareSliding keeps the centred series for incremental sliding windows (fc.Sliding,
// computed by fc.SlidingCPU over the backend's workers).
func (b *Backend) PrepareSliding(ctx context.Context, x []float32, n, t int) error {
	b.sliding = &fc.SlidingCPU{Workers: b.workers}
	return b.sliding.PrepareSliding(ctx, x, n, t)
}

// SlidingEdges computes one chunk of windows (fc.Sliding).
func (b *Backend) SlidingEdges(ctx context.Context, job fc.SlidingJob, out [][]fc.Edge) error {
	if b.sliding == nil {
		b.sliding = &fc.SlidingCPU{Workers: b.workers}
	}
	return b.sliding.SlidingEdges(ctx, job, out)
}

var _ fc.Sliding = (*Backend)(nil)
