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
	"unsafe"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/kernels"
	"gorgonia.org/cu"
)

// Incremental sliding windows on the device (fc.Sliding): sliding_stats computes every row's
// window statistics, sliding_edges sweeps 64×64 tiles of pairs through all windows of a chunk
// with float64 cross-products in registers (kernels/sliding_edges.cu). The centred series
// stay on the device between chunks; edges come back per window.

// slidingTile is SL_T in sliding_edges.cu; slidingBand is the tile rows launched between two
// checks of the context (a band of a W6-size chunk runs for milliseconds).
const (
	slidingTile = 64
	slidingBand = 64
)

type slidingState struct {
	stats, edges cu.Function
	n, t         int
	xc           cu.DevicePtr // centred series, column-major float64
	a, d, bb     cu.DevicePtr // count·n float64 each
	statCap      int
	out          cu.DevicePtr // windows × perWindow edges
	outCap       int          // edges the buffer holds
	perWindow    int          // edges per window the next launch reserves
	counts       cu.DevicePtr // uint64 per window
	countCap     int
	pack         cu.DevicePtr // the chunk's edges, window after window
	packCap      int
	// The centred series are written into page-locked memory and uploaded from there, and
	// each chunk's edges come back into page-locked memory, which SlidingEdges' out slices
	// share: pageable copies ran at 1.6–2.5 GB/s on an H200 host against tens of GB/s
	// pinned (pinned.go), i.e. ~25 ms for W6's 4.7 M edges. Both stay allocated (and are
	// reused) until Close. The edge buffers alternate between calls, so that a caller may
	// read one chunk's edges while the next chunk runs (fc.Sliding).
	// Each window's CSR on the device (SlidingCSR): row starts and their copy the scatter
	// advances (count·(n+1) uint64 each), degrees and triangles (count·n uint32 each), the
	// scattered keys (count·perWindow uint64), the longest rows, the windows' offsets in the
	// packed columns and weights (total uint32 each), and the page-locked buffers they come
	// back into, alternating as host does.
	csrFns         [5]cu.Function
	rowPtr, cursor cu.DevicePtr
	rowPtrCap      int
	deg, tri       cu.DevicePtr
	degCap         int
	keys           cu.DevicePtr
	keysCap        int
	rowMax, base   cu.DevicePtr
	rowMaxCap      int
	cols, wts      cu.DevicePtr
	colsCap        int
	// WindowTriangles' rows, columns, counts and a zero offset.
	triPtr, triCols, triCount          cu.DevicePtr
	triPtrCap, triColsCap, triCountCap int
	zero                               cu.DevicePtr
	csrHost                            [2]unsafe.Pointer
	csrHostCap                         [2]int         // bytes
	stage                              unsafe.Pointer // n·t float64
	stageCap                           int
	host                               [2]unsafe.Pointer
	hostCap                            [2]int // edges each holds
	turn                               int    // the buffer the next call fills
}

func (s *slidingState) free() {
	freeDev(&s.xc, &s.a, &s.d, &s.bb, &s.out, &s.counts, &s.pack)
	s.statCap, s.outCap, s.countCap, s.packCap = 0, 0, 0, 0
	freeDev(&s.rowPtr, &s.cursor, &s.deg, &s.tri, &s.keys, &s.rowMax, &s.base, &s.cols, &s.wts)
	s.rowPtrCap, s.degCap, s.keysCap, s.rowMaxCap, s.colsCap = 0, 0, 0, 0, 0
	freeDev(&s.triPtr, &s.triCols, &s.triCount, &s.zero)
	s.triPtrCap, s.triColsCap, s.triCountCap = 0, 0, 0
	for i := range s.csrHost {
		pinnedFree(s.csrHost[i])
		s.csrHost[i], s.csrHostCap[i] = nil, 0
	}
	pinnedFree(s.stage)
	s.stage, s.stageCap = nil, 0
	for i := range s.host {
		pinnedFree(s.host[i])
		s.host[i], s.hostCap[i] = nil, 0
	}
}

// PrepareSliding centres the series on their whole-scan means on the host (float64,
// transposed to column-major so that a warp reads 32 rows of one volume) and uploads them.
func (b *backend) PrepareSliding(ctx context.Context, x []float32, n, t int) error {
	if n < 2 || t < 3 || len(x) != n*t {
		return fmt.Errorf("sliding windows: %d values for %d series of %d volumes", len(x), n, t)
	}
	if n > math.MaxUint32 {
		return fmt.Errorf("sliding windows: %d series exceed the uint32 node index", n)
	}
	// The kernels and the page-locked buffer the centred series are written into.
	var xc []float64
	if err := b.do(func() error {
		if b.sl == nil {
			b.sl = &slidingState{perWindow: 1 << 16}
			for _, k := range []struct {
				name string
				dst  *cu.Function
			}{{kernels.SlidingStats, &b.sl.stats}, {kernels.SlidingEdges, &b.sl.edges}} {
				fn, err := b.mod.Function(k.name)
				if err != nil {
					b.sl = nil
					return fmt.Errorf("cuda backend: kernel %s not in the embedded fatbin: %w", k.name, err)
				}
				*k.dst = fn
			}
		}
		s := b.sl
		if s.stageCap < n*t {
			pinnedFree(s.stage)
			s.stage, s.stageCap = nil, 0
			p, err := pinnedAlloc(8 * n * t)
			if err != nil {
				return err
			}
			s.stage, s.stageCap = p, n*t
		}
		xc = unsafe.Slice((*float64)(s.stage), n*t)
		return nil
	}); err != nil {
		return err
	}
	var bad error
	var mu sync.Mutex
	parallelRows(n, func(lo, hi int) {
		// 16 rows at a time, so that each volume's 16 values are written side by side.
		var mean [16]float64
		for i0 := lo; i0 < hi; i0 += 16 {
			i1 := min(i0+16, hi)
			for i := i0; i < i1; i++ {
				var sum float64
				for _, v := range x[i*t : (i+1)*t] {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						mu.Lock()
						bad = fmt.Errorf("sliding windows: series %d has a non-finite value", i)
						mu.Unlock()
						return
					}
					sum += float64(v)
				}
				mean[i-i0] = sum / float64(t)
			}
			for q := 0; q < t; q++ {
				dst := xc[q*n+i0 : q*n+i1]
				for r := range dst {
					dst[r] = float64(x[(i0+r)*t+q]) - mean[r]
				}
			}
		}
	})
	if bad != nil {
		return bad
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.do(func() error {
		s := b.sl
		freeDev(&s.xc)
		s.n, s.t = 0, 0
		var err error
		if s.xc, err = alloc("sliding-window series", 8*n*t); err != nil {
			return err
		}
		if err := upload(s.xc, xc, "sliding-window series"); err != nil {
			return err
		}
		s.n, s.t = n, t
		return nil
	})
}

// parallelRows splits [0, n) over GOMAXPROCS goroutines.
func parallelRows(n int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+per, n))
	}
	wg.Wait()
}

// SlidingEdges computes one chunk of windows on the device (fc.Sliding).
func (b *backend) SlidingEdges(ctx context.Context, job fc.SlidingJob, out [][]fc.Edge) error {
	if b.sl == nil || b.sl.n == 0 {
		return errors.New("sliding windows: series not prepared")
	}
	if err := job.Validate(b.sl.t); err != nil {
		return err
	}
	if len(out) < job.Count {
		return fmt.Errorf("sliding windows: %d edge lists for %d windows", len(out), job.Count)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.do(func() error { return b.slidingEdges(ctx, job, out) })
}

func (b *backend) slidingEdges(ctx context.Context, job fc.SlidingJob, out [][]fc.Edge) error {
	counts, err := b.slidingSweep(ctx, job)
	if err != nil {
		return err
	}
	s, count := b.sl, job.Count
	stream := b.slots[0].stream
	// The windows' edges side by side on the device (one copy each), then one copy to the
	// host buffer that out's slices share.
	var total int
	for _, c := range counts {
		total += int(c)
	}
	if s.packCap < total {
		freeDev(&s.pack)
		s.packCap = 0
		if s.pack, err = alloc("sliding-window edges, packed", edgeBytes*total); err != nil {
			return err
		}
		s.packCap = total
	}
	h := s.turn
	if s.hostCap[h] < total {
		pinnedFree(s.host[h])
		s.host[h], s.hostCap[h] = nil, 0
		want := total + total/8
		p, err := pinnedAlloc(edgeBytes * want)
		if err != nil {
			return err
		}
		s.host[h], s.hostCap[h] = p, want
	}
	s.turn = 1 - h
	host := unsafe.Slice((*fc.Edge)(s.host[h]), s.hostCap[h])
	off := 0
	for c := 0; c < count; c++ {
		k := int(counts[c])
		if k > 0 {
			if err := cu.MemcpyDtoDAsync(s.pack+cu.DevicePtr(edgeBytes*off), s.out+cu.DevicePtr(edgeBytes*c*s.perWindow), int64(edgeBytes*k), stream); err != nil {
				return fmt.Errorf("cuda backend: packing sliding-window edges: %w", err)
			}
		}
		out[c] = host[off : off+k : off+k]
		off += k
	}
	if err := stream.Synchronize(); err != nil {
		return fmt.Errorf("cuda backend: packing sliding-window edges: %w", err)
	}
	return download(host[:total], s.pack, "sliding-window edges")
}

// slidingSweep runs sliding_stats and sliding_edges over the job's windows: window c's edges
// are at s.out + c·s.perWindow, counts[c] of them (the reservation grown and the sweep rerun
// once when a window had more).
func (b *backend) slidingSweep(ctx context.Context, job fc.SlidingJob) (counts []uint64, err error) {
	s, n, count := b.sl, b.sl.n, job.Count
	stream := b.slots[0].stream
	if s.statCap < count*n {
		freeDev(&s.a, &s.d, &s.bb)
		s.statCap = 0
		for _, p := range []*cu.DevicePtr{&s.a, &s.d, &s.bb} {
			if *p, err = alloc("sliding-window statistics", 8*count*n); err != nil {
				return nil, err
			}
		}
		s.statCap = count * n
	}
	if s.countCap < count {
		freeDev(&s.counts)
		s.countCap = 0
		if s.counts, err = alloc("sliding-window edge counts", 8*count); err != nil {
			return nil, err
		}
		s.countCap = count
	}
	if job.Thresholds == nil {
		if err := launch(kernels.SlidingStats, s.stats, ceilDiv(n, 256), count, 256, 0, stream,
			ptr(s.xc), i64(n), i64(job.Window), i64(job.Step), i64(job.First), i64(count), f64(job.Threshold),
			ptr(s.a), ptr(s.d), ptr(s.bb)); err != nil {
			return nil, err
		}
	} else {
		// Every window its own θ (density, significance): one launch per window, each
		// writing its window's n values (a few µs a launch against the sweep's milliseconds).
		for c := 0; c < count; c++ {
			off := cu.DevicePtr(8 * c * n)
			if err := launch(kernels.SlidingStats, s.stats, ceilDiv(n, 256), 1, 256, 0, stream,
				ptr(s.xc), i64(n), i64(job.Window), i64(job.Step), i64(job.First+c), i64(1), f64(job.Thresholds[c]),
				ptr(s.a+off), ptr(s.d+off), ptr(s.bb+off)); err != nil {
				return nil, err
			}
		}
	}
	var flags int64
	if job.Abs {
		flags = opAbs
	}
	tiles := ceilDiv(n, slidingTile)
	counts = make([]uint64, count)
	for attempt := 0; ; attempt++ {
		if s.outCap < count*s.perWindow {
			freeDev(&s.out)
			s.outCap = 0
			if s.out, err = alloc("sliding-window edges", edgeBytes*count*s.perWindow); err != nil {
				return nil, err
			}
			s.outCap = count * s.perWindow
		}
		if err := cu.MemsetD32Async(s.counts, 0, int64(2*count), stream); err != nil {
			return nil, fmt.Errorf("cuda backend: clearing the sliding-window edge counts: %w", err)
		}
		for y0 := 0; y0 < tiles; y0 += slidingBand {
			if err := ctx.Err(); err != nil {
				_ = stream.Synchronize()
				return nil, err
			}
			if err := launch(kernels.SlidingEdges, s.edges, tiles, min(slidingBand, tiles-y0), 256, 0, stream,
				ptr(s.xc), i64(n), i64(job.Window), i64(job.Step), i64(job.First), i64(count),
				ptr(s.a), ptr(s.d), ptr(s.bb), uint64(flags), i64(y0), ptr(s.out), ptr(s.counts), i64(s.perWindow)); err != nil {
				return nil, err
			}
			if err := stream.Synchronize(); err != nil {
				return nil, fmt.Errorf("cuda backend: sliding windows: %w", err)
			}
		}
		if err := download(counts, s.counts, "sliding-window edge counts"); err != nil {
			return nil, err
		}
		var total, most uint64
		for _, c := range counts {
			total += c
			most = max(most, c)
		}
		if job.MaxEdges > 0 && total > uint64(job.MaxEdges) {
			return nil, fc.ErrSlidingBudget
		}
		if most <= uint64(s.perWindow) {
			break
		}
		if attempt > 0 {
			return nil, fmt.Errorf("cuda backend: sliding windows: %d edges in a window after reserving %d", most, s.perWindow)
		}
		if job.MaxEdges > 0 && uint64(count)*most > 2*uint64(job.MaxEdges) {
			// The buffer reserves the densest window's edges for every window: with the
			// edges crowded into few windows, fewer windows a chunk keep it within budget.
			return nil, fc.ErrSlidingBudget
		}
		s.perWindow = int(most + most/8) // the next chunks are likely alike
	}
	return counts, nil
}

// maxSortRow bounds a window's longest row for sliding_sort, whose warp per row costs
// len²/32 comparisons: W6's rows at r > 0.3 hold tens of entries; a window past the bound
// (a hub over thousands of nodes) is sorted by the host (fc.ErrSlidingRows).
const maxSortRow = 4096

// SlidingCSR computes one chunk of windows on the device and sorts each window's edges into
// its CSR network there, with its degrees and triangles (fc.SlidingCSR): sliding_rows counts
// rows and degrees, sliding_scan turns the counts into row starts, sliding_scatter and
// sliding_sort place every edge in its row in column order, sliding_triangles counts each
// node's triangles; then the rows, columns, weights, degrees and triangles come back in one
// page-locked buffer per call (alternating, as SlidingEdges' do).
func (b *backend) SlidingCSR(ctx context.Context, job fc.SlidingJob, out []fc.WindowCSR) error {
	if b.sl == nil || b.sl.n == 0 {
		return errors.New("sliding windows: series not prepared")
	}
	if err := job.Validate(b.sl.t); err != nil {
		return err
	}
	if len(out) < job.Count {
		return fmt.Errorf("sliding windows: %d networks for %d windows", len(out), job.Count)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.do(func() error { return b.slidingCSR(ctx, job, out) })
}

// growDev replaces the buffers ps (size bytes an element each) by ones of want elements and
// an eighth more when *capacity is smaller (their contents lost).
func growDev(capacity *int, want, size int, what string, ps ...*cu.DevicePtr) error {
	if *capacity >= want {
		return nil
	}
	freeDev(ps...)
	*capacity = 0
	want += want/8 + 1
	for _, p := range ps {
		var err error
		if *p, err = alloc(what, size*want); err != nil {
			return err
		}
	}
	*capacity = want
	return nil
}

// csrKernels looks up the kernels of SlidingCSR and WindowTriangles once (device thread).
func (b *backend) csrKernels() error {
	s := b.sl
	if s.csrFns[0] != (cu.Function{}) {
		return nil
	}
	for i, name := range []string{kernels.SlidingRows, kernels.SlidingScan, kernels.SlidingScatter, kernels.SlidingSort, kernels.SlidingTriangles} {
		fn, err := b.mod.Function(name)
		if err != nil {
			return fmt.Errorf("cuda backend: kernel %s not in the embedded fatbin: %w", name, err)
		}
		s.csrFns[i] = fn
	}
	return nil
}

// WindowTriangles counts the triangles through every node of a window's network built on the
// host (fc.WindowTriangles: a density window, whose edges the host selects from its
// candidates) by sliding_triangles on the device: the rows go up, the counts come back.
func (b *backend) WindowTriangles(ctx context.Context, indptr []uint64, indices []uint32, tri []uint32) error {
	n := len(indptr) - 1
	if n < 1 || len(tri) != n || indptr[n] != uint64(len(indices)) {
		return fmt.Errorf("window triangles: %d row starts, %d columns, %d counts", len(indptr), len(indices), len(tri))
	}
	if b.sl == nil {
		return errors.New("window triangles: sliding windows not prepared")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.do(func() error {
		s := b.sl
		stream := b.slots[0].stream
		if err := b.csrKernels(); err != nil {
			return err
		}
		for _, g := range []struct {
			capacity   *int
			want, size int
			what       string
			ps         []*cu.DevicePtr
		}{
			{&s.triPtrCap, n + 1, 8, "window rows", []*cu.DevicePtr{&s.triPtr}},
			{&s.triColsCap, len(indices), 4, "window columns", []*cu.DevicePtr{&s.triCols}},
			{&s.triCountCap, n, 4, "window triangles", []*cu.DevicePtr{&s.triCount}},
		} {
			if err := growDev(g.capacity, g.want, g.size, g.what, g.ps...); err != nil {
				return err
			}
		}
		if s.zero == 0 {
			var err error
			if s.zero, err = alloc("window offset", 8); err != nil {
				return err
			}
			if err := upload(s.zero, []uint64{0}, "window offset"); err != nil {
				return err
			}
		}
		if err := upload(s.triPtr, indptr, "window rows"); err != nil {
			return err
		}
		if err := upload(s.triCols, indices, "window columns"); err != nil {
			return err
		}
		if err := cu.MemsetD32Async(s.triCount, 0, int64(n), stream); err != nil {
			return fmt.Errorf("cuda backend: clearing window triangles: %w", err)
		}
		if err := launch(kernels.SlidingTriangles, s.csrFns[4], max(1, min(ceilDiv(n, 8), 2048)), 1, 256, 0, stream,
			ptr(s.triPtr), i64(n), ptr(s.triCols), ptr(s.zero), ptr(s.triCount)); err != nil {
			return err
		}
		if err := stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda backend: window triangles: %w", err)
		}
		return download(tri, s.triCount, "window triangles")
	})
}

func (b *backend) slidingCSR(ctx context.Context, job fc.SlidingJob, out []fc.WindowCSR) error {
	s, n, count := b.sl, b.sl.n, job.Count
	stream := b.slots[0].stream
	if err := b.csrKernels(); err != nil {
		return err
	}
	counts, err := b.slidingSweep(ctx, job)
	if err != nil {
		return err
	}
	var total, most int
	base := make([]uint64, count)
	for c, k := range counts {
		base[c] = uint64(total)
		total += int(k)
		most = max(most, int(k))
	}
	np := n + 1
	for _, g := range []struct {
		capacity   *int
		want, size int
		what       string
		ps         []*cu.DevicePtr
	}{
		{&s.rowPtrCap, count * np, 8, "sliding-window rows", []*cu.DevicePtr{&s.rowPtr, &s.cursor}},
		{&s.degCap, count * n, 4, "sliding-window degrees and triangles", []*cu.DevicePtr{&s.deg, &s.tri}},
		{&s.rowMaxCap, count, 8, "sliding-window offsets", []*cu.DevicePtr{&s.rowMax, &s.base}},
		{&s.colsCap, total, 4, "sliding-window columns and weights", []*cu.DevicePtr{&s.cols, &s.wts}},
		{&s.keysCap, count * s.perWindow, 8, "sliding-window rows' keys", []*cu.DevicePtr{&s.keys}},
	} {
		if err := growDev(g.capacity, g.want, g.size, g.what, g.ps...); err != nil {
			return err
		}
	}
	for _, z := range []struct {
		p  cu.DevicePtr
		n4 int
	}{{s.rowPtr, 2 * count * np}, {s.deg, count * n}, {s.tri, count * n}} {
		if err := cu.MemsetD32Async(z.p, 0, int64(z.n4), stream); err != nil {
			return fmt.Errorf("cuda backend: clearing the sliding-window rows: %w", err)
		}
	}
	edgeBlocks := max(1, min(ceilDiv(most, 256), 1024))
	rowBlocks := max(1, min(ceilDiv(n, 8), 2048))
	if err := launch(kernels.SlidingRows, s.csrFns[0], edgeBlocks, count, 256, 0, stream,
		ptr(s.out), ptr(s.counts), i64(s.perWindow), i64(n), ptr(s.rowPtr), ptr(s.deg)); err != nil {
		return err
	}
	if err := launch(kernels.SlidingScan, s.csrFns[1], count, 1, 1024, 0, stream,
		ptr(s.rowPtr), i64(n), ptr(s.rowMax)); err != nil {
		return err
	}
	if err := stream.Synchronize(); err != nil {
		return fmt.Errorf("cuda backend: sliding-window rows: %w", err)
	}
	rowMax := make([]uint32, count)
	if err := download(rowMax, s.rowMax, "sliding-window longest rows"); err != nil {
		return err
	}
	if slices.Max(rowMax) > maxSortRow {
		return fc.ErrSlidingRows
	}
	if err := upload(s.base, base, "sliding-window offsets"); err != nil {
		return err
	}
	if err := cu.MemcpyDtoDAsync(s.cursor, s.rowPtr, int64(8*count*np), stream); err != nil {
		return fmt.Errorf("cuda backend: sliding-window rows: %w", err)
	}
	if err := launch(kernels.SlidingScatter, s.csrFns[2], edgeBlocks, count, 256, 0, stream,
		ptr(s.out), ptr(s.counts), i64(s.perWindow), i64(n), ptr(s.cursor), ptr(s.keys)); err != nil {
		return err
	}
	if err := launch(kernels.SlidingSort, s.csrFns[3], rowBlocks, count, 256, 0, stream,
		ptr(s.rowPtr), i64(n), i64(s.perWindow), ptr(s.keys), ptr(s.base), ptr(s.cols), ptr(s.wts)); err != nil {
		return err
	}
	if err := launch(kernels.SlidingTriangles, s.csrFns[4], rowBlocks, count, 256, 0, stream,
		ptr(s.rowPtr), i64(n), ptr(s.cols), ptr(s.base), ptr(s.tri)); err != nil {
		return err
	}
	if err := stream.Synchronize(); err != nil {
		return fmt.Errorf("cuda backend: sliding-window rows: %w", err)
	}
	// One page-locked buffer: row starts (8-byte aligned first), then columns, weights,
	// degrees and triangles.
	need := 8*count*np + 4*(2*total+2*count*n)
	h := s.turn
	if s.csrHostCap[h] < need {
		pinnedFree(s.csrHost[h])
		s.csrHost[h], s.csrHostCap[h] = nil, 0
		want := need + need/8
		p, err := pinnedAlloc(want)
		if err != nil {
			return err
		}
		s.csrHost[h], s.csrHostCap[h] = p, want
	}
	s.turn = 1 - h
	hp := unsafe.Slice((*uint64)(s.csrHost[h]), count*np)
	rest := unsafe.Add(s.csrHost[h], 8*count*np)
	hc := unsafe.Slice((*uint32)(rest), total)
	hw := unsafe.Slice((*float32)(unsafe.Add(rest, 4*total)), total)
	hd := unsafe.Slice((*uint32)(unsafe.Add(rest, 8*total)), count*n)
	ht := unsafe.Slice((*uint32)(unsafe.Add(rest, 8*total+4*count*n)), count*n)
	for _, d := range []error{
		download(hp, s.rowPtr, "sliding-window rows"),
		download(hc, s.cols, "sliding-window columns"),
		download(hw, s.wts, "sliding-window weights"),
		download(hd, s.deg, "sliding-window degrees"),
		download(ht, s.tri, "sliding-window triangles"),
	} {
		if d != nil {
			return d
		}
	}
	for c := 0; c < count; c++ {
		lo, hi := int(base[c]), int(base[c])+int(counts[c])
		out[c] = fc.WindowCSR{
			Indptr:    hp[c*np : (c+1)*np : (c+1)*np],
			Indices:   hc[lo:hi:hi],
			Weights:   hw[lo:hi:hi],
			Degree:    hd[c*n : (c+1)*n : (c+1)*n],
			Triangles: ht[c*n : (c+1)*n : (c+1)*n],
		}
	}
	return nil
}

// SlidingOverlaps reports that SlidingEdges runs on the device and that its out slices stay
// valid until the second next call (the page-locked edge buffers alternate): fc.SlidingOverlap.
func (b *backend) SlidingOverlaps() bool { return true }

var (
	_ fc.Sliding         = (*backend)(nil)
	_ fc.SlidingOverlap  = (*backend)(nil)
	_ fc.SlidingCSR      = (*backend)(nil)
	_ fc.WindowTriangles = (*backend)(nil)
)
