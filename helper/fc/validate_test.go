package fc

import (
	"math"
	"testing"
)

func TestOpValidateAndBlockCheck(t *testing.T) {
	for _, op := range []Op{
		{Kind: OpEdges, Threshold: 0.3},
		{Kind: OpHistogram, Lo: -1, Hi: 1, Bins: 10},
		{Kind: OpTopK, K: 3},
	} {
		if err := op.Validate(); err != nil {
			t.Errorf("%+v rejected: %v", op, err)
		}
	}
	for _, op := range []Op{
		{Kind: OpEdges, Threshold: math.NaN()},
		{Kind: OpHistogram, Lo: 1, Hi: 1, Bins: 10},
		{Kind: OpHistogram, Lo: -1, Hi: 1},
		{Kind: OpTopK},
		{Kind: 9},
	} {
		if err := op.Validate(); err == nil {
			t.Errorf("%+v accepted", op)
		}
	}
	// Every block PlanBlocks makes passes, for N a multiple of the height and not.
	for _, n := range []int{1, 7, 64, 100} {
		for _, b := range PlanBlocks(n, 16) {
			if err := b.Check(n); err != nil {
				t.Errorf("planned block rejected: %v", err)
			}
		}
	}
	for _, b := range []Block{
		{0, 8, 0, 4},   // diagonal block not square
		{0, 8, 4, 12},  // columns overlap the rows
		{8, 16, 0, 8},  // below the diagonal
		{0, 8, 8, 17},  // past N = 16
		{4, 4, 4, 4},   // empty
		{-1, 8, 8, 16}, // negative
	} {
		if err := b.Check(16); err == nil {
			t.Errorf("block %+v accepted", b)
		}
	}
}
