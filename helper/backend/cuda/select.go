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
	if err := rs.ensure(0, 0, largest); err != nil { // the compaction goes through the stage
		return err
	}
	// per node: old degree, old row start (within its panel), kept count, new row start
	tables, err := re.deviceRows(st, "trim tables", 2)
	if err != nil {
		return err
	}
	defer cu.MemFree(tables)
	oldDeg, oldStart := tables, at32(tables, n)
	keptDeg, newStart := at32(tables, 2*n), at32(tables, 3*n)
	counts := unsafe.Slice((*uint64)(rs.hostCount), 2)
	var held uint64
	for attempt := 0; ; attempt++ {
		if err := cu.MemsetD32Async(rs.count, 0, 4, st); err != nil {
			return fmt.Errorf("cuda backend: clearing the held counter: %w", err)
		}
		for _, p := range re.panels {
			h := p.i1 - p.i0
			if err := b.fn.panelTrimLaunch(st, p.keys, at32(oldStart, p.i0), at32(oldDeg, p.i0), h, p.i0, hold, keep,
				at32(keptDeg, p.i0), rs.held, rs.count+8, rs.heldCap); err != nil {
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
			if err := b.fn.panelScanLaunch(st, at32(keptDeg, p.i0), h, at32(newStart, p.i0)); err != nil {
				return err
			}
			if err := b.fn.panelCompactLaunch(st, p.keys, at32(oldStart, p.i0), at32(oldDeg, p.i0), h, keep, at32(newStart, p.i0), rs.stage); err != nil {
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

// at32 is the address of element i of a device array of 4-byte values.
func at32(p cu.DevicePtr, i int) cu.DevicePtr { return p + cu.DevicePtr(4*i) }

// deviceRows gives the device the kept edges' row layout: a new buffer of (2 + extra)·N
// uint32 holding every row's degree (from re.deg) at [0, N) and its start within its panel's
// keys (panel_scan per panel) at [N, 2N), the rest for the caller. Enqueued on st; the caller
// frees the buffer.
func (re *rowEdges) deviceRows(st cu.Stream, what string, extra int) (cu.DevicePtr, error) {
	n := len(re.deg)
	buf, err := alloc(what, 4*(2+extra)*n)
	if err != nil {
		return 0, err
	}
	if err := cu.MemcpyHtoD(buf, unsafe.Pointer(&re.deg[0]), int64(4*n)); err != nil {
		cu.MemFree(buf)
		return 0, fmt.Errorf("cuda backend: uploading the row degrees: %w", err)
	}
	for _, p := range re.panels {
		if err := re.b.fn.panelScanLaunch(st, at32(buf, p.i0), p.i1-p.i0, at32(buf, n+p.i0)); err != nil {
			cu.MemFree(buf)
			return 0, err
		}
	}
	return buf, nil
}
