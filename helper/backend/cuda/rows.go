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

// Row-ordered emission (fc.RowEmitter): each row panel's kept edges are put in CSR order on
// the device and stay there until the driver, knowing every row's degree, copies them
// straight into the network's arrays. Per panel:
//  1. correlation_rows per block: tile product, threshold; kept pairs written per tile as one
//     chunk ordered by (row, column) into the slot's stage, the chunk's per-row counts and
//     offsets into the panel tables; held pairs (below split) appended to a separate list;
//  2. panel_degrees, panel_scan, panel_gather: row degrees, row starts, and the rows'
//     segments concatenated tile by tile into the panel's own device buffer.
//
// Two panels are in flight on the two streams, so one panel's gather and small copies
// overlap the next panel's products. Rows then streams the panels back through two pinned
// buffers: the DMA of one range overlaps the host's unpacking of the previous one.

const (
	// rowStageInitial is the stage capacity (edges) a slot starts with; it grows to the
	// largest panel seen (overflowing panels are recomputed once with room).
	rowStageInitial = 1 << 24
	rowHeldInitial  = 1 << 16
	// rowChunkEdges is the size of each of the two pinned buffers Rows streams through
	// (8 bytes an edge: 128 MiB): large against the per-copy latency, small against host RAM.
	rowChunkEdges = 1 << 24
	// rowChunkMinEdges is the smallest range Rows copies at once (8 MiB), against per-copy
	// latency.
	rowChunkMinEdges = 1 << 20
	// maxStage keeps stage offsets within the tables' uint32.
	maxStage = math.MaxUint32
	// keySegment is the size (edges, 8 bytes each: 4 GiB) of the device segments the panels'
	// edges are packed into. Segments are pooled by the backend and reused by the next pass:
	// allocating and freeing a buffer per panel cost W3 (61 panels, 40 GB) about a second.
	keySegment = 1 << 29
)

// keySeg is a pooled device buffer for panels' edges.
type keySeg struct {
	p    cu.DevicePtr
	cap  int // edges
	used int
}

// rowSlot is the device state of one panel in flight.
type rowSlot struct {
	count     cu.DevicePtr // [stage edges, held edges], uint64
	hostCount unsafe.Pointer

	stage    cu.DevicePtr
	stageCap int
	held     cu.DevicePtr
	heldCap  int
	hostHeld unsafe.Pointer

	cnt, off cu.DevicePtr // tables, cells each
	cells    int
	deg      cu.DevicePtr // uint32 per panel row
	start    cu.DevicePtr
	hostDeg  unsafe.Pointer
	rows     int
}

// rowPanel is one finished panel: rows [i0, i1), its edges on the device.
type rowPanel struct {
	i0, i1 int
	keys   cu.DevicePtr
	count  int
}

// rowEdges implements fc.RowEdges.
type rowEdges struct {
	b      *backend
	deg    []uint32
	held   []fc.Edge
	panels []rowPanel
	segs   []*keySeg // taken from the backend's pool, returned by free
}

// place finds room for count edges: the current segment, a pooled one, or a new one.
func (re *rowEdges) place(count int) (cu.DevicePtr, error) {
	if n := len(re.segs); n > 0 {
		if sg := re.segs[n-1]; sg.cap-sg.used >= count {
			p := sg.p + cu.DevicePtr(8*sg.used)
			sg.used += count
			return p, nil
		}
	}
	b := re.b
	var sg *keySeg
	for k, c := range b.keyPool {
		if c.cap >= count {
			sg = c
			b.keyPool = append(b.keyPool[:k], b.keyPool[k+1:]...)
			break
		}
	}
	if sg == nil {
		size := max(count, keySegment)
		p, err := cu.MemAlloc(int64(8 * size))
		if err != nil && size > count { // a smaller segment may still fit
			size = count
			p, err = cu.MemAlloc(int64(8 * size))
		}
		if err != nil {
			return 0, fmt.Errorf("cuda backend: keeping %d edges on the device: %w", count, err)
		}
		sg = &keySeg{p: p, cap: size}
	}
	sg.used = count
	re.segs = append(re.segs, sg)
	return sg.p, nil
}

// panelPlan is one row panel of the pass: its blocks and their first tile columns.
type panelPlan struct {
	blocks []fc.Block
	tc0    []int
	ldt    int
}

// planPanels groups blocks into row panels as fc.PlanBlocks makes them (each panel starts
// on the diagonal and runs contiguously to column n; panels contiguous from row 0 to n).
func planPanels(blocks []fc.Block, n int) ([]panelPlan, bool) {
	var ps []panelPlan
	next := 0
	for k := 0; k < len(blocks); {
		b0 := blocks[k]
		if b0.I0 != next || b0.J0 != b0.I0 {
			return nil, false
		}
		p := panelPlan{}
		col := b0.J0
		for ; k < len(blocks) && blocks[k].I0 == b0.I0; k++ {
			b := blocks[k]
			if b.I1 != b0.I1 || b.J0 != col {
				return nil, false
			}
			p.blocks = append(p.blocks, b)
			p.tc0 = append(p.tc0, p.ldt)
			p.ldt += ceilDiv(b.J1-b.J0, sgemmTile)
			col = b.J1
		}
		if col != n {
			return nil, false
		}
		p.ldt = roundUp(p.ldt, 4) // panel_degrees reads the counts four at a time
		ps = append(ps, p)
		next = b0.I1
	}
	return ps, next == n
}

func unsupported(why string) error {
	return fmt.Errorf("cuda backend: %w: %s", fc.ErrRowsUnsupported, why)
}

func (b *backend) EmitRows(ctx context.Context, blocks []fc.Block, op fc.Op, split float32, done func(int)) (fc.RowEdges, error) {
	if !b.prepared {
		return nil, errors.New("cuda backend: EmitRows before Prepare")
	}
	if err := op.Validate(); err != nil {
		return nil, fmt.Errorf("cuda backend: %w", err)
	}
	if op.Kind != fc.OpEdges {
		return nil, unsupported("not an edge pass")
	}
	if b.measure == fc.Kendall {
		return nil, unsupported("Kendall τ-b takes the block path")
	}
	if b.subjects() > 1 {
		return nil, unsupported("the group mean takes the block path")
	}
	if b.opts.NoRowEmission {
		return nil, unsupported("disabled by Options.NoRowEmission")
	}
	for _, blk := range blocks {
		if err := blk.Check(b.n); err != nil {
			return nil, fmt.Errorf("cuda backend: %w", err)
		}
	}
	plan, ok := planPanels(blocks, b.n)
	if !ok {
		return nil, unsupported("blocks are not row panels")
	}
	re := &rowEdges{b: b, deg: make([]uint32, b.n)}
	err := b.do(func() error {
		b.live[re] = struct{}{}
		return b.emitRows(ctx, plan, op, split, done, re)
	})
	if err != nil {
		_ = b.do(func() error { re.free(); delete(b.live, re); return nil })
		if errors.Is(err, cu.OutOfMemory) {
			_ = b.do(func() error { b.freeRowSlots(); return nil })
			b.notef("GPU out of memory for the row-ordered edge pass (%v): it runs block by block instead", err)
			return nil, unsupported(err.Error())
		}
		return nil, err
	}
	return re, nil
}

func (b *backend) emitRows(ctx context.Context, plan []panelPlan, op fc.Op, split float32, done func(int), re *rowEdges) (err error) {
	defer func() {
		if err != nil {
			b.drain()
		}
	}()
	rows, cells := 0, 0
	for _, p := range plan {
		h := p.blocks[0].I1 - p.blocks[0].I0
		rows, cells = max(rows, h), max(cells, h*p.ldt)
	}
	for i := range b.rowSlots {
		if b.rowSlots[i] == nil {
			b.rowSlots[i] = &rowSlot{}
		}
		if err := b.rowSlots[i].ensure(rows, cells, b.opts.RowStageCapacity); err != nil {
			return err
		}
	}
	for k, p := range plan {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.enqueueRows(k%2, p, op, split); err != nil {
			return err
		}
		if k > 0 {
			if err := b.completeRows((k-1)%2, plan[k-1], op, split, re); err != nil {
				return err
			}
			done(len(plan[k-1].blocks))
		}
	}
	if len(plan) > 0 {
		if err := b.completeRows((len(plan)-1)%2, plan[len(plan)-1], op, split, re); err != nil {
			return err
		}
		done(len(plan[len(plan)-1].blocks))
	}
	return nil
}

// enqueueRows queues panel p on slot k: clear the counters and count table, one
// correlation_rows per block, copy back the counters.
func (b *backend) enqueueRows(k int, p panelPlan, op fc.Op, split float32) error {
	rs, st := b.rowSlots[k], b.slots[k].stream
	h := p.blocks[0].I1 - p.blocks[0].I0
	if err := cu.MemsetD32Async(rs.count, 0, 4, st); err != nil {
		return fmt.Errorf("cuda backend: clearing the panel counters: %w", err)
	}
	if err := cu.MemsetD8Async(rs.cnt, 0, int64(h*p.ldt), st); err != nil {
		return fmt.Errorf("cuda backend: clearing the panel table: %w", err)
	}
	t := rowTables{cnt: rs.cnt, off: rs.off, ldt: p.ldt}
	for q, blk := range p.blocks {
		if err := b.fn.correlationRowsLaunch(st, b.series(), blk, op, split, t, p.tc0[q], rs.stage, rs.count, rs.stageCap, rs.held, rs.heldCap); err != nil {
			return err
		}
	}
	if err := cu.MemcpyDtoHAsync(rs.hostCount, rs.count, 16, st); err != nil {
		return fmt.Errorf("cuda backend: copying the panel counters: %w", err)
	}
	return nil
}

func panelString(p panelPlan) string {
	return fmt.Sprintf("row panel [%d,%d)", p.blocks[0].I0, p.blocks[0].I1)
}

// completeRows waits for panel p on slot k, recomputes it once with room when its stage or
// held list overflowed, then gathers its rows into a buffer of their own and fetches the
// row degrees and held edges.
func (b *backend) completeRows(k int, p panelPlan, op fc.Op, split float32, re *rowEdges) error {
	rs, st := b.rowSlots[k], b.slots[k].stream
	if err := st.Synchronize(); err != nil {
		return fmt.Errorf("cuda backend: %s: %w", panelString(p), err)
	}
	counts := unsafe.Slice((*uint64)(rs.hostCount), 2)
	count, held := counts[0], counts[1]
	if count > uint64(rs.stageCap) || held > uint64(rs.heldCap) {
		if count > maxStage {
			return unsupported(fmt.Sprintf("%s keeps %d edges, more than a stage indexes", panelString(p), count))
		}
		if err := rs.grow(int(min(count+count/8+4096, maxStage)), int(held+held/8+4096)); err != nil {
			return err
		}
		if err := b.enqueueRows(k, p, op, split); err != nil {
			return err
		}
		if err := st.Synchronize(); err != nil {
			return fmt.Errorf("cuda backend: %s (retry with room): %w", panelString(p), err)
		}
		if c2, h2 := counts[0], counts[1]; c2 != count || h2 != held {
			return fmt.Errorf("cuda backend: %s gave %d kept and %d held edges, then %d and %d on the retry", panelString(p), count, held, c2, h2)
		}
	}
	i0, i1 := p.blocks[0].I0, p.blocks[0].I1
	h := i1 - i0
	panel := rowPanel{i0: i0, i1: i1, count: int(count)}
	if count > 0 {
		var err error
		if panel.keys, err = re.place(int(count)); err != nil {
			return fmt.Errorf("%s: %w", panelString(p), err)
		}
	}
	re.panels = append(re.panels, panel)
	t := rowTables{cnt: rs.cnt, off: rs.off, ldt: p.ldt}
	if err := b.fn.panelDegreesLaunch(st, t, h, rs.deg); err != nil {
		return err
	}
	if count > 0 {
		if err := b.fn.panelScanLaunch(st, rs.deg, h, rs.start); err != nil {
			return err
		}
		if err := b.fn.panelGatherLaunch(st, t, h, rs.start, rs.stage, panel.keys); err != nil {
			return err
		}
	}
	if err := cu.MemcpyDtoHAsync(rs.hostDeg, rs.deg, int64(4*h), st); err != nil {
		return fmt.Errorf("cuda backend: copying the row degrees of %s: %w", panelString(p), err)
	}
	if held > 0 {
		if err := cu.MemcpyDtoHAsync(rs.hostHeld, rs.held, int64(held*edgeBytes), st); err != nil {
			return fmt.Errorf("cuda backend: copying the held edges of %s: %w", panelString(p), err)
		}
	}
	if err := st.Synchronize(); err != nil {
		return fmt.Errorf("cuda backend: gathering %s: %w", panelString(p), err)
	}
	deg := unsafe.Slice((*uint32)(rs.hostDeg), h)
	var sum uint64
	for _, d := range deg {
		sum += uint64(d)
	}
	if sum != count {
		return fmt.Errorf("cuda backend: %s: row degrees add up to %d, the stage holds %d edges", panelString(p), sum, count)
	}
	copy(re.deg[i0:i1], deg)
	if held > 0 {
		re.held = append(re.held, unsafe.Slice((*fc.Edge)(rs.hostHeld), held)...)
	}
	return nil
}

// ensure sizes the slot's tables and degree arrays for panels of up to rows rows and cells
// table cells, and gives the stage and held list their initial room.
func (rs *rowSlot) ensure(rows, cells, stage int) error {
	var err error
	if rs.count == 0 {
		if rs.count, err = alloc("panel counters", 16); err != nil {
			return err
		}
		if rs.hostCount, err = pinnedAlloc(16); err != nil {
			return err
		}
	}
	if rs.cells < cells {
		freeDev(&rs.cnt, &rs.off)
		rs.cells = 0
		if rs.cnt, err = alloc("panel count table", cells); err != nil {
			return err
		}
		if rs.off, err = alloc("panel offset table", 4*cells); err != nil {
			return err
		}
		rs.cells = cells
	}
	if rs.rows < rows {
		freeDev(&rs.deg, &rs.start)
		pinnedFree(rs.hostDeg)
		rs.hostDeg, rs.rows = nil, 0
		if rs.deg, err = alloc("panel degrees", 4*rows); err != nil {
			return err
		}
		if rs.start, err = alloc("panel row starts", 4*rows); err != nil {
			return err
		}
		if rs.hostDeg, err = pinnedAlloc(4 * rows); err != nil {
			return err
		}
		rs.rows = rows
	}
	if stage <= 0 {
		stage = rowStageInitial
	}
	return rs.grow(stage, min(stage, rowHeldInitial))
}

// grow makes room for stage kept and held edges (never shrinks).
func (rs *rowSlot) grow(stage, held int) error {
	var err error
	if rs.stageCap < stage {
		freeDev(&rs.stage)
		rs.stageCap = 0
		if rs.stage, err = alloc("panel stage", 8*stage); err != nil {
			return err
		}
		rs.stageCap = stage
	}
	if rs.heldCap < held {
		freeDev(&rs.held)
		pinnedFree(rs.hostHeld)
		rs.hostHeld, rs.heldCap = nil, 0
		if rs.held, err = alloc("held edges", edgeBytes*held); err != nil {
			return err
		}
		if rs.hostHeld, err = pinnedAlloc(edgeBytes * held); err != nil {
			return err
		}
		rs.heldCap = held
	}
	return nil
}

func (rs *rowSlot) free() {
	freeDev(&rs.count, &rs.stage, &rs.held, &rs.cnt, &rs.off, &rs.deg, &rs.start)
	pinnedFree(rs.hostCount)
	pinnedFree(rs.hostHeld)
	pinnedFree(rs.hostDeg)
	*rs = rowSlot{}
}

func freeDev(ps ...*cu.DevicePtr) {
	for _, p := range ps {
		if *p != 0 {
			cu.MemFree(*p)
			*p = 0
		}
	}
}

// freeRowSlots gives the row slots' memory back (after running out of device memory, so the
// block path the driver falls back to has it).
func (b *backend) freeRowSlots() {
	b.drain()
	for i, rs := range b.rowSlots {
		if rs != nil {
			rs.free()
			b.rowSlots[i] = nil
		}
	}
	for i := range b.rowBuf {
		pinnedFree(b.rowBuf[i])
		b.rowBuf[i] = nil
	}
	b.rowBufCap = 0
	for _, sg := range b.keyPool {
		freeDev(&sg.p)
	}
	b.keyPool = nil
}

func (re *rowEdges) Degrees() []uint32 { return re.deg }
func (re *rowEdges) Held() []fc.Edge   { return re.held }

// free gives the panels' segments back to the backend's pool (on the device thread).
func (re *rowEdges) free() {
	for _, sg := range re.segs {
		sg.used = 0
		re.b.keyPool = append(re.b.keyPool, sg)
	}
	re.segs, re.panels = nil, nil
}

func (re *rowEdges) Close() error {
	b := re.b
	if b.w == nil { // the backend's Close freed everything
		return nil
	}
	return b.w.do(func() error {
		re.free()
		delete(b.live, re)
		return nil
	})
}

// Rows copies the panels back in row ranges of about a sixteenth of the edges (1–16 M edges)
// through two pinned buffers: the range after the one f is unpacking is already on its way.
func (re *rowEdges) Rows(ctx context.Context, f func(i0, i1 int, keys []uint64) error) error {
	b := re.b
	type span struct {
		i0, i1 int
		src    cu.DevicePtr
		edges  int
	}
	var spans []span
	longest, total := 0, 0
	for _, p := range re.panels {
		total += p.count
	}
	// About 16 ranges: the first range's copy is the one nothing overlaps, so W1's 144 MB
	// in one 128 MiB range and a small one waited ~5 ms before any unpacking began.
	chunk := min(max(total/16, rowChunkMinEdges), rowChunkEdges)
	for _, p := range re.panels {
		at := 0
		for i := p.i0; i < p.i1; {
			e, c := i, 0
			for e < p.i1 && (e == i || c+int(re.deg[e]) <= chunk) {
				c += int(re.deg[e])
				e++
			}
			spans = append(spans, span{i, e, p.keys + cu.DevicePtr(8*at), c})
			longest = max(longest, c)
			at += c
			i = e
		}
		if at != p.count {
			return fmt.Errorf("cuda backend: rows [%d,%d) hold %d edges, their degrees say %d", p.i0, p.i1, p.count, at)
		}
	}
	return b.do(func() (err error) {
		defer func() {
			if err != nil {
				b.drain()
			}
		}()
		if b.rowBufCap < longest {
			for i := range b.rowBuf {
				pinnedFree(b.rowBuf[i])
				b.rowBuf[i] = nil
			}
			b.rowBufCap = 0
			c := max(longest, rowChunkEdges)
			for i := range b.rowBuf {
				if b.rowBuf[i], err = pinnedAlloc(8 * c); err != nil {
					return err
				}
			}
			b.rowBufCap = c
		}
		fetch := func(k int) error {
			s := spans[k]
			if s.edges == 0 {
				return nil
			}
			if err := cu.MemcpyDtoHAsync(b.rowBuf[k%2], s.src, int64(8*s.edges), b.slots[k%2].stream); err != nil {
				return fmt.Errorf("cuda backend: copying rows [%d,%d): %w", s.i0, s.i1, err)
			}
			return nil
		}
		if len(spans) > 0 {
			if err := fetch(0); err != nil {
				return err
			}
		}
		for k, s := range spans {
			if err := ctx.Err(); err != nil {
				return err
			}
			if k+1 < len(spans) {
				if err := fetch(k + 1); err != nil {
					return err
				}
			}
			if err := b.slots[k%2].stream.Synchronize(); err != nil {
				return fmt.Errorf("cuda backend: copying rows [%d,%d): %w", s.i0, s.i1, err)
			}
			var keys []uint64
			if s.edges > 0 {
				keys = unsafe.Slice((*uint64)(b.rowBuf[k%2]), s.edges)
			}
			b.inSink.Store(true)
			err := f(s.i0, s.i1, keys)
			b.inSink.Store(false)
			if err != nil {
				return err
			}
		}
		return nil
	})
}
