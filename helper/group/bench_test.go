package group

import (
	"context"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
)

// BenchmarkFisherZ: 1,500 nodes, 5 subjects × 100 volumes, strength threshold.
func BenchmarkFisherZ(b *testing.B) {
	c := cohortOf(1500, 5, 100, 1)
	for i := 0; i < b.N; i++ {
		be := NewFisherZ(5)
		be.Prepare(context.Background(), c.X, 1500, 500, fc.Pearson)
		blocks := fc.PlanBlocks(1500, be.BlockRows())
		be.Run(context.Background(), blocks, fc.Op{Kind: fc.OpEdges, Threshold: 0.5}, func(*fc.BlockResult) error { return nil })
	}
}
