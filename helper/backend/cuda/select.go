//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/hubscope/hubscope/helper/fc"
	"gorgonia.org/cu"
)

// One-pass density (fc.RowSelector): the driver keeps every pair above its sampled bound in
// the row panels (EmitRows with no split), then, without a second product pass,
//  1. Histogram: keys_histogram bins the kept values (fc.Op.BinOf) — the boundary bin b;
//  2. Trim: panel_trim counts per row the edges of bins > b and appends bin b's to the held
//     list, panel_scan gives the new row starts, panel_compact moves the staying keys through
//     the slot's stage, and a device copy puts them back at the panel's start.
// The surplus over k (the sample's margin, ~10–15 % of k) never leaves the device.

// EmitSelectableRows is EmitRows keeping every pair op passes in its row.
func (b *backend) EmitSelectableRows(ctx context.Context, blocks []fc.Block, op fc.Op, done func(int)) (fc.SelectableRows, error) {
	r, err := b.EmitRows(ctx, blocks, op, float32(math.Inf(-1)), done)
	if err != nil {
		return nil, err
	}
	return r.(*rowEdges), nil
}

// Histogram counts the kept edges' values into op's bins on the device.
func (re *rowEdges) Histogram(op fc.Op) ([]uint64, error) {
	if op.Kind != fc.OpHistogram {
		return nil, errors.New("cuda backend: Histogram needs an OpHistogram")
	}
	if err := op.Validate(); err != nil {
		return nil, fmt.Errorf("cuda backend: %w", err)
	}
	b := re.b
	out := make([]uint64, op.Bins)
	err := b.do(func() (err error) {
		s := b.slots[0]
		defer func() {
			if err != nil {
				b.drain()
			}
		}()
		if err := s.ensureHist(op.Bins); err != nil {
			return err
		}
		if err := cu.MemsetD32Async(s.hist, 0, int64(2*op.Bins), s.stream); err != nil {
			return fmt.Errorf("cuda backend: clearing the histogram: %w", err)
		}
		for _, p := range re.panels {
			if p.count > 0 {
				if err := b.fn.keysHistogramLaunch(s.stream, p.keys, p.count, op, s.hist); err != nil {
					return err
				}
			}
		}
		if err := cu.MemcpyDtoHAsync(s.hostHist, s.hist, int64(8*op.Bins), s.stream); err != nil {
			return fmt.Errorf("cuda backend: copying the histogram: %w", err)
		}
		if err := s.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda backend: histogram of the kept edges: %w", err)
		}
		parallelCopy(out, unsafe.Slice((*uint64)(s.hostHist), op.Bins))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Trim keeps the edges ≥ keep in their rows, holds those in [hold, keep), drops the rest.
func (re *rowEdges) Trim(hold, keep float32) error {
	b := re.b
	return b.do(func() (err error) {
		defer func() {
			if err != nil {
				b.drain()
			}
		}()
		return re.trim(hold, keep)
	})
}

func (re *rowEdges) trim(hold, keep float32) error {
	b := re.b
	n := len(re.deg)
	if n == 0 {
		return nil
	}
	largest := 0
	for _, p := range re.panels {
		largest = max(largest, p.count)
	}
	if b.rowSlots[0] == nil {
		b.rowSlots[0] = &rowSlot{}
	}
	rs, st := b.rowSlots[0], b.slots[0].stream
	if err := rs.ensure(0, 0, largest); err != nil {
		return err
	}
	if err := rs.grow(largest, 0); err != nil { // the compaction goes through the stage
		return err
	}
	// per node: old degree, old row start (within its panel), kept count, new row start
	tables, err := alloc("trim tables", 16*n)
	if err != nil {
		return err
	}
	defer cu.MemFree(tables)
	oldDeg, oldStart := tables, tables+cu.DevicePtr(4*n)
	keptDeg, newStart := tables+cu.DevicePtr(8*n), tables+cu.DevicePtr(12*n)
	at := func(p cu.DevicePtr, i int) cu.DevicePtr { return p + cu.DevicePtr(4*i) }
	if err := cu.MemcpyHtoD(oldDeg, unsafe.Pointer(&re.deg[0]), int64(4*n)); err != nil {
		return fmt.Errorf("cuda backend: uploading the row degrees: %w", err)
	}
	counts := unsafe.Slice((*uint64)(rs.hostCount), 2)
	var held uint64
	for attempt := 0; ; attempt++ {
		if err := cu.MemsetD32Async(rs.count, 0, 4, st); err != nil {
			return fmt.Errorf("cuda backend: clearing the held counter: %w", err)
		}
		for _, p := range re.panels {
			h := p.i1 - p.i0
			if err := b.fn.panelScanLaunch(st, at(oldDeg, p.i0), h, at(oldStart, p.i0)); err != nil {
				return err
			}
			if err := b.fn.panelTrimLaunch(st, p.keys, at(oldStart, p.i0), at(oldDeg, p.i0), h, p.i0, hold, keep,
				at(keptDeg, p.i0), rs.held, rs.count+8, rs.heldCap); err != nil {
				return err
			}
		}
		if err := cu.MemcpyDtoHAsync(rs.hostCount, rs.count, 16, st); err != nil {
			return fmt.Errorf("cuda backend: copying the held counter: %w", err)
		}
		if err := st.Synchronize(); err != nil {
			return fmt.Errorf("cuda backend: trimming the kept edges: %w", err)
		}
		held = counts[1]
		if held <= uint64(rs.heldCap) {
			break
		}
		if attempt > 0 {
			return fmt.Errorf("cuda backend: trim held %d edges with room for %d", held, rs.heldCap)
		}
		if err := rs.grow(0, int(held+held/8+4096)); err != nil {
			return err
		}
	}
	kept := make([]uint32, n)
	if err := cu.MemcpyDtoH(unsafe.Pointer(&kept[0]), keptDeg, int64(4*n)); err != nil {
		return fmt.Errorf("cuda backend: copying the trimmed degrees: %w", err)
	}
	for k := range re.panels {
		p := &re.panels[k]
		c := 0
		for i := p.i0; i < p.i1; i++ {
			if kept[i] > re.deg[i] {
				return fmt.Errorf("cuda backend: trim kept %d of row %d's %d edges", kept[i], i, re.deg[i])
			}
			c += int(kept[i])
		}
		if c > 0 && c < p.count {
			h := p.i1 - p.i0
			if err := b.fn.panelScanLaunch(st, at(keptDeg, p.i0), h, at(newStart, p.i0)); err != nil {
				return err
			}
			if err := b.fn.panelCompactLaunch(st, p.keys, at(oldStart, p.i0), at(oldDeg, p.i0), h, keep, at(newStart, p.i0), rs.stage); err != nil {
				return err
			}
			if err := cu.MemcpyDtoDAsync(p.keys, rs.stage, int64(8*c), st); err != nil {
				return fmt.Errorf("cuda backend: moving the trimmed rows [%d,%d): %w", p.i0, p.i1, err)
			}
		}
		p.count = c
	}
	re.held = re.held[:0]
	if held > 0 {
		if err := cu.MemcpyDtoHAsync(rs.hostHeld, rs.held, int64(held*edgeBytes), st); err != nil {
			return fmt.Errorf("cuda backend: copying the held edges: %w", err)
		}
	}
	if err := st.Synchronize(); err != nil {
		return fmt.Errorf("cuda backend: compacting the trimmed rows: %w", err)
	}
	if held > 0 {
		re.held = append(re.held, unsafe.Slice((*fc.Edge)(rs.hostHeld), held)...)
	}
	copy(re.deg, kept)
	return nil
}
