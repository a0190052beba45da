//go:build cuda

package cuda

import (
	"context"
	"math"
	"testing"

	"gorgonia.org/cu"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/fc/fctest"
)

// TestInjectedOutOfMemory makes the device refuse every edge buffer larger than 1,024 edges
// (cu.OutOfMemory from edgeAlloc) while a network keeps about half of all pairs: blocks whose
// edges do not fit must be processed in halves of rows, and the edges must be exactly those
// of the same run without the fault.
func TestInjectedOutOfMemory(t *testing.T) {
	d := fctest.Gaussian("oom", 451, 29, 4, 13)
	blocks := fc.PlanBlocks(d.N, 150)
	op := fc.Op{Kind: fc.OpEdges, Threshold: -0.05}
	run := func(inject bool) ([]float32, int) {
		be := newTestBackend(t, Options{EdgeCapacity: 16})
		defer be.Close()
		if err := be.Prepare(context.Background(), d.X, d.N, d.L, fc.Pearson); err != nil {
			t.Fatal(err)
		}
		refused := 0
		if inject {
			orig := edgeAlloc
			edgeAlloc = func(bytes int64) (cu.DevicePtr, error) {
				if bytes > 1024*edgeBytes {
					refused++
					return 0, cu.OutOfMemory
				}
				return orig(bytes)
			}
			defer func() { edgeAlloc = orig }()
		}
		vals := make([]float32, d.N*d.N)
		for i := range vals {
			vals[i] = float32(math.NaN())
		}
		seen := map[fc.Block]int{}
		err := be.Run(context.Background(), blocks, op, func(r *fc.BlockResult) error {
			seen[r.Block]++
			for _, e := range r.Edges {
				vals[int(e.I)*d.N+int(e.J)] = e.W
			}
			return nil
		})
		if err != nil {
			t.Fatalf("inject %v: %v", inject, err)
		}
		for _, blk := range blocks {
			if seen[blk] != 1 {
				t.Fatalf("inject %v: block %+v reached the sink %d times", inject, blk, seen[blk])
			}
		}
		return vals, refused
	}
	want, _ := run(false)
	got, refused := run(true)
	if refused == 0 {
		t.Fatal("no edge buffer was refused: the test did not exercise the out-of-memory path")
	}
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("pair (%d,%d): %v after %d refused allocations, %v without", i/d.N, i%d.N, got[i], refused, want[i])
		}
	}
	t.Logf("%d edge buffers refused; every block processed in halves gave the same edges", refused)
}
