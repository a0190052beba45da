//go:build cuda

package cuda

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/fc/fctest"
)

// TestRowEmission checks EmitRows against the block path (Run) on the same backend: every
// row's kept edges in column order, the degrees, and the held edges must be exactly the
// block path's pairs split at split — over panels of several heights (one not a multiple of
// the 128-row tile), with a stage too small for a panel (the overflow retry) and without.
func TestRowEmission(t *testing.T) {
	d := fctest.Gaussian("rows", 1000, 37, 5, 3)
	for _, m := range []fc.Measure{fc.Pearson, fc.Spearman} {
		for _, rows := range []int{128, 300, 1000} {
			for _, opts := range []Options{{}, {RowStageCapacity: 100}} {
				for _, c := range []struct {
					op    fc.Op
					split float32
				}{
					{fc.Op{Kind: fc.OpEdges, Threshold: 0.1}, float32(math.Inf(-1))},
					{fc.Op{Kind: fc.OpEdges, Threshold: 0.05, Abs: true, Inclusive: true}, 0.2},
					{fc.Op{Kind: fc.OpEdges, Threshold: 2}, 0},
					// NaN: the boundary is the last bin, every passing pair is held
					{fc.Op{Kind: fc.OpEdges, Threshold: 0.3, Inclusive: true}, float32(math.NaN())},
				} {
					name := fmt.Sprintf("%s/rows%d/stage%d/t%g-abs%v-split%g", m, rows, opts.RowStageCapacity, c.op.Threshold, c.op.Abs, c.split)
					t.Run(name, func(t *testing.T) { checkRowEmission(t, d, m, rows, opts, c.op, c.split) })
				}
			}
		}
	}
}

func checkRowEmission(t *testing.T, d fctest.Dataset, m fc.Measure, rows int, opts Options, op fc.Op, split float32) {
	be := newTestBackend(t, opts)
	defer be.Close()
	ctx := context.Background()
	if err := be.Prepare(ctx, d.X, d.N, d.L, m); err != nil {
		t.Fatal(err)
	}
	blocks := fc.PlanBlocks(d.N, rows)
	var kept, held []fc.Edge
	if err := be.Run(ctx, blocks, op, func(r *fc.BlockResult) error {
		for _, e := range r.Edges {
			if e.W >= split {
				kept = append(kept, e)
			} else {
				held = append(held, e)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	byIJ := func(a, b fc.Edge) int {
		if a.I != b.I {
			return cmp.Compare(a.I, b.I)
		}
		return cmp.Compare(a.J, b.J)
	}
	slices.SortFunc(kept, byIJ)
	slices.SortFunc(held, byIJ)

	finished := 0
	re, err := be.(fc.RowEmitter).EmitRows(ctx, blocks, op, split, func(n int) { finished += n })
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if finished != len(blocks) {
		t.Errorf("progress reported %d of %d blocks", finished, len(blocks))
	}
	checkRows(t, re, d.N, kept, held)
}

// checkRows compares re's degrees, held edges and rows with kept and held (both in (i, j)
// order): the same pairs, rows in (i, j) order, values bit for bit.
func checkRows(t *testing.T, re fc.RowEdges, n int, kept, held []fc.Edge) {
	t.Helper()
	ctx := context.Background()
	byIJ := func(a, b fc.Edge) int {
		if a.I != b.I {
			return cmp.Compare(a.I, b.I)
		}
		return cmp.Compare(a.J, b.J)
	}
	deg := re.Degrees()
	want := make([]uint32, n)
	for _, e := range kept {
		want[e.I]++
	}
	if !slices.Equal(deg, want) {
		t.Fatalf("row degrees differ from the block path's (%d kept edges there)", len(kept))
	}
	gotHeld := slices.Clone(re.Held())
	slices.SortFunc(gotHeld, byIJ)
	if !slices.Equal(gotHeld, held) {
		t.Fatalf("%d held edges, the block path has %d below split (or values differ)", len(gotHeld), len(held))
	}
	var got []fc.Edge
	next := 0
	err := re.Rows(ctx, func(i0, i1 int, keys []uint64) error {
		if i0 != next {
			return fmt.Errorf("rows [%d,%d) after row %d", i0, i1, next)
		}
		next = i1
		at := 0
		for i := i0; i < i1; i++ {
			for _, k := range keys[at : at+int(deg[i])] {
				got = append(got, fc.Edge{I: uint32(i), J: uint32(k >> 32), W: math.Float32frombits(uint32(k))})
			}
			at += int(deg[i])
		}
		if at != len(keys) {
			return fmt.Errorf("rows [%d,%d): %d keys, degrees say %d", i0, i1, len(keys), at)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if next != n {
		t.Fatalf("rows delivered up to %d of %d", next, n)
	}
	if len(got) != len(kept) {
		t.Fatalf("%d kept edges in rows, block path %d", len(got), len(kept))
	}
	for x := range got {
		if got[x] != kept[x] { // rows must come in (i, j) order with bit-identical values
			t.Fatalf("kept edge %d: rows give %+v, block path %+v", x, got[x], kept[x])
		}
	}
}

// TestRowPathBuild: fc.Build through the row path (density: the one-pass selection on the
// device) and through the host block assembler (NoRowEmission: two passes) give identical
// networks for density and strength thresholds over several panels.
func TestRowPathBuild(t *testing.T) {
	d := fctest.Gaussian("rowbuild", 3000, 41, 6, 8)
	fragmented := false // some network with isolated nodes and more than one component
	defer func() {
		if !t.Failed() && !fragmented {
			t.Error("no network had isolated nodes and several components: the component check is not exercised")
		}
	}()
	for _, cfg := range []fc.Config{
		{Measure: fc.Pearson, Mode: fc.Density, Density: 0.01, BlockRows: 512},
		{Measure: fc.Spearman, Mode: fc.Density, Density: 0.05, Abs: true},
		{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.2, BlockRows: 700},
		{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.55, BlockRows: 256},
		{Measure: fc.Spearman, Mode: fc.Density, Density: 0.0004, BlockRows: 384},
	} {
		var nets [2][3]any
		var comps [2][2]int
		for v, opts := range []Options{{}, {NoRowEmission: true}} {
			be := newTestBackend(t, opts)
			nw, rpt, err := fc.Build(context.Background(), be, d.X, d.N, d.L, cfg, nil)
			be.Close()
			if err != nil {
				t.Fatalf("%+v %+v: %v", cfg, opts, err)
			}
			assembled, trimmed := false, false
			for _, p := range rpt.Passes {
				assembled = assembled || p.Stage == "assemble"
				trimmed = trimmed || p.Stage == "trim"
			}
			if assembled == opts.NoRowEmission {
				t.Fatalf("%+v %+v: row path taken = %v", cfg, opts, assembled)
			}
			if onePass := cfg.Mode == fc.Density && !opts.NoRowEmission; trimmed != onePass {
				t.Fatalf("%+v %+v: one-pass density taken = %v (stages %+v)", cfg, opts, trimmed, rpt.Passes)
			}
			nets[v] = [3]any{nw.Indptr, nw.Indices, nw.Weights}
			comps[v] = [2]int{rpt.Isolated, rpt.LargestComponent}
		}
		// the row path's components come from the device's labels (components_hook), the
		// block path's from fc.Components on the host
		if comps[0] != comps[1] {
			t.Fatalf("%+v: isolated/largest component %v on the device, %v on the host", cfg, comps[0], comps[1])
		}
		t.Logf("%+v: %d isolated, largest component %d of %d", cfg, comps[0][0], comps[0][1], d.N)
		fragmented = fragmented || (comps[0][0] > 0 && comps[0][1] < d.N-comps[0][0])
		if !slices.Equal(nets[0][0].([]uint64), nets[1][0].([]uint64)) || !slices.Equal(nets[0][1].([]uint32), nets[1][1].([]uint32)) ||
			!slices.Equal(nets[0][2].([]float32), nets[1][2].([]float32)) {
			t.Fatalf("%+v: row path and block path networks differ", cfg)
		}
	}
}

// TestRowSelection checks the one-pass density's device steps against the block path. After
// EmitSelectableRows every pair op passes is in its row; Histogram must equal fc.Op.BinOf's
// counts of those values on the host; Trim(hold, keep) must leave exactly the pairs ≥ keep in
// the rows and those in [hold, keep) held — with a held list too small at first (the retry,
// RowStageCapacity 100), cuts that keep none (NaN keep), all, or hold none.
func TestRowSelection(t *testing.T) {
	d := fctest.Gaussian("select", 1000, 37, 5, 3)
	nan := float32(math.NaN())
	for _, m := range []fc.Measure{fc.Pearson, fc.Spearman} {
		for _, rows := range []int{300, 1000} {
			for _, opts := range []Options{{}, {RowStageCapacity: 100}} {
				for _, op := range []fc.Op{
					{Kind: fc.OpEdges, Threshold: 0.1, Inclusive: true},
					{Kind: fc.OpEdges, Threshold: 0.05, Abs: true, Inclusive: true},
				} {
					for _, cut := range [][2]float32{{0.2, 0.3}, {0.12, nan}, {-1, -1}, {0.25, 0.25}} {
						name := fmt.Sprintf("%s/rows%d/stage%d/abs%v/hold%g-keep%g", m, rows, opts.RowStageCapacity, op.Abs, cut[0], cut[1])
						t.Run(name, func(t *testing.T) { checkRowSelection(t, d, m, rows, opts, op, cut[0], cut[1]) })
					}
				}
			}
		}
	}
}

func checkRowSelection(t *testing.T, d fctest.Dataset, m fc.Measure, rows int, opts Options, op fc.Op, hold, keep float32) {
	be := newTestBackend(t, opts)
	defer be.Close()
	ctx := context.Background()
	if err := be.Prepare(ctx, d.X, d.N, d.L, m); err != nil {
		t.Fatal(err)
	}
	blocks := fc.PlanBlocks(d.N, rows)
	var all []fc.Edge
	if err := be.Run(ctx, blocks, op, func(r *fc.BlockResult) error {
		all = append(all, r.Edges...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(all, func(a, b fc.Edge) int {
		if a.I != b.I {
			return cmp.Compare(a.I, b.I)
		}
		return cmp.Compare(a.J, b.J)
	})
	hop := fc.Op{Kind: fc.OpHistogram, Lo: op.Threshold, Hi: 1, Bins: 4096}
	wantHist := make([]uint64, hop.Bins)
	var kept, held []fc.Edge
	for _, e := range all {
		wantHist[hop.BinOf(e.W)]++
		switch {
		case e.W >= keep:
			kept = append(kept, e)
		case e.W >= hold:
			held = append(held, e)
		}
	}
	sr, err := be.(fc.RowSelector).EmitSelectableRows(ctx, blocks, op, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	hist, err := sr.Histogram(hop)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hist, wantHist) {
		t.Fatalf("device histogram of the %d kept edges differs from the host's", len(all))
	}
	if err := sr.Trim(hold, keep); err != nil {
		t.Fatal(err)
	}
	checkRows(t, sr, d.N, kept, held)
}
