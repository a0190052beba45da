//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
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
	stage    unsafe.Pointer // n·t float64
	stageCap int
	host     [2]unsafe.Pointer
	hostCap  [2]int // edges each holds
	turn     int    // the buffer the next call fills
}

func (s *slidingState) free() {
	freeDev(&s.xc, &s.a, &s.d, &s.bb, &s.out, &s.counts, &s.pack)
	s.statCap, s.outCap, s.countCap, s.packCap = 0, 0, 0, 0
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
	s, n, count := b.sl, b.sl.n, job.Count
	stream := b.slots[0].stream
	var err error
	if s.statCap < count*n {
		freeDev(&s.a, &s.d, &s.bb)
		s.statCap = 0
		for _, p := range []*cu.DevicePtr{&s.a, &s.d, &s.bb} {
			if *p, err = alloc("sliding-window statistics", 8*count*n); err != nil {
				return err
			}
		}
		s.statCap = count * n
	}
	if s.countCap < count {
		freeDev(&s.counts)
		s.countCap = 0
		if s.counts, err = alloc("sliding-window edge counts", 8*count); err != nil {
			return err
		}
		s.countCap = count
	}
	if job.Thresholds == nil {
		if err := launch(kernels.SlidingStats, s.stats, ceilDiv(n, 256), count, 256, 0, stream,
			ptr(s.xc), i64(n), i64(job.Window), i64(job.Step), i64(job.First), i64(count), f64(job.Threshold),
			ptr(s.a), ptr(s.d), ptr(s.bb)); err != nil {
			return err
		}
	} else {
		// Every window its own θ (density, significance): one launch per window, each
		// writing its window's n values (a few µs a launch against the sweep's milliseconds).
		for c := 0; c < count; c++ {
			off := cu.DevicePtr(8 * c * n)
			if err := launch(kernels.SlidingStats, s.stats, ceilDiv(n, 256), 1, 256, 0, stream,
				ptr(s.xc), i64(n), i64(job.Window), i64(job.Step), i64(job.First+c), i64(1), f64(job.Thresholds[c]),
				ptr(s.a+off), ptr(s.d+off), ptr(s.bb+off)); err != nil {
				return err
			}
		}
	}
	var flags int64
	if job.Abs {
		flags = opAbs
	}
	tiles := ceilDiv(n, slidingTile)
	counts := make([]uint64, count)
	for attempt := 0; ; attempt++ {
		if s.outCap < count*s.perWindow {
			freeDev(&s.out)
			s.outCap = 0
			if s.out, err = alloc("sliding-window edges", edgeBytes*count*s.perWindow); err != nil {
				return err
			}
			s.outCap = count * s.perWindow
		}
		if err := cu.MemsetD32Async(s.counts, 0, int64(2*count), stream); err != nil {
			return fmt.Errorf("cuda backend: clearing the sliding-window edge counts: %w", err)
		}
		for y0 := 0; y0 < tiles; y0 += slidingBand {
			if err := ctx.Err(); err != nil {
				_ = stream.Synchronize()
				return err
			}
			if err := launch(kernels.SlidingEdges, s.edges, tiles, min(slidingBand, tiles-y0), 256, 0, stream,
				ptr(s.xc), i64(n), i64(job.Window), i64(job.Step), i64(job.First), i64(count),
				ptr(s.a), ptr(s.d), ptr(s.bb), uint64(flags), i64(y0), ptr(s.out), ptr(s.counts), i64(s.perWindow)); err != nil {
				return err
			}
			if err := stream.Synchronize(); err != nil {
				return fmt.Errorf("cuda backend: sliding windows: %w", err)
			}
		}
		if err := download(counts, s.counts, "sliding-window edge counts"); err != nil {
			return err
		}
		var total, most uint64
		for _, c := range counts {
			total += c
			most = max(most, c)
		}
		if job.MaxEdges > 0 && total > uint64(job.MaxEdges) {
			return fc.ErrSlidingBudget
		}
		if most <= uint64(s.perWindow) {
			break
		}
		if attempt > 0 {
			return fmt.Errorf("cuda backend: sliding windows: %d edges in a window after reserving %d", most, s.perWindow)
		}
		if job.MaxEdges > 0 && uint64(count)*most > 2*uint64(job.MaxEdges) {
			// The buffer reserves the densest window's edges for every window: with the
			// edges crowded into few windows, fewer windows a chunk keep it within budget.
			return fc.ErrSlidingBudget
		}
		s.perWindow = int(most + most/8) // the next chunks are likely alike
	}
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

// SlidingOverlaps reports that SlidingEdges runs on the device and that its out slices stay
// valid until the second next call (the page-locked edge buffers alternate): fc.SlidingOverlap.
func (b *backend) SlidingOverlaps() bool { return true }

var (
	_ fc.Sliding        = (*backend)(nil)
	_ fc.SlidingOverlap = (*backend)(nil)
)
