//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/kernels"
	"gorgonia.org/cu"
)

// Go wrappers of the kernels in package kernels, one per kernel and named after it. Each
// states the launch shape its .cu header documents; all parameters travel as 64-bit values.

// Tile edges of the block-pair kernels (SG_TM in sgemm_tile.cuh, PC_TM in popc_tile.cuh).
const (
	sgemmTile = 128
	popcTile  = 64
	// Words of a Kendall plane row and floats of a normalized row are padded to the tile's
	// k-step (PC_TK, SG_TK) so the vector loads stay in bounds and aligned.
	popcStepWords = 16
	sgemmStep     = 8
	maxSharedRow  = 48 << 10 // default dynamic shared memory limit per CTA, bytes
)

// Op flags (OP_ABS, OP_INCLUSIVE in common.cuh).
const (
	opAbs       = 1
	opInclusive = 2
)

// fc.Edge must be the 12-byte record the kernels write (struct Edge in common.cuh): the
// device's edge list is copied straight into the slice handed to the sink.
const (
	_ = uint(12 - unsafe.Sizeof(fc.Edge{}))
	_ = uint(unsafe.Sizeof(fc.Edge{}) - 12)
)

type functions struct {
	normalizeRows, averageRanks, kendallSigns                              cu.Function
	correlationEdges, correlationHistogram, kendallEdges, kendallHistogram cu.Function
	correlationValues, kendallValues, topkSelect                           cu.Function
	checkSeries                                                            cu.Function
	correlationRows, panelDegrees, panelScan, panelGather                  cu.Function
	splitTF32, splitF16x3                                                  cu.Function
	keysHistogram, panelTrim, panelCompact                                 cu.Function
	componentsInit, componentsHook, componentsFlatten                      cu.Function
	groupEdges, groupHistogram, groupValues                                cu.Function
}

func loadFunctions(mod cu.Module) (functions, error) {
	var f functions
	for _, k := range []struct {
		name string
		dst  *cu.Function
	}{
		{kernels.NormalizeRows, &f.normalizeRows},
		{kernels.AverageRanks, &f.averageRanks},
		{kernels.KendallSigns, &f.kendallSigns},
		{kernels.CorrelationEdges, &f.correlationEdges},
		{kernels.CorrelationHistogram, &f.correlationHistogram},
		{kernels.KendallEdges, &f.kendallEdges},
		{kernels.KendallHistogram, &f.kendallHistogram},
		{kernels.CorrelationValues, &f.correlationValues},
		{kernels.KendallValues, &f.kendallValues},
		{kernels.TopKSelect, &f.topkSelect},
		{kernels.CheckSeries, &f.checkSeries},
		{kernels.CorrelationRows, &f.correlationRows},
		{kernels.PanelDegrees, &f.panelDegrees},
		{kernels.PanelScan, &f.panelScan},
		{kernels.PanelGather, &f.panelGather},
		{kernels.SplitTF32, &f.splitTF32},
		{kernels.SplitF16x3, &f.splitF16x3},
		{kernels.KeysHistogram, &f.keysHistogram},
		{kernels.PanelTrim, &f.panelTrim},
		{kernels.PanelCompact, &f.panelCompact},
		{kernels.ComponentsInit, &f.componentsInit},
		{kernels.ComponentsHook, &f.componentsHook},
		{kernels.ComponentsFlatten, &f.componentsFlatten},
		{kernels.GroupEdges, &f.groupEdges},
		{kernels.GroupHistogram, &f.groupHistogram},
		{kernels.GroupValues, &f.groupValues},
	} {
		fn, err := mod.Function(k.name)
		if err != nil {
			return f, fmt.Errorf("cuda backend: kernel %s not in the embedded fatbin: %w", k.name, err)
		}
		*k.dst = fn
	}
	return f, nil
}

// launch starts fn on stream s with 64-bit parameters.
func launch(name string, fn cu.Function, gx, gy, block, shared int, s cu.Stream, params ...uint64) error {
	ptrs := make([]unsafe.Pointer, len(params))
	for i := range params {
		ptrs[i] = unsafe.Pointer(&params[i])
	}
	if err := fn.Launch(gx, gy, 1, block, 1, 1, shared, s, ptrs); err != nil {
		return fmt.Errorf("cuda backend: launching %s (grid %d×%d): %w", name, gx, gy, err)
	}
	return nil
}

func ptr(p cu.DevicePtr) uint64 { return uint64(p) }
func i64(v int) uint64          { return uint64(int64(v)) }
func f64(v float64) uint64      { return math.Float64bits(v) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }
func roundUp(a, b int) int { return ceilDiv(a, b) * b }

// normalizeRows: grid ceil(n/8), block 256.
func (f *functions) normalizeRowsLaunch(s cu.Stream, x cu.DevicePtr, n, l int, u cu.DevicePtr, ld int) error {
	return launch(kernels.NormalizeRows, f.normalizeRows, ceilDiv(n, 8), 1, 256, 0, s, ptr(x), i64(n), i64(l), ptr(u), i64(ld))
}

// averageRanks: grid n, block 128, shared roundUp(l, 4)·4 bytes (the kernel's 16-byte loads).
func (f *functions) averageRanksLaunch(s cu.Stream, x cu.DevicePtr, n, l int, ranks cu.DevicePtr) error {
	return launch(kernels.AverageRanks, f.averageRanks, n, 1, 128, 4*roundUp(l, 4), s, ptr(x), i64(n), i64(l), ptr(ranks))
}

// kendallSigns: grid n, block 256, shared l·4 bytes.
func (f *functions) kendallSignsLaunch(s cu.Stream, x cu.DevicePtr, n, l int, p, q cu.DevicePtr, ldw int, nonzero, positives cu.DevicePtr) error {
	return launch(kernels.KendallSigns, f.kendallSigns, n, 1, 256, 4*l, s, ptr(x), i64(n), i64(l), ptr(p), ptr(q), i64(ldw), ptr(nonzero), ptr(positives))
}

func opFlags(op fc.Op) uint64 {
	var fl uint64
	if op.Abs {
		fl |= opAbs
	}
	if op.Inclusive {
		fl |= opInclusive
	}
	return fl
}

// corrSeries are the prepared Pearson/Spearman operands every correlation block kernel takes
// first (correlation_tile.cuh): the 3×TF32 planes hi = tf32(u), lo = tf32(u − hi) when tc,
// else u itself in hi.
type corrSeries struct {
	hi, lo cu.DevicePtr
	ld     int
	tc     bool
	unit   int // group kernels only: group_tile.cuh's unit when ≥ 2 (planes of halves)
	fo     int // unit 4: the fragment-ordered planes' offset in halves (group_f16x3_tile.cuh)
}

func (c corrSeries) params() []uint64 {
	var tc uint64
	if c.tc {
		tc = 1
	}
	return []uint64{ptr(c.hi), ptr(c.lo), i64(c.ld), i64(c.ld), tc}
}

// groupParams are the group kernels' leading operands (group_tile.cuh) for block b: the
// series as corrSeries gives them with ld one subject's row length (also the product's K: the
// padding is zeros, as for one scan; unit 4 takes the fragment-ordered planes' offset there),
// the product unit, then the number of subjects. The fragment-ordered copies hold groups of
// 16 nodes, so the units that read them (4, 5, 7, 9) need tiles whose first row is a multiple
// of 16: a block starting elsewhere (a forced block height, or the halves of a block out of
// device memory) reads the plain planes instead (groupPlain: 2, 6, 6, 8). Both give the same values bit for bit: the mma receives the
// same registers in the same order, only loaded from another place.
func (c corrSeries) groupParams(subjects int, b fc.Block) []uint64 {
	unit, k := uint64(c.unit), c.ld
	if c.tc {
		unit = 1
	}
	if groupFrag(c.unit) {
		if b.I0%16 == 0 {
			k = c.fo
		} else {
			unit = uint64(groupPlain(c.unit))
		}
	}
	return []uint64{ptr(c.hi), ptr(c.lo), i64(c.ld), i64(k), unit, i64(subjects)}
}

// groupGrid is a group kernel's grid and dynamic shared memory for block b (groupShape).
func (c corrSeries) groupGrid(b fc.Block) (gx, gy, shared int) {
	unit := c.unit
	if c.tc {
		unit = 1
	}
	rows, shared := groupShape(unit)
	return ceilDiv(b.J1-b.J0, sgemmTile), ceilDiv(b.I1-b.I0, rows), shared
}

func blockParams(b fc.Block) []uint64 { return []uint64{i64(b.I0), i64(b.I1), i64(b.J0), i64(b.J1)} }

// correlationEdges: grid (ceil((J1−J0)/128), ceil((I1−I0)/128)), block 256.
func (f *functions) correlationEdgesLaunch(s cu.Stream, u corrSeries, b fc.Block, op fc.Op, out, count cu.DevicePtr, capacity int) error {
	p := append(u.params(), blockParams(b)...)
	p = append(p, f64(op.Threshold), opFlags(op), ptr(out), ptr(count), uint64(capacity))
	return launch(kernels.CorrelationEdges, f.correlationEdges, ceilDiv(b.J1-b.J0, sgemmTile), ceilDiv(b.I1-b.I0, sgemmTile), 256, 0, s, p...)
}

// correlationHistogram: grid (ceil((J1−J0)/128), ceil((I1−I0)/128)), block 256.
func (f *functions) correlationHistogramLaunch(s cu.Stream, u corrSeries, b fc.Block, op fc.Op, hist cu.DevicePtr) error {
	p := append(u.params(), blockParams(b)...)
	p = append(p, f64(op.Lo), f64(op.Hi), i64(op.Bins), opFlags(op), ptr(hist))
	return launch(kernels.CorrelationHistogram, f.correlationHistogram, ceilDiv(b.J1-b.J0, sgemmTile), ceilDiv(b.I1-b.I0, sgemmTile), 256, 0, s, p...)
}

// groupEdges: grid (ceil((J1−J0)/128), ceil((I1−I0)/TM)), block 256, shared memory by unit
// (groupGrid).
func (f *functions) groupEdgesLaunch(s cu.Stream, u corrSeries, subjects int, b fc.Block, op fc.Op, out, count cu.DevicePtr, capacity int) error {
	p := append(u.groupParams(subjects, b), blockParams(b)...)
	p = append(p, f64(op.Threshold), opFlags(op), ptr(out), ptr(count), uint64(capacity))
	gx, gy, shared := u.groupGrid(b)
	return launch(kernels.GroupEdges, f.groupEdges, gx, gy, 256, shared, s, p...)
}

// groupHistogram: as groupEdges.
func (f *functions) groupHistogramLaunch(s cu.Stream, u corrSeries, subjects int, b fc.Block, op fc.Op, hist cu.DevicePtr) error {
	p := append(u.groupParams(subjects, b), blockParams(b)...)
	p = append(p, f64(op.Lo), f64(op.Hi), i64(op.Bins), opFlags(op), ptr(hist))
	gx, gy, shared := u.groupGrid(b)
	return launch(kernels.GroupHistogram, f.groupHistogram, gx, gy, 256, shared, s, p...)
}

// groupValues: as groupEdges.
func (f *functions) groupValuesLaunch(s cu.Stream, u corrSeries, subjects int, b fc.Block, op fc.Op, v cu.DevicePtr, ldv int) error {
	p := append(u.groupParams(subjects, b), blockParams(b)...)
	p = append(p, opFlags(op), ptr(v), i64(ldv))
	gx, gy, shared := u.groupGrid(b)
	return launch(kernels.GroupValues, f.groupValues, gx, gy, 256, shared, s, p...)
}

// kendallEdges: grid (ceil((J1−J0)/64), ceil((I1−I0)/64)), block 256.
func (f *functions) kendallEdgesLaunch(s cu.Stream, k kendallPlanes, b fc.Block, op fc.Op, out, count cu.DevicePtr, capacity int) error {
	p := append(k.params(), blockParams(b)...)
	p = append(p, f64(op.Threshold), opFlags(op), ptr(out), ptr(count), uint64(capacity))
	return launch(kernels.KendallEdges, f.kendallEdges, ceilDiv(b.J1-b.J0, popcTile), ceilDiv(b.I1-b.I0, popcTile), 256, 0, s, p...)
}

// kendallHistogram: grid (ceil((J1−J0)/64), ceil((I1−I0)/64)), block 256.
func (f *functions) kendallHistogramLaunch(s cu.Stream, k kendallPlanes, b fc.Block, op fc.Op, hist cu.DevicePtr) error {
	p := append(k.params(), blockParams(b)...)
	p = append(p, f64(op.Lo), f64(op.Hi), i64(op.Bins), opFlags(op), ptr(hist))
	return launch(kernels.KendallHistogram, f.kendallHistogram, ceilDiv(b.J1-b.J0, popcTile), ceilDiv(b.I1-b.I0, popcTile), 256, 0, s, p...)
}

// correlationValues: grid (ceil((J1−J0)/128), ceil((I1−I0)/128)), block 256.
func (f *functions) correlationValuesLaunch(s cu.Stream, u corrSeries, b fc.Block, op fc.Op, v cu.DevicePtr, ldv int) error {
	p := append(u.params(), blockParams(b)...)
	p = append(p, opFlags(op), ptr(v), i64(ldv))
	return launch(kernels.CorrelationValues, f.correlationValues, ceilDiv(b.J1-b.J0, sgemmTile), ceilDiv(b.I1-b.I0, sgemmTile), 256, 0, s, p...)
}

// kendallValues: grid (ceil((J1−J0)/64), ceil((I1−I0)/64)), block 256.
func (f *functions) kendallValuesLaunch(s cu.Stream, k kendallPlanes, b fc.Block, op fc.Op, v cu.DevicePtr, ldv int) error {
	p := append(k.params(), blockParams(b)...)
	p = append(p, opFlags(op), ptr(v), i64(ldv))
	return launch(kernels.KendallValues, f.kendallValues, ceilDiv(b.J1-b.J0, popcTile), ceilDiv(b.I1-b.I0, popcTile), 256, 0, s, p...)
}

// topkSelect: grid lines, block 256.
func (f *functions) topkSelectLaunch(s cu.Stream, v cu.DevicePtr, lines, lineStride, elemStride, length, k, row0, col0 int, byColumn bool, out, count cu.DevicePtr, capacity int) error {
	var bc uint64
	if byColumn {
		bc = 1
	}
	return launch(kernels.TopKSelect, f.topkSelect, lines, 1, 256, 0, s, ptr(v), i64(lineStride), i64(elemStride), i64(length),
		i64(k), i64(row0), i64(col0), bc, ptr(out), ptr(count), uint64(capacity))
}

// splitTF32: grid ceil(count/256), block 256.
func (f *functions) splitTF32Launch(s cu.Stream, u, lo cu.DevicePtr, count int) error {
	return launch(kernels.SplitTF32, f.splitTF32, ceilDiv(count, 256), 1, 256, 0, s, ptr(u), ptr(lo), i64(count))
}

// splitF16x3: grid ceil(rows·ldh/256), block 256; fo > 0 also writes the fragment-ordered
// copies fo halves past each plane's start.
func (f *functions) splitF16x3Launch(s cu.Stream, u cu.DevicePtr, ld, rows, ldh, subjects int, hi, lo cu.DevicePtr, fo int) error {
	return launch(kernels.SplitF16x3, f.splitF16x3, ceilDiv(rows*ldh, 256), 1, 256, 0, s, ptr(u), i64(ld), i64(rows), i64(ldh),
		i64(subjects), ptr(hi), ptr(lo), i64(fo))
}

// checkSeries: grid ceil(n/8), block 256.
func (f *functions) checkSeriesLaunch(s cu.Stream, x cu.DevicePtr, n, l int, bad cu.DevicePtr) error {
	return launch(kernels.CheckSeries, f.checkSeries, ceilDiv(n, 8), 1, 256, 0, s, ptr(x), i64(n), i64(l), ptr(bad))
}

// rowTables are a row panel's per-(row, tile column) records (rows_tile.cuh RowTables).
type rowTables struct {
	cnt, off cu.DevicePtr
	ldt      int
}

// correlationRows: grid (ceil((J1−J0)/128), ceil((I1−I0)/128)), block 256; count holds the
// stage and held counters.
func (f *functions) correlationRowsLaunch(s cu.Stream, u corrSeries, b fc.Block, op fc.Op, split float32,
	t rowTables, tc0 int, stage, count cu.DevicePtr, capacity int, held cu.DevicePtr, heldCap int) error {
	p := append(u.params(), blockParams(b)...)
	p = append(p, f64(op.Threshold), opFlags(op), f64(float64(split)), ptr(t.cnt), ptr(t.off), i64(t.ldt), i64(tc0),
		ptr(stage), ptr(count), uint64(capacity), ptr(held), uint64(heldCap))
	return launch(kernels.CorrelationRows, f.correlationRows, ceilDiv(b.J1-b.J0, sgemmTile), ceilDiv(b.I1-b.I0, sgemmTile), 256, 0, s, p...)
}

// panelDegrees: grid ceil(h/8), block 256.
func (f *functions) panelDegreesLaunch(s cu.Stream, t rowTables, h int, deg cu.DevicePtr) error {
	return launch(kernels.PanelDegrees, f.panelDegrees, ceilDiv(h, 8), 1, 256, 0, s, ptr(t.cnt), i64(t.ldt), i64(h), ptr(deg))
}

// panelScan: grid 1, block 1024.
func (f *functions) panelScanLaunch(s cu.Stream, deg cu.DevicePtr, h int, start cu.DevicePtr) error {
	return launch(kernels.PanelScan, f.panelScan, 1, 1, 1024, 0, s, ptr(deg), i64(h), ptr(start))
}

// panelGather: grid ceil(h/8), block 256.
func (f *functions) panelGatherLaunch(s cu.Stream, t rowTables, h int, start, stage, out cu.DevicePtr) error {
	return launch(kernels.PanelGather, f.panelGather, ceilDiv(h, 8), 1, 256, 0, s, ptr(t.cnt), ptr(t.off), i64(t.ldt), i64(h),
		ptr(start), ptr(stage), ptr(out))
}

// keysHistogram: grid min(ceil(count/256), 8192), block 256.
func (f *functions) keysHistogramLaunch(s cu.Stream, keys cu.DevicePtr, count int, op fc.Op, hist cu.DevicePtr) error {
	return launch(kernels.KeysHistogram, f.keysHistogram, min(ceilDiv(count, 256), 8192), 1, 256, 0, s,
		ptr(keys), i64(count), f64(op.Lo), f64(op.Hi), i64(op.Bins), ptr(hist))
}

// panelTrim: grid ceil(h/8), block 256.
func (f *functions) panelTrimLaunch(s cu.Stream, keys, start, deg cu.DevicePtr, h, i0 int, hold, keep float32,
	kept, held, heldCount cu.DevicePtr, heldCap int) error {
	return launch(kernels.PanelTrim, f.panelTrim, ceilDiv(h, 8), 1, 256, 0, s, ptr(keys), ptr(start), ptr(deg), i64(h), i64(i0),
		f64(float64(hold)), f64(float64(keep)), ptr(kept), ptr(held), ptr(heldCount), uint64(heldCap))
}

// panelCompact: grid ceil(h/8), block 256.
func (f *functions) panelCompactLaunch(s cu.Stream, keys, start, deg cu.DevicePtr, h int, keep float32, to, out cu.DevicePtr) error {
	return launch(kernels.PanelCompact, f.panelCompact, ceilDiv(h, 8), 1, 256, 0, s, ptr(keys), ptr(start), ptr(deg), i64(h),
		f64(float64(keep)), ptr(to), ptr(out))
}

// componentsInit: grid ceil(n/256), block 256.
func (f *functions) componentsInitLaunch(s cu.Stream, parent cu.DevicePtr, n int) error {
	return launch(kernels.ComponentsInit, f.componentsInit, ceilDiv(n, 256), 1, 256, 0, s, ptr(parent), i64(n))
}

// componentsHook: grid ceil(h/8), block 256.
func (f *functions) componentsHookLaunch(s cu.Stream, keys, start, deg cu.DevicePtr, h, i0 int, parent cu.DevicePtr) error {
	return launch(kernels.ComponentsHook, f.componentsHook, ceilDiv(h, 8), 1, 256, 0, s, ptr(keys), ptr(start), ptr(deg), i64(h), i64(i0), ptr(parent))
}

// componentsFlatten: grid ceil(n/256), block 256.
func (f *functions) componentsFlattenLaunch(s cu.Stream, parent cu.DevicePtr, n int) error {
	return launch(kernels.ComponentsFlatten, f.componentsFlatten, ceilDiv(n, 256), 1, 256, 0, s, ptr(parent), i64(n))
}

// kendallPlanes are the prepared Kendall operands every Kendall block kernel takes first.
type kendallPlanes struct {
	p, n, nonzero, positives cu.DevicePtr
	ldw, pairs               int
	useMMA                   bool // tensor-core single-bit path (bmma_tile.cuh), else SIMT popcounts
}

func (k kendallPlanes) params() []uint64 {
	var mma uint64
	if k.useMMA {
		mma = 1
	}
	return []uint64{ptr(k.p), ptr(k.n), ptr(k.nonzero), ptr(k.positives), i64(k.ldw), i64(k.pairs), mma}
}
