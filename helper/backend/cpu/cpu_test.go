package cpu

import (
	"context"
	"errors"
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

// stageCounter records progress stages and cancels the context after the first finished
// block of the cancelAt stage.
type stageCounter struct {
	starts   map[string]int64
	adds     map[string]int64
	cur      string
	cancelAt string
	cancel   context.CancelFunc
}

func (s *stageCounter) Start(stage string, total int64) { s.cur = stage; s.starts[stage] = total }
func (s *stageCounter) Add(n int64) {
	s.adds[s.cur] += n
	if s.cur == s.cancelAt {
		s.cancel()
	}
}
func (s *stageCounter) Note(string) {}

// TestProgressAndCancel: every pass announces its number of blocks and reports each one; a
// cancellation during a pass stops Build with context.Canceled.
func TestProgressAndCancel(t *testing.T) {
	d := fctest.Gaussian("progress", 400, 30, 4, 12)
	cfg := fc.Config{Mode: fc.Density, Density: 0.05, BlockRows: 50, DensityMethod: fc.DensityTwoPass}
	blocks := int64(len(fc.PlanBlocks(d.N, 50)))
	sc := &stageCounter{starts: map[string]int64{}, adds: map[string]int64{}, cancel: func() {}}
	if _, _, err := fc.Build(context.Background(), New(Options{}), d.X, d.N, d.L, cfg, sc); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"histogram", "edges"} {
		if sc.starts[st] != blocks || sc.adds[st] != blocks {
			t.Fatalf("stage %s: Start(%d), %d blocks added; want %d", st, sc.starts[st], sc.adds[st], blocks)
		}
	}
	for _, st := range []string{"histogram", "edges"} {
		ctx, cancel := context.WithCancel(context.Background())
		sc := &stageCounter{starts: map[string]int64{}, adds: map[string]int64{}, cancelAt: st, cancel: cancel}
		_, _, err := fc.Build(ctx, New(Options{}), d.X, d.N, d.L, cfg, sc)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled during %s: error %v", st, err)
		}
		if sc.adds[st] >= blocks {
			t.Fatalf("cancelled during %s, yet all %d blocks ran", st, blocks)
		}
	}
}

// TestBench runs fc.Bench (what `hubscope-helper bench` calls) on a small workload.
func TestBench(t *testing.T) {
	r, err := fc.Bench(context.Background(), New(Options{}), 500, 50, fc.Config{Mode: fc.Density, Density: 0.01}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Seconds) != 2 || r.Median <= 0 || r.GFLOPS <= 0 || r.Report.Edges != int64(0.01*500*499/2+0.5) {
		t.Fatalf("bench result %+v, report %+v", r, r.Report)
	}
}
