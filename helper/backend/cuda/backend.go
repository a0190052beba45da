//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/kernels"
	"gorgonia.org/cu"
)

const (
	// defaultBlockRows keeps a block pair's product (16384²·L·2 flops, ~2 ms at L = 128 on an
	// H100) long against launch and copy latency, and its surviving edges at 1 % density
	// (2.7 M, 32 MB) small against device memory.
	defaultBlockRows = 16384
	// defaultEdgeCapacity is the edges each in-flight block can return without a retry.
	defaultEdgeCapacity = 1 << 22
	edgeBytes           = 12 // unsafe.Sizeof(fc.Edge{}), checked in launch.go
)

// The series are uploaded through two pinned buffers of stageBytes each; an upload of more
// than 64 of them grows the buffers to largeStageBytes (kept until Close). Larger copies and
// fewer stream waits per byte: W8's 9.2 GB took 0.44 s through 8 MiB buffers, 0.26 s through
// 32 MiB, 0.23 s through 64 MiB and 0.32 s through 128 MiB ones on an H200 host
// (BENCHMARKS.md). Variables, so that benchmarks can time other sizes.
var (
	stageBytes      = 8 << 20
	largeStageBytes = 64 << 20
)

// slot is the state of one of the two blocks in flight: its stream, its device outputs and
// the pinned host buffers they are copied into. While the host copies and hands one slot's
// edges to the sink, the GPU computes the other slot's block.
type slot struct {
	stream    cu.Stream
	count     cu.DevicePtr // uint64 surviving-edge counter
	hostCount unsafe.Pointer

	edges       cu.DevicePtr
	edgeCap     int
	hostEdges   unsafe.Pointer
	hostEdgeCap int

	hist     cu.DevicePtr
	histBins int
	hostHist unsafe.Pointer

	block fc.Block
}

type backend struct {
	opts   Options
	w      *worker
	device string

	mod       cu.Module
	fn        functions
	slots     [2]*slot
	stage     [2]unsafe.Pointer // pinned upload buffers, stageSize bytes each
	stageSize int

	// Prepared series.
	prepared  bool
	measure   fc.Measure
	n, l      int
	u         cu.DevicePtr // Pearson/Spearman: normalized rows, ld floats each (tf32(u) when uLo != 0)
	uLo       cu.DevicePtr // Options.TF32x3: tf32(u − tf32(u)), else none
	ld        int
	planeP    cu.DevicePtr // Kendall: sign bit-planes, ldw words per row
	planeN    cu.DevicePtr
	nonzero   cu.DevicePtr // Kendall: n_i, int64 per row
	positives cu.DevicePtr // Kendall: p_i (+1 signs), int64 per row
	ldw       int
	// kendallPairs is M = L(L−1)/2, the length of a sign vector.
	kendallPairs int
	blockRows    int
	forced       int // SetBlockRows

	// The group mean on the fp16 tensor cores (groupUnit ≥ 2): hi = fp16(2¹²·u) and
	// lo = fp16(2¹²·u − hi), ldh halves per subject row; u is freed once they are written.
	h, hLo    cu.DevicePtr
	ldh       int
	fo        int // groupFrag units: halves from each plane to its fragment-ordered copy (same allocation)
	groupUnit int // group_tile.cuh's product unit (chooseGroupUnit)

	// Steps of the last Prepare (free previous, upload, prepare kernels, total), for benchmarks.
	freeTime, uploadTime, kernelTime, prepareTime time.Duration

	// inSink is set while a sink runs: the sink runs on the device thread, so a call back
	// into the backend from it would wait for itself.
	inSink atomic.Bool

	// Row-ordered emission (rows.go): the two panel slots, the two pinned buffers Rows
	// streams through, and the passes whose edges are still on the device.
	rowSlots  [2]*rowSlot
	rowBuf    [2]unsafe.Pointer
	rowBufCap int
	live      map[*rowEdges]struct{}
	keyPool   []*keySeg // device segments free for the next row pass

	// Dense values of one block, for OpTopK only.
	vals    cu.DevicePtr
	valsLen int

	// note reports a change of plan (fc.Noter); halved is how many blocks the current Run
	// processed in halves because the device had no memory for their edges.
	note   func(string)
	halved int

	// groupPlaneLimit > 0 makes allocGroupPlanes treat more bytes of planes as out of
	// device memory (tests of its fallbacks); groupUnitForce > 0 replaces the fp16 product
	// unit chooseGroupUnit picks (tests and benchmarks of every unit).
	groupPlaneLimit int
	groupUnitForce  int
	// sharedOptin is the device's dynamic shared memory limit per kernel (sharedOptin()).
	sharedOptin int

	// The graph analytics (graphaccel.go), made on first use.
	ga *graphAccel
	// Incremental sliding windows (sliding.go), made by PrepareSliding.
	sl *slidingState
}

// SetNote implements fc.Noter: out of device memory mid-run, the backend carries on with
// smaller pieces and says so through note.
func (b *backend) SetNote(note func(string)) { b.note = note }

// notef reports a change of plan, when Build asked for such lines.
func (b *backend) notef(format string, args ...any) {
	if b.note != nil {
		b.note(fmt.Sprintf(format, args...))
	}
}

// New opens device opts.Device, loads the embedded kernels and returns the backend. An error
// wrapping ErrNoDevice means no usable GPU: fall back to the CPU backend.
func New(opts Options) (fc.Backend, error) {
	desc, err := describeDevice(opts.Device)
	if err != nil {
		return nil, err
	}
	w, err := startWorker(opts.Device)
	if err != nil {
		return nil, err
	}
	b := &backend{opts: opts, w: w, device: desc, live: map[*rowEdges]struct{}{}}
	if err := w.do(b.init); err != nil {
		_ = w.do(b.release)
		w.stop()
		return nil, err
	}
	return b, nil
}

func (b *backend) init() error {
	mod, err := cu.LoadData(string(kernels.Fatbin))
	if err != nil {
		return fmt.Errorf("cuda backend: loading the embedded kernels (%s) on %s: %w", kernels.Compiler, b.device, err)
	}
	b.mod = mod
	if b.fn, err = loadFunctions(mod); err != nil {
		return err
	}
	// The group kernels' wide units need more than the default 48 KiB of shared memory.
	if b.sharedOptin, err = sharedOptin(); err != nil {
		return err
	}
	if wide := groupWideShared[groupUnitWide]; b.sharedOptin >= wide {
		for _, f := range []struct {
			name string
			fn   cu.Function
		}{{kernels.GroupEdges, b.fn.groupEdges}, {kernels.GroupHistogram, b.fn.groupHistogram}, {kernels.GroupValues, b.fn.groupValues}} {
			if err := allowShared(f.name, f.fn, wide); err != nil {
				return err
			}
		}
	} else {
		b.sharedOptin = 0 // no wide units
	}
	for i := range b.slots {
		s := &slot{}
		b.slots[i] = s
		if s.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return fmt.Errorf("cuda backend: creating a stream: %w", err)
		}
		if s.count, err = cu.MemAlloc(8); err != nil {
			return fmt.Errorf("cuda backend: allocating the edge counter: %w", err)
		}
		if s.hostCount, err = pinnedAlloc(8); err != nil {
			return err
		}
		if b.stage[i], err = pinnedAlloc(stageBytes); err != nil {
			return err
		}
		b.stageSize = stageBytes
	}
	return nil
}

func (b *backend) Name() string { return "cuda" }

func (b *backend) Device() string {
	if S := b.subjects(); S > 1 {
		return fmt.Sprintf("%s, group mean Fisher z of %d subjects", b.device, S)
	}
	return b.device
}

// subjects is the number of subjects whose mean Fisher z the backend computes (1: one scan).
func (b *backend) subjects() int { return max(b.opts.Subjects, 1) }

// do runs f on the context's thread, or fails once the backend is closed.
func (b *backend) do(f func() error) error {
	if b.w == nil {
		return errWorkerClosed
	}
	if b.inSink.Load() {
		return errors.New("cuda backend: called from inside a Run sink, which runs on the device thread; call it after Run returns")
	}
	return b.w.do(f)
}

// doUrgent is do through the worker's urgent queue (worker.doUrgent).
func (b *backend) doUrgent(f func() error) error {
	if b.w == nil {
		return errWorkerClosed
	}
	if b.inSink.Load() {
		return errors.New("cuda backend: called from inside a Run sink, which runs on the device thread; call it after Run returns")
	}
	return b.w.doUrgent(f)
}

// doFirst is do through the worker's first queue (worker.doFirst: the rewiring).
func (b *backend) doFirst(f func() error) error {
	if b.w == nil {
		return errWorkerClosed
	}
	if b.inSink.Load() {
		return errors.New("cuda backend: called from inside a Run sink, which runs on the device thread; call it after Run returns")
	}
	return b.w.doFirst(f)
}

// holdFirst keeps plain closures off the device thread until release is called (queue).
func (b *backend) holdFirst() (release func()) {
	if b.w == nil {
		return func() {}
	}
	return b.w.q.holdFirst()
}

// guard marks the time sink runs (see inSink).
func (b *backend) guard(sink func(*fc.BlockResult) error) func(*fc.BlockResult) error {
	return func(r *fc.BlockResult) error {
		b.inSink.Store(true)
		defer b.inSink.Store(false)
		return sink(r)
	}
}

// SetBlockRows forces the block height (0 restores the choice from device memory); tests use
// it to exercise block boundaries (fc.BlockRowsSetter).
func (b *backend) SetBlockRows(h int) { b.forced = h }

// BlockRows is the block height sized in Prepare from free device memory (Fast-GPU-PCC's idea:
// blocks from the memory at hand, not constants).
func (b *backend) BlockRows() int {
	if b.forced > 0 {
		return b.forced
	}
	if b.blockRows > 0 {
		return b.blockRows
	}
	if b.opts.BlockRows > 0 {
		return roundUp(b.opts.BlockRows, sgemmTile)
	}
	return defaultBlockRows
}

func (b *backend) Prepare(ctx context.Context, x []float32, n, l int, m fc.Measure) error {
	if n < 1 || l < 3 || len(x) != n*l {
		return fc.CheckSeries(x, n, l) // its error names the shape problem
	}
	if S := b.subjects(); S > 1 {
		// The group mean: every subject's part of a row is a row of its own (N·S rows of
		// L/S time points; group_tile.cuh's layout).
		switch {
		case l%S != 0:
			return fmt.Errorf("cuda backend: group: %d time points do not split into %d subjects", l, S)
		case m == fc.Kendall:
			return fmt.Errorf("cuda backend: group: the mean Fisher z is defined for Pearson and Spearman, not Kendall's τ")
		case l/S < 3:
			return fmt.Errorf("cuda backend: group: %d time points per subject; need at least 3", l/S)
		}
		l /= S
	}
	switch {
	case n > math.MaxUint32:
		return fmt.Errorf("cuda backend: prepare: %d series exceed the uint32 node index", n)
	case m > fc.Kendall:
		return fmt.Errorf("cuda backend: prepare: unknown measure %d", m)
	case (m == fc.Spearman || m == fc.Kendall) && 4*l+64 > maxSharedRow:
		return fmt.Errorf("cuda backend: prepare: %d time points exceed the %d a row-in-shared-memory kernel holds", l, (maxSharedRow-64)/4)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.do(func() error {
		t0 := time.Now()
		b.freePrepared()
		b.freeTime = time.Since(t0)
		defer func() { b.prepareTime = time.Since(t0) }()
		if err := b.prepare(x, n*b.subjects(), l, m); err != nil {
			b.freePrepared()
			return err
		}
		return nil
	})
}

func (b *backend) prepare(x []float32, n, l int, m fc.Measure) error {
	t0 := time.Now()
	dx, err := b.upload(x)
	if err != nil {
		return err
	}
	b.uploadTime = time.Since(t0)
	t1 := time.Now()
	defer func() {
		if dx != 0 {
			cu.MemFree(dx)
		}
	}()
	if err := b.checkSeries(x, dx, n, l); err != nil {
		return err
	}
	s := b.slots[0].stream
	switch m {
	case fc.Pearson, fc.Spearman:
		b.ld = roundUp(l, sgemmStep)
		// 128 zero rows past the last tile start, so no tile reads out of bounds (group mean:
		// 256 zero node rows of S subject rows each, for the wide units' 256-row tiles).
		S := b.subjects()
		pad := sgemmTile
		if S > 1 {
			pad = groupWideRows
		}
		rows := (roundUp(n/S, sgemmTile) + pad) * S
		if b.u, err = alloc("normalized series", rows*b.ld*4); err != nil {
			return err
		}
		if err := cu.MemsetD32Async(b.u, 0, int64(rows*b.ld), s); err != nil {
			return fmt.Errorf("cuda backend: clearing the normalized series: %w", err)
		}
		src := dx
		if m == fc.Spearman {
			ranks, err := alloc("ranks", n*l*4)
			if err != nil {
				return err
			}
			defer cu.MemFree(ranks)
			if err := b.fn.averageRanksLaunch(s, dx, n, l, ranks); err != nil {
				return err
			}
			src = ranks
		}
		if err := b.fn.normalizeRowsLaunch(s, src, n, l, b.u, b.ld); err != nil {
			return err
		}
		b.groupUnit, b.fo = b.chooseGroupUnit(), 0
		if b.opts.TF32x3 {
			// The 3×TF32 split, once for every block pair: b.u becomes the hi plane.
			if b.uLo, err = alloc("3×TF32 low plane", rows*b.ld*4); err != nil {
				return err
			}
			if err := b.fn.splitTF32Launch(s, b.u, b.uLo, rows*b.ld); err != nil {
				return err
			}
		}
		if b.groupUnit >= groupUnitF16x3 {
			// The group mean's fp16 split (group_f16x3_tile.cuh): two planes of halves in
			// place of the floats, which are freed, as the upload is first (peak device
			// memory: the upload and u, or u and the planes).
			if err := s.Synchronize(); err != nil {
				return fmt.Errorf("cuda backend: preparing %d series × %d time points: %w", n, l, err)
			}
			cu.MemFree(dx)
			dx = 0
			b.ldh = roundUp(l, 16)
			plane := rows * b.ldh
			if b.allocGroupPlanes(plane) {
				if err := b.fn.splitF16x3Launch(s, b.u, b.ld, rows, b.ldh, S, b.h, b.hLo, b.fo); err != nil {
					return err
				}
				if err := s.Synchronize(); err != nil {
					return fmt.Errorf("cuda backend: splitting %d series × %d time points: %w", n, l, err)
				}
				cu.MemFree(b.u)
				b.u = 0
			}
		}
	case fc.Kendall:
		b.kendallPairs = l * (l - 1) / 2
		words := ceilDiv(b.kendallPairs, 32)
		b.ldw = roundUp(words, popcStepWords)
		rows := roundUp(n, popcTile) + popcTile
		if b.planeP, err = alloc("Kendall positive sign plane", rows*b.ldw*4); err != nil {
			return err
		}
		if b.planeN, err = alloc("Kendall negative sign plane", rows*b.ldw*4); err != nil {
			return err
		}
		if b.nonzero, err = alloc("Kendall non-tied pair counts", rows*8); err != nil {
			return err
		}
		if b.positives, err = alloc("Kendall positive sign counts", rows*8); err != nil {
			return err
		}
		for _, z := range []struct {
			p     cu.DevicePtr
			words int
		}{{b.planeP, rows * b.ldw}, {b.planeN, rows * b.ldw}, {b.nonzero, 2 * rows}, {b.positives, 2 * rows}} {
			if err := cu.MemsetD32Async(z.p, 0, int64(z.words), s); err != nil {
				return fmt.Errorf("cuda backend: clearing Kendall planes: %w", err)
			}
		}
		if err := b.fn.kendallSignsLaunch(s, dx, n, l, b.planeP, b.planeN, b.ldw, b.nonzero, b.positives); err != nil {
			return err
		}
	}
	if err := s.Synchronize(); err != nil {
		return fmt.Errorf("cuda backend: preparing %d series × %d time points: %w", n, l, err)
	}
	b.kernelTime = time.Since(t1)
	b.prepared, b.measure, b.n, b.l = true, m, n/b.subjects(), l
	b.blockRows = b.chooseBlockRows()
	return nil
}

// allocGroupPlanes allocates the 3×FP16 planes of plane halves each, with their
// fragment-ordered copies after them for the units that read them (groupFrag; b.fo). Short
// of device memory it steps down to the plain planes (groupPlain), then to the fp32 SIMT
// product on u (unit 0, false), and says so through the note: the same network, more time.
func (b *backend) allocGroupPlanes(plane int) bool {
	for _, copies := range []int{2, 1} {
		if copies == 2 && !groupFrag(b.groupUnit) {
			continue
		}
		if b.groupPlaneLimit > 0 && 2*copies*plane*2 > b.groupPlaneLimit {
			continue
		}
		hi, err := alloc("3×FP16 high plane", copies*plane*2)
		if err != nil {
			continue
		}
		lo, err := alloc("3×FP16 low plane", copies*plane*2)
		if err != nil {
			cu.MemFree(hi)
			continue
		}
		b.h, b.hLo = hi, lo
		if copies == 2 {
			b.fo = plane
		} else if groupFrag(b.groupUnit) {
			b.notef("GPU memory: the group mean's row operands come from the plain fp16 planes (no room for their fragment-ordered copies; slower)")
			b.groupUnit = groupPlain(b.groupUnit)
		}
		return true
	}
	b.notef("GPU memory: no room for the group mean's fp16 planes; fp32 SIMT products instead (slower)")
	b.groupUnit = 0
	return false
}

// ChecksSeries implements fc.SeriesChecker: Prepare checks every row (checkSeries), so
// fc.Build does not scan the series on the host first.
func (b *backend) ChecksSeries() bool { return true }

// checkSeries rejects non-finite and constant series (fc.CheckSeries's rule) with a kernel
// over the uploaded copy; only when it finds one does the host scan x, for fc's exact error.
func (b *backend) checkSeries(x []float32, dx cu.DevicePtr, n, l int) error {
	sl := b.slots[0]
	if err := cu.MemsetD32Async(sl.count, 0, 2, sl.stream); err != nil {
		return fmt.Errorf("cuda backend: clearing the series check counter: %w", err)
	}
	if err := b.fn.checkSeriesLaunch(sl.stream, dx, n, l, sl.count); err != nil {
		return err
	}
	if err := cu.MemcpyDtoHAsync(sl.hostCount, sl.count, 8, sl.stream); err != nil {
		return fmt.Errorf("cuda backend: copying the series check: %w", err)
	}
	if err := sl.stream.Synchronize(); err != nil {
		return fmt.Errorf("cuda backend: checking %d series: %w", n, err)
	}
	bad := *(*uint64)(sl.hostCount)
	if bad == 0 {
		return nil
	}
	if S := b.subjects(); S > 1 {
		// Row i·S + s is node i of subject s: name them as helper/group does.
		for r := 0; r < n; r++ {
			if err := fc.CheckSeries(x[r*l:(r+1)*l], 1, l); err != nil {
				return fmt.Errorf("cuda backend: group: node %d of subject %d: %w", r/S, r%S+1, err)
			}
		}
	}
	if err := fc.CheckSeries(x, n, l); err != nil {
		return err
	}
	return fmt.Errorf("cuda backend: the device found %d constant or non-finite series that fc.CheckSeries accepts", bad)
}

// upload copies x to a new device buffer through the two pinned staging buffers, so the DMA
// of one chunk overlaps the host copy of the next (a pageable copy runs at a fraction of the
// link's speed).
func (b *backend) upload(x []float32) (cu.DevicePtr, error) {
	total := len(x) * 4
	if total > 64*b.stageSize && largeStageBytes > b.stageSize {
		b.growStages(largeStageBytes)
	}
	dx, err := alloc("series upload", total)
	if err != nil {
		return 0, err
	}
	chunk := b.stageSize / 4
	for k, off := 0, 0; off < len(x); k, off = k+1, off+chunk {
		end := min(off+chunk, len(x))
		s := b.slots[k%2].stream
		if err := s.Synchronize(); err != nil { // the staging buffer's previous copy is done
			cu.MemFree(dx)
			return 0, fmt.Errorf("cuda backend: uploading series: %w", err)
		}
		parallelCopy(unsafe.Slice((*float32)(b.stage[k%2]), end-off), x[off:end])
		if err := cu.MemcpyHtoDAsync(dx+cu.DevicePtr(off*4), b.stage[k%2], int64((end-off)*4), s); err != nil {
			cu.MemFree(dx)
			return 0, fmt.Errorf("cuda backend: uploading series: %w", err)
		}
	}
	for _, s := range b.slots {
		if err := s.stream.Synchronize(); err != nil {
			cu.MemFree(dx)
			return 0, fmt.Errorf("cuda backend: uploading series: %w", err)
		}
	}
	return dx, nil
}

// growStages replaces the two upload buffers with ones of size bytes; where the host has no
// pinned memory to spare it keeps the ones it has (slower, not wrong).
func (b *backend) growStages(size int) {
	var grown [2]unsafe.Pointer
	for i := range grown {
		p, err := pinnedAlloc(size)
		if err != nil {
			pinnedFree(grown[0])
			return
		}
		grown[i] = p
	}
	for i := range b.stage {
		pinnedFree(b.stage[i])
	}
	b.stage, b.stageSize = grown, size
}

// series bundles the prepared Pearson/Spearman operands for the block kernels.
func (b *backend) series() corrSeries {
	if b.h != 0 {
		return corrSeries{hi: b.h, lo: b.hLo, ld: b.ldh, unit: b.groupUnit, fo: b.fo}
	}
	return corrSeries{hi: b.u, lo: b.uLo, ld: b.ld, tc: b.uLo != 0}
}

// Group product units (group_tile.cuh): fp32 SIMT and 3×TF32 are 0 and 1.
const (
	groupUnitF16x3      = 2 // the 3×FP16 stream from the plain planes
	groupUnitF16x3Atanh = 3 // the same, folding with atanhf
	groupUnitF16x3Frag  = 4 // the row operand from the fragment-ordered copies
	// 256 × 128 tiles with the running sums in shared memory (group_wide_tile.cuh).
	groupUnitWide      = 5 // the row operand from the fragment-ordered copies
	groupUnitWidePlain = 6 // the same from the plain planes
	groupUnitWideDefer = 7 // 5 folding each subject during the next one's first step (the default)
)

// groupWideRows is the wide units' tile height (GW_TM); their tiles are 128 columns wide.
const groupWideRows = 256

// groupWideShared is the dynamic shared memory of the wide units: z (128 KiB) and two stages
// of two 16-half steps (sizeof(GroupWideShared<GW_STAGES, GW_SUB>)).
var groupWideShared = map[int]int{groupUnitWide: 229376, groupUnitWidePlain: 229376, groupUnitWideDefer: 229376}

// groupNarrowShared is sizeof(GroupShared) (group_tile.cuh), the other units' shared memory.
const groupNarrowShared = 48 << 10

// groupFrag says whether unit reads its row operand from the fragment-ordered copies, and
// groupPlain is the unit that gives the same values from the plain planes.
func groupFrag(unit int) bool { return groupPlain(unit) != unit }

func groupPlain(unit int) int {
	switch unit {
	case groupUnitF16x3Frag:
		return groupUnitF16x3
	case groupUnitWide, groupUnitWideDefer:
		return groupUnitWidePlain
	}
	return unit
}

// groupShape is the tile height and the dynamic shared memory of a group kernel launch.
func groupShape(unit int) (rows, shared int) {
	if s, ok := groupWideShared[unit]; ok {
		return groupWideRows, s
	}
	return sgemmTile, groupNarrowShared
}

// chooseGroupUnit picks the group mean's product (group_tile.cuh's unit) from
// Options.TF32x3 (3×TF32 whatever GroupProduct says) and Options.GroupProduct; 0 for one scan.
func (b *backend) chooseGroupUnit() int {
	switch {
	case b.subjects() < 2:
		return 0
	case b.opts.TF32x3:
		return 1
	case b.opts.GroupProduct == GroupSIMT:
		return 0
	case b.opts.GroupProduct == GroupTensorCoresAtanh:
		return groupUnitF16x3Atanh
	case b.opts.GroupProduct == GroupTensorCoresPlain:
		return b.wideOr(groupUnitWidePlain, groupUnitF16x3)
	case b.opts.GroupProduct == GroupTensorCores128:
		return groupUnitF16x3Frag
	}
	return b.wideOr(groupUnitWideDefer, groupUnitF16x3Frag)
}

// wideOr is unit wide when the device gives a kernel its shared memory (224 KiB; sm_90 allows
// 227, sm_80 163), else narrow; a forced unit (groupUnitForce, tests and benchmarks) wins over both.
func (b *backend) wideOr(wide, narrow int) int {
	if b.groupUnitForce > 0 {
		return b.groupUnitForce
	}
	if b.sharedOptin >= groupWideShared[wide] {
		return wide
	}
	return narrow
}

// kendall bundles the prepared Kendall operands for the block kernels.
func (b *backend) kendall() kendallPlanes {
	return kendallPlanes{p: b.planeP, n: b.planeN, nonzero: b.nonzero, positives: b.positives,
		ldw: b.ldw, pairs: b.kendallPairs, useMMA: !b.opts.KendallSIMT}
}

// parallelCopy copies src into dst (pinned staging memory) with up to one goroutine per core
// (16 at most): the host's memcpy, not the DMA, limits a staged upload (W8's 9.2 GB took
// 0.47 s with four goroutines per chunk on a 16-core H200 host, 0.38–0.42 s with sixteen).
func parallelCopy[T any](dst, src []T) {
	parts := min(runtime.GOMAXPROCS(0), 16)
	if len(src) < 1<<18 || parts < 2 {
		copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	step := ceilDiv(len(src), parts)
	for a := 0; a < len(src); a += step {
		e := min(a+step, len(src))
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[a:e], src[a:e])
		}()
	}
	wg.Wait()
}

// chooseBlockRows keeps room on the device for two blocks' edge buffers even at an assumed
// worst case of 1/8 of a block's pairs surviving (denser outputs are retried in halves).
func (b *backend) chooseBlockRows() int {
	if b.opts.BlockRows > 0 {
		return roundUp(b.opts.BlockRows, sgemmTile)
	}
	rows := defaultBlockRows
	if free, _, err := cu.MemInfo(); err == nil {
		for rows > sgemmTile && 2*float64(rows)*float64(rows)/2/8*edgeBytes > float64(free)/2 {
			rows /= 2
		}
	}
	return min(rows, roundUp(b.n, sgemmTile))
}

func alloc(what string, bytes int) (cu.DevicePtr, error) {
	p, err := cu.MemAlloc(int64(max(bytes, 1)))
	if err != nil {
		return 0, fmt.Errorf("cuda backend: allocating %s (%d bytes): %w", what, bytes, err)
	}
	return p, nil
}

func (b *backend) freePrepared() {
	for _, p := range []*cu.DevicePtr{&b.u, &b.uLo, &b.h, &b.hLo, &b.planeP, &b.planeN, &b.nonzero, &b.positives, &b.vals} {
		if *p != 0 {
			cu.MemFree(*p)
			*p = 0
		}
	}
	b.prepared = false
	b.blockRows = 0
	b.valsLen = 0
}

func (b *backend) Run(ctx context.Context, blocks []fc.Block, op fc.Op, sink func(*fc.BlockResult) error) error {
	if !b.prepared {
		return errors.New("cuda backend: Run before Prepare")
	}
	if err := op.Validate(); err != nil {
		return fmt.Errorf("cuda backend: %w", err)
	}
	for _, blk := range blocks {
		if err := blk.Check(b.n); err != nil {
			return fmt.Errorf("cuda backend: %w", err)
		}
	}
	sink = b.guard(sink)
	if op.Kind == fc.OpTopK {
		return b.do(func() error { return b.runTopK(ctx, blocks, op, sink) })
	}
	return b.do(func() error { return b.run(ctx, blocks, op, sink) })
}

// run pipelines the blocks two deep: block k is queued on one stream before the host waits
// for block k−1 on the other, copies its edges and calls the sink.
func (b *backend) run(ctx context.Context, blocks []fc.Block, op fc.Op, sink func(*fc.BlockResult) error) (err error) {
	defer func() {
		if err != nil {
			b.drain()
		}
	}()
	b.halved = 0
	for _, s := range b.slots {
		if op.Kind == fc.OpHistogram {
			err = s.ensureHist(op.Bins)
		} else {
			err = s.ensureEdges(b.initialEdgeCapacity(), false)
		}
		if err != nil {
			return err
		}
	}
	for k, blk := range blocks {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := b.slots[k%2]
		s.block = blk
		if err := b.enqueue(s, op); err != nil {
			return err
		}
		if k > 0 {
			if err := b.complete(b.slots[(k-1)%2], op, sink); err != nil {
				return err
			}
		}
	}
	if len(blocks) > 0 {
		return b.complete(b.slots[(len(blocks)-1)%2], op, sink)
	}
	return nil
}

func (b *backend) maxEdgeCapacity() int {
	if b.opts.MaxEdgeCapacity > 0 {
		return b.opts.MaxEdgeCapacity
	}
	return 1 << 27
}

func (b *backend) initialEdgeCapacity() int {
	if b.opts.EdgeCapacity > 0 {
		return b.opts.EdgeCapacity
	}
	return min(defaultEdgeCapacity, b.maxEdgeCapacity())
}

// drain waits for both streams after an error, so no copy lands in a buffer being freed.
func (b *backend) drain() {
	for _, s := range b.slots {
		if s != nil {
			_ = s.stream.Synchronize()
		}
	}
}

// enqueue queues slot s's block: clear the outputs, launch the kernel, copy back the count
// (edges) or the whole histogram.
func (b *backend) enqueue(s *slot, op fc.Op) error {
	blk := s.block
	if op.Kind == fc.OpHistogram {
		if err := cu.MemsetD32Async(s.hist, 0, int64(2*op.Bins), s.stream); err != nil {
			return fmt.Errorf("cuda backend: clearing the histogram: %w", err)
		}
		var err error
		if S := b.subjects(); S > 1 {
			err = b.fn.groupHistogramLaunch(s.stream, b.series(), S, blk, op, s.hist)
		} else if b.measure == fc.Kendall {
			err = b.fn.kendallHistogramLaunch(s.stream, b.kendall(), blk, op, s.hist)
		} else {
			err = b.fn.correlationHistogramLaunch(s.stream, b.series(), blk, op, s.hist)
		}
		if err != nil {
			return err
		}
		if err := cu.MemcpyDtoHAsync(s.hostHist, s.hist, int64(8*op.Bins), s.stream); err != nil {
			return fmt.Errorf("cuda backend: copying the histogram: %w", err)
		}
		return nil
	}
	if err := cu.MemsetD32Async(s.count, 0, 2, s.stream); err != nil {
		return fmt.Errorf("cuda backend: clearing the edge counter: %w", err)
	}
	var err error
	if S := b.subjects(); S > 1 {
		err = b.fn.groupEdgesLaunch(s.stream, b.series(), S, blk, op, s.edges, s.count, s.edgeCap)
	} else if b.measure == fc.Kendall {
		err = b.fn.kendallEdgesLaunch(s.stream, b.kendall(), blk, op, s.edges, s.count, s.edgeCap)
	} else {
		err = b.fn.correlationEdgesLaunch(s.stream, b.series(), blk, op, s.edges, s.count, s.edgeCap)
	}
	if err != nil {
		return err
	}
	if err := cu.MemcpyDtoHAsync(s.hostCount, s.count, 8, s.stream); err != nil {
		return fmt.Errorf("cuda backend: copying the edge count: %w", err)
	}
	return nil
}

func blockString(blk fc.Block) string {
	return fmt.Sprintf("block rows [%d,%d) × columns [%d,%d)", blk.I0, blk.I1, blk.J0, blk.J1)
}

// complete waits for slot s's block and hands its result to the sink. A block whose edges
// overflowed the buffer is recomputed with a buffer large enough; if that buffer would exceed
// MaxEdgeCapacity or cannot be had, the block is processed in two halves of rows.
func (b *backend) complete(s *slot, op fc.Op, sink func(*fc.BlockResult) error) error {
	blk := s.block
	if err := s.stream.Synchronize(); err != nil {
		return fmt.Errorf("cuda backend: %s: %w", blockString(blk), err)
	}
	if op.Kind == fc.OpHistogram {
		return sink(&fc.BlockResult{Block: blk, Hist: unsafe.Slice((*uint64)(s.hostHist), op.Bins)})
	}
	count := *(*uint64)(s.hostCount)
	if count > uint64(s.edgeCap) {
		need := count + count/8 + 4096
		if need > uint64(b.maxEdgeCapacity()) && blk.I1-blk.I0 >= 2 {
			return b.split(s, op, sink)
		}
		err := s.ensureEdges(int(need), true)
		if errors.Is(err, cu.OutOfMemory) {
			// Without the slack, exactly the block's edges: the 4,096-edge pad alone would
			// keep a block that fits from ever fitting, however small its halves get.
			err = s.ensureEdges(int(count), true)
		}
		if err != nil {
			if !errors.Is(err, cu.OutOfMemory) || blk.I1-blk.I0 < 2 {
				return fmt.Errorf("cuda backend: %s has %d surviving edges: %w", blockString(blk), count, err)
			}
			if b.halved++; b.halved == 1 { // one line per pass, not one per block
				b.notef("GPU out of memory for the %d edges of %s: blocks that do not fit are processed in halves of rows (the same edges, more passes)", count, blockString(blk))
			}
			return b.split(s, op, sink)
		}
		if err := b.enqueue(s, op); err != nil {
			return err
		}
		if err := s.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda backend: %s (retry with room for %d edges): %w", blockString(blk), need, err)
		}
		if again := *(*uint64)(s.hostCount); again != count {
			return fmt.Errorf("cuda backend: %s gave %d edges, then %d on the retry", blockString(blk), count, again)
		}
	}
	if count > 0 {
		if err := cu.MemcpyDtoHAsync(s.hostEdges, s.edges, int64(count*edgeBytes), s.stream); err != nil {
			return fmt.Errorf("cuda backend: copying %d edges of %s: %w", count, blockString(blk), err)
		}
		if err := s.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda backend: copying %d edges of %s: %w", count, blockString(blk), err)
		}
	}
	var edges []fc.Edge
	if count > 0 {
		edges = unsafe.Slice((*fc.Edge)(s.hostEdges), count)
	}
	return sink(&fc.BlockResult{Block: blk, Edges: edges})
}

// split processes slot s's block as two blocks of half the rows (out of device memory for
// its edges: halve the block and retry), gathers both halves' edges in host memory and hands
// them to the sink as the one block the driver planned. The halves stay upper-triangle
// blocks: where the block reaches the diagonal, the lower half's columns start at its first row.
func (b *backend) split(s *slot, op fc.Op, sink func(*fc.BlockResult) error) error {
	blk := s.block
	mid := (blk.I0 + blk.I1) / 2
	lower := fc.Block{I0: mid, I1: blk.I1, J0: blk.J0, J1: blk.J1}
	if blk.J0 < blk.I1 {
		lower.J0 = max(blk.J0, mid)
	}
	var edges []fc.Edge
	gather := func(r *fc.BlockResult) error {
		edges = append(edges, r.Edges...)
		return nil
	}
	for _, half := range []fc.Block{{I0: blk.I0, I1: mid, J0: blk.J0, J1: blk.J1}, lower} {
		if half.J0 >= half.J1 {
			continue
		}
		s.block = half
		if err := b.enqueue(s, op); err != nil {
			return err
		}
		if err := b.complete(s, op, gather); err != nil {
			return err
		}
	}
	s.block = blk
	return sink(&fc.BlockResult{Block: blk, Edges: edges})
}

// edgeAlloc allocates the device's edge buffers, the allocation that grows with the data (a
// dense block's surviving pairs). It is the seam through which TestInjectedOutOfMemory makes
// the device run out of memory: complete must then process the block in halves.
var edgeAlloc = cu.MemAlloc

// ensureEdges makes room for capacity edges on the device and in pinned host memory. With
// exact, the buffers are resized to capacity; otherwise they are only grown.
func (s *slot) ensureEdges(capacity int, exact bool) error {
	if s.edgeCap >= capacity && !exact || s.edgeCap == capacity {
		return nil
	}
	old := s.edgeCap
	if s.edges != 0 {
		cu.MemFree(s.edges)
		s.edges, s.edgeCap = 0, 0
	}
	p, err := edgeAlloc(int64(capacity * edgeBytes))
	if err != nil {
		if old > 0 { // keep the slot usable at its old size
			if q, err2 := edgeAlloc(int64(old * edgeBytes)); err2 == nil {
				s.edges, s.edgeCap = q, old
			}
		}
		return fmt.Errorf("allocating room for %d edges (%d bytes) on the device: %w", capacity, capacity*edgeBytes, err)
	}
	s.edges, s.edgeCap = p, capacity
	if s.hostEdgeCap < capacity {
		pinnedFree(s.hostEdges)
		s.hostEdges, s.hostEdgeCap = nil, 0
		h, err := pinnedAlloc(capacity * edgeBytes)
		if err != nil {
			return err
		}
		s.hostEdges, s.hostEdgeCap = h, capacity
	}
	return nil
}

func (s *slot) ensureHist(bins int) error {
	if s.histBins == bins {
		return nil
	}
	s.freeHist()
	p, err := alloc("histogram", 8*bins)
	if err != nil {
		return err
	}
	h, err := pinnedAlloc(8 * bins)
	if err != nil {
		cu.MemFree(p)
		return err
	}
	s.hist, s.hostHist, s.histBins = p, h, bins
	return nil
}

func (s *slot) freeHist() {
	if s.hist != 0 {
		cu.MemFree(s.hist)
	}
	pinnedFree(s.hostHist)
	s.hist, s.hostHist, s.histBins = 0, nil, 0
}

// release frees everything the backend holds on the device and in pinned memory.
func (b *backend) release() error {
	b.drain()
	if b.ga != nil {
		b.ga.free()
	}
	if b.sl != nil {
		b.sl.free()
	}
	for re := range b.live {
		re.free()
		delete(b.live, re)
	}
	b.freeRowSlots()
	b.freePrepared()
	for i, s := range b.slots {
		if s == nil {
			continue
		}
		_ = s.stream.Synchronize()
		if s.edges != 0 {
			cu.MemFree(s.edges)
		}
		pinnedFree(s.hostEdges)
		s.freeHist()
		if s.count != 0 {
			cu.MemFree(s.count)
		}
		pinnedFree(s.hostCount)
		_ = s.stream.Destroy()
		b.slots[i] = nil
	}
	for i := range b.stage {
		pinnedFree(b.stage[i])
		b.stage[i] = nil
	}
	if b.fn != (functions{}) || b.mod != (cu.Module{}) {
		_ = b.mod.Unload()
	}
	return nil
}

func (b *backend) Close() error {
	if b.w == nil {
		return nil
	}
	err := b.w.do(b.release)
	b.w.stop()
	b.w = nil
	return err
}

// runTopK processes OpTopK block by block: the block's values are computed densely on the
// device (the one mode that needs a row and a column side by side), topk_select picks each
// row's and each column's K best, and the host keeps each pair once.
func (b *backend) runTopK(ctx context.Context, blocks []fc.Block, op fc.Op, sink func(*fc.BlockResult) error) (err error) {
	s := b.slots[0]
	defer func() {
		if err != nil {
			b.drain()
		}
	}()
	for _, blk := range blocks {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, w := blk.I1-blk.I0, blk.J1-blk.J0
		if h*w > b.valsLen {
			if b.vals != 0 {
				cu.MemFree(b.vals)
				b.vals, b.valsLen = 0, 0
			}
			if b.vals, err = alloc("block values for top-K", 4*h*w); err != nil {
				return err
			}
			b.valsLen = h * w
		}
		capacity := op.K * (h + w)
		if err := s.ensureEdges(capacity, false); err != nil {
			return fmt.Errorf("cuda backend: top-K of %s: %w", blockString(blk), err)
		}
		if err := cu.MemsetD32Async(s.count, 0, 2, s.stream); err != nil {
			return fmt.Errorf("cuda backend: clearing the edge counter: %w", err)
		}
		if S := b.subjects(); S > 1 {
			err = b.fn.groupValuesLaunch(s.stream, b.series(), S, blk, op, b.vals, w)
		} else if b.measure == fc.Kendall {
			err = b.fn.kendallValuesLaunch(s.stream, b.kendall(), blk, op, b.vals, w)
		} else {
			err = b.fn.correlationValuesLaunch(s.stream, b.series(), blk, op, b.vals, w)
		}
		if err != nil {
			return err
		}
		if err := b.fn.topkSelectLaunch(s.stream, b.vals, h, w, 1, w, op.K, blk.I0, blk.J0, false, s.edges, s.count, s.edgeCap); err != nil {
			return err
		}
		if err := b.fn.topkSelectLaunch(s.stream, b.vals, w, 1, w, h, op.K, blk.I0, blk.J0, true, s.edges, s.count, s.edgeCap); err != nil {
			return err
		}
		if err := cu.MemcpyDtoHAsync(s.hostCount, s.count, 8, s.stream); err != nil {
			return fmt.Errorf("cuda backend: copying the edge count: %w", err)
		}
		if err := s.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda backend: top-K of %s: %w", blockString(blk), err)
		}
		count := int(*(*uint64)(s.hostCount))
		if count > s.edgeCap {
			return fmt.Errorf("cuda backend: top-K of %s returned %d pairs, more than the %d possible", blockString(blk), count, s.edgeCap)
		}
		var edges []fc.Edge
		if count > 0 {
			if err := cu.MemcpyDtoHAsync(s.hostEdges, s.edges, int64(count*edgeBytes), s.stream); err != nil {
				return fmt.Errorf("cuda backend: copying top-K pairs of %s: %w", blockString(blk), err)
			}
			if err := s.stream.Synchronize(); err != nil {
				return fmt.Errorf("cuda backend: copying top-K pairs of %s: %w", blockString(blk), err)
			}
			edges = uniquePairs(unsafe.Slice((*fc.Edge)(s.hostEdges), count))
		}
		if err := sink(&fc.BlockResult{Block: blk, Edges: edges}); err != nil {
			return err
		}
	}
	return nil
}

// uniquePairs sorts edges by (I, J) and keeps each pair once (a pair can win in its row and
// in its column; both copies carry the same value).
func uniquePairs(edges []fc.Edge) []fc.Edge {
	slices.SortFunc(edges, func(a, b fc.Edge) int {
		if a.I != b.I {
			return int(a.I) - int(b.I)
		}
		return int(a.J) - int(b.J)
	})
	return slices.CompactFunc(edges, func(a, b fc.Edge) bool { return a.I == b.I && a.J == b.J })
}

// GroupFisherZ opens the group-mean Fisher z engine for s subjects on this backend's device
// with its options (helper/group.FisherZEngine; Options.Subjects).
func (b *backend) GroupFisherZ(s int) (fc.Backend, error) {
	o := b.opts
	o.Subjects = s
	return New(o)
}
