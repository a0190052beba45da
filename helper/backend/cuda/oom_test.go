//go:build cuda

package cuda

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/cu"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/fc/fctest"
	"github.com/hubscope/hubscope/helper/network"
)

// refuseEdgeBuffers makes edgeAlloc answer cu.OutOfMemory for every edge buffer larger than
// limit edges, until the returned function restores it; *refused counts the refusals.
func refuseEdgeBuffers(limit int, refused *int) (restore func()) {
	orig := edgeAlloc
	edgeAlloc = func(bytes int64) (cu.DevicePtr, error) {
		if bytes > int64(limit*edgeBytes) {
			*refused++
			return 0, cu.OutOfMemory
		}
		return orig(bytes)
	}
	return func() { edgeAlloc = orig }
}

// TestInjectedOutOfMemory makes the device refuse every edge buffer larger than 1,024 edges
// (cu.OutOfMemory from edgeAlloc) while a network keeps about half of all pairs: blocks whose
// edges do not fit must be processed in halves of rows, the edges must be exactly those of
// the same run without the fault, and the backend must say so in one line (fc.Noter).
func TestInjectedOutOfMemory(t *testing.T) {
	d := fctest.Gaussian("oom", 451, 29, 4, 13)
	blocks := fc.PlanBlocks(d.N, 150)
	op := fc.Op{Kind: fc.OpEdges, Threshold: -0.05}
	run := func(inject bool) ([]float32, int, []string) {
		be := newTestBackend(t, Options{EdgeCapacity: 16})
		defer be.Close()
		var notes []string
		be.(fc.Noter).SetNote(func(msg string) { notes = append(notes, msg) })
		if err := be.Prepare(context.Background(), d.X, d.N, d.L, fc.Pearson); err != nil {
			t.Fatal(err)
		}
		refused := 0
		if inject {
			defer refuseEdgeBuffers(1024, &refused)()
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
		return vals, refused, notes
	}
	want, _, quiet := run(false)
	got, refused, notes := run(true)
	if len(quiet) != 0 {
		t.Errorf("notes without the fault: %q", quiet)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "GPU out of memory") || !strings.Contains(notes[0], "halves") {
		t.Errorf("notes with %d refused allocations: %q, want one line saying the blocks are processed in halves", refused, notes)
	}
	if refused == 0 {
		t.Fatal("no edge buffer was refused: the test did not exercise the out-of-memory path")
	}
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			t.Fatalf("pair (%d,%d): %v after %d refused allocations, %v without", i/d.N, i%d.N, got[i], refused, want[i])
		}
	}
	t.Logf("%d edge buffers refused; every block processed in halves gave the same edges; the line: %s", refused, notes[0])
}

// TestInjectedOutOfMemoryBuild runs a whole fc.Build (block path: row emission off) on the
// device while edge buffers above 1,024 edges are refused: the network must equal the one
// built without the fault, and the report's notes must carry the line saying so — what the
// summary and provenance.json print.
func TestInjectedOutOfMemoryBuild(t *testing.T) {
	d := fctest.Gaussian("oom-build", 451, 29, 4, 13)
	cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: -0.05, BlockRows: 150}
	build := func(inject bool) (*network.Network, *fc.Report, int) {
		be := newTestBackend(t, Options{EdgeCapacity: 16, NoRowEmission: true})
		defer be.Close()
		refused := 0
		if inject {
			defer refuseEdgeBuffers(1024, &refused)()
		}
		nw, rpt, err := fc.Build(context.Background(), be, d.X, d.N, d.L, cfg, nil)
		if err != nil {
			t.Fatalf("inject %v: %v", inject, err)
		}
		return nw, rpt, refused
	}
	want, _, _ := build(false)
	got, rpt, refused := build(true)
	if refused == 0 {
		t.Fatal("no edge buffer was refused: the test did not exercise the out-of-memory path")
	}
	if got.Edges() != want.Edges() {
		t.Fatalf("%d edges after %d refused allocations, %d without", got.Edges(), refused, want.Edges())
	}
	for i := 0; i < d.N; i++ {
		gc, gw := got.Row(i)
		wc, ww := want.Row(i)
		if !slices.Equal(gc, wc) || !slices.Equal(gw, ww) {
			t.Fatalf("row %d differs after %d refused allocations", i, refused)
		}
	}
	var line string
	for _, n := range rpt.Notes {
		if strings.Contains(n, "GPU out of memory") {
			line = n
		}
	}
	if line == "" {
		t.Fatalf("report notes %q: no line says the device ran out of memory", rpt.Notes)
	}
	t.Logf("%d edge buffers refused, %d edges as without the fault; note: %s", refused, got.Edges(), line)
}
