package cpu

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/fc/fctest"
)

// TestConformance runs the backend suite with three workers (more than this machine's cores)
// so that strips of one block are split across workers and their results merged.
func TestConformance(t *testing.T) {
	fctest.Run(t, func(t *testing.T) fc.Backend { return New(Options{Workers: 3}) })
}

// shuffled hands the blocks to the CPU backend in a random order, which the Backend contract
// allows: the driver's row-panel assembly must not depend on arrival order.
type shuffled struct {
	*Backend
	rng *rand.Rand
}

func (s shuffled) Run(ctx context.Context, blocks []fc.Block, op fc.Op, sink func(*fc.BlockResult) error) error {
	bs := slices.Clone(blocks)
	s.rng.Shuffle(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
	return s.Backend.Run(ctx, bs, op, sink)
}

func TestBlockOrder(t *testing.T) {
	d := fctest.Gaussian("order", 211, 25, 4, 8)
	for _, cfg := range []fc.Config{
		{Mode: fc.Strength, Threshold: 0.2, BlockRows: 10},
		{Mode: fc.Density, Density: 0.07, Abs: true, BlockRows: 17, Bins: 4096},
	} {
		want, _, err := fc.Build(context.Background(), New(Options{}), d.X, d.N, d.L, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := fc.Build(context.Background(), shuffled{New(Options{}), rand.New(rand.NewPCG(1, 2))}, d.X, d.N, d.L, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Indices, want.Indices) || !slices.Equal(got.Weights, want.Weights) {
			t.Fatalf("%v: network depends on block order (%d vs %d edges)", cfg.Mode, got.Edges(), want.Edges())
		}
	}
}
