package dfc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/progress"
)

// IncrementalStepRatio is the cutover between the two paths: the windows' cross-products are
// updated incrementally (fc.Sliding) when Step·IncrementalStepRatio ≤ Window. An update costs
// 2s float64 multiply-adds per pair and window plus the test, against w float32 ones at
// several times the rate for a window rebuilt by the blocked product; measured on the CPU
// (N = 3,000, w = 150) the two cost the same near s = 9 ≈ w/16 (docs/algorithms.md, "Dynamic
// connectivity").
const IncrementalStepRatio = 16

// MinHostDensityChunk is the fewest windows a chunk of a density run must hold for the
// incremental path when the sweep runs on the host's cores (the CPU backend): every chunk is
// re-based (w float64 multiply-adds per pair through the tile's rows), which on the CPU costs
// about as much as four windows rebuilt by the blocked float32 product, so a density run
// whose candidates allow only a few windows a chunk is cheaper per window. Measured on the
// 2-core VM at W6's N = 30,000 and 1 %, 16 windows: incremental in chunks of 3 windows 82.2
// CPU-s, per window 55.4 (the host's selection, CSR and C_p ≈ 27 of the 82); C6 (N = 5,000,
// all 108 windows in one chunk): 3.4 against 9.2. On a GPU the re-basing costs milliseconds
// (W6 at 1 %: 108 windows in chunks of 16, 0.52 s on an H200) and the rule does not apply.
const MinHostDensityChunk = 8

// minDeviceTriangles is the fewest edges of a window built on the host (density) whose
// triangles are counted on the device (fc.WindowTriangles) rather than here: at W6's N =
// 30,000 and 1 % (4.5 M edges) C_p was 1.3 of the host's 1.7 CPU-s a window, while a window
// of W6 at r > 0.3 (43,000 edges) takes milliseconds here, less than its rows' trip.
var minDeviceTriangles = 1 << 18

// MaxChunkWindows bounds the windows one tile sweeps before its cross-products are
// recomputed from the series (re-basing; the chunk is also the unit of progress).
const MaxChunkWindows = 128

// chunkEdgeBudget bounds the edges one chunk of windows may hold (12 bytes each): 256 MiB.
var chunkEdgeBudget = 256 << 20 / 12

// maxDensityChunkEdges bounds the budget a density run grows to for GOMAXPROCS windows a chunk:
// 2 GiB of candidates (W6 at 1 % on 16 cores needs 1.3 GB), so that dense windows on many
// cores do not hold tens of GB; past it the chunks are smaller.
const maxDensityChunkEdges = 2 << 30 / 12

// incremental reports whether Run takes the incremental path for these options: Pearson
// with a strength threshold θ ≥ 0, a density 0 < D ≤ MaxIncrementalDensity or Bonferroni
// significance (each window cut at its own value: cuts.go), no censoring (windows of equal
// length), a step small against the window, and not forced per window.
func incremental(opt Options) bool {
	c := opt.FC
	if opt.PerWindow || c.Measure != fc.Pearson || opt.Axis != 0 || opt.Step*IncrementalStepRatio > opt.Window {
		return false
	}
	switch c.Mode {
	case fc.Strength:
		return c.Threshold >= 0 && !math.IsInf(c.Threshold, 1)
	case fc.Density:
		return c.Density > 0 && c.Density <= MaxIncrementalDensity
	case fc.Significance:
		return c.Correction == fc.Bonferroni && c.Alpha > 0 && c.Alpha < 1
	}
	return false
}

// runIncremental is Run's incremental path: windows in chunks through b's fc.Sliding (or
// fc.SlidingCPU when b has none), then per window the CSR network, its measures and each, in
// window order. ok is false (and no window was handed over) when the series hold a
// non-finite value — the per-window path then reports which window — or when the backend
// failed before the first window (a note says so).
func runIncremental(ctx context.Context, b fc.Backend, x []float32, n, t int, plan Plan, opt Options, samples int, res *Result, rep progress.Reporter, each func(*Window) error) (ok bool, err error) {
	constant, finite := scanSeries(x, n, t, plan)
	if !finite {
		return false, nil
	}
	sl, has := b.(fc.Sliding)
	if !has {
		cpu := &fc.SlidingCPU{}
		defer cpu.Close()
		sl = cpu
	}
	// A backend that cannot run the windows (out of device memory, say) before any window
	// was handed over leaves them to the per-window path, with a note.
	unavailable := func(err error) (bool, error) {
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		res.Notes = append(res.Notes, fmt.Sprintf("incremental sliding windows unavailable on the %s backend (%v): every window was built from its own series", b.Name(), err))
		return false, nil
	}
	cuts, err := newWindowCuts(ctx, x, n, t, plan, constant, opt)
	if err != nil {
		return true, err
	}
	w, k := plan.Window, plan.Count()
	overlap := false
	if o, ok := sl.(fc.SlidingOverlap); ok && has {
		overlap = o.SlidingOverlaps()
	}
	chunk := chunkSize(k, opt.ChunkWindows)
	limit := MaxChunkWindows // the most windows of the later chunks
	if opt.ChunkWindows > 0 {
		limit = chunk
	}
	budget := chunkEdgeBudget
	if cuts.keep != nil {
		// Density: a window's candidates are about its k edges and a few σ more. The budget
		// lets a chunk hold GOMAXPROCS such windows, since each window's host work (selection,
		// CSR, C_p: about 1.7 CPU-s at W6's N = 30,000 and 1 %, 4.5 M edges) runs on one core
		// and a chunk's windows are what the cores share — W6 at 1 % on an H200 host took
		// 33.7 s in chunks of 3 windows (380 % CPU of 1,600); up to maxDensityChunkEdges. The
		// first chunk is sized by them rather than found by halving past the budget.
		var most int64 = 1
		for _, kk := range cuts.keep {
			most = max(most, kk+kk/2)
		}
		budget = int(max(int64(budget), min(int64(runtime.GOMAXPROCS(0))*most, int64(maxDensityChunkEdges))))
		if opt.ChunkWindows == 0 {
			chunk = int(max(1, min(int64(chunk), int64(budget)/most)))
		}
		if !overlap && chunk < min(k, MinHostDensityChunk) {
			return false, nil // cheaper per window (MinHostDensityChunk)
		}
	}
	if err := sl.PrepareSliding(ctx, x, n, t); err != nil {
		return unavailable(err)
	}
	// A device that sorts each window's edges into its CSR and counts its degrees and
	// triangles (fc.SlidingCSR) hands back the networks instead of the edges, except where a
	// window's cut is selected from its candidates on the host (density) or a row is too
	// long for the device's sort (then the rest of the run takes the edges).
	csr, useCSR := sl.(fc.SlidingCSR)
	useCSR = useCSR && has && cuts.keep == nil
	// The windows whose CSR the host builds count their triangles on that device.
	tris, _ := sl.(fc.WindowTriangles)
	if !has {
		tris = nil
	}
	// compute runs windows [first, first+count) into out (count ≤ chunk: fewer when their
	// edges pass the budget). A density window with fewer candidates than its k edges is
	// built from its own series (own, by window index): here, where the backend is not busy.
	compute := func(first, chunk int, out [][]fc.Edge, nets []fc.WindowCSR) (int, map[int]*ownWindow, error) {
		for {
			count := min(chunk, k-first)
			job := fc.SlidingJob{Window: w, Step: plan.Step, First: first, Count: count,
				Threshold: opt.FC.Threshold, Abs: opt.FC.Abs, MaxEdges: int64(budget)}
			if opt.FC.Mode != fc.Strength {
				job.Threshold, job.Thresholds = 0, cuts.theta[first:first+count]
			}
			if count == 1 {
				job.MaxEdges = 0 // one window's network is held by either path
			}
			for c := range out[:count] {
				out[c], nets[c] = out[c][:0], fc.WindowCSR{}
			}
			var err error
			if useCSR {
				err = csr.SlidingCSR(ctx, job, nets[:count])
				if errors.Is(err, fc.ErrSlidingRows) {
					useCSR = false
				}
			}
			if !useCSR {
				err = sl.SlidingEdges(ctx, job, out[:count])
			}
			if errors.Is(err, fc.ErrSlidingBudget) {
				chunk = max(1, count/2)
				continue
			}
			if err != nil || cuts.keep == nil {
				return count, nil, err
			}
			var own map[int]*ownWindow
			for c := range out[:count] {
				kk := first + c
				if int64(len(out[c])) >= cuts.keep[kk] || n-constant[kk] < 2 {
					continue
				}
				ow, err := buildOwn(ctx, b, x, n, t, plan, kk, opt.FC)
				if err != nil {
					return count, nil, err
				}
				if own == nil {
					own = map[int]*ownWindow{}
				}
				own[kk] = ow
			}
			return count, own, nil
		}
	}
	type done struct {
		count int
		own   map[int]*ownWindow
		err   error
	}
	var buf []float32
	bufs := [2][][]fc.Edge{make([][]fc.Edge, chunk), nil}
	nets := [2][]fc.WindowCSR{make([]fc.WindowCSR, chunk), nil}
	count, own, err := compute(0, chunk, bufs[0], nets[0])
	if err != nil {
		return unavailable(err)
	}
	res.Notes = append(res.Notes, cuts.notes...)
	for first, cur := 0, 0; ; cur = 1 - cur {
		out := bufs[cur][:count]
		next := first + count
		// The next chunk's size from the densest window so far, within the budget.
		most := 1
		for c := range out {
			most = max(most, len(out[c]), len(nets[cur][c].Indices))
		}
		chunk = max(1, min(limit, budget/most))
		var pending chan done
		if next < k && overlap {
			// With more than one chunk (more windows than MaxChunkWindows, or edges past
			// the budget) the device runs the next chunk (into the other buffer; the
			// backend's own buffers alternate too) while the host builds this one's windows.
			if len(bufs[1-cur]) < chunk {
				bufs[1-cur], nets[1-cur] = make([][]fc.Edge, chunk), make([]fc.WindowCSR, chunk)
			}
			pending = make(chan done, 1)
			go func(into [][]fc.Edge, intoNets []fc.WindowCSR) {
				c, o, err := compute(next, chunk, into, intoNets)
				pending <- done{c, o, err}
			}(bufs[1-cur], nets[1-cur])
		}
		err := emitChunk(ctx, out, nets[cur][:count], tris, first, n, t, plan, x, constant, cuts, own, opt, samples, &buf, res, rep, each)
		if err != nil {
			if pending != nil {
				<-pending // the backend and the buffers stay in use until it returns
			}
			return true, err
		}
		if next >= k {
			return true, nil
		}
		if pending != nil {
			d := <-pending
			count, own, err = d.count, d.own, d.err
		} else {
			if len(bufs[1-cur]) < chunk {
				bufs[1-cur], nets[1-cur] = make([][]fc.Edge, chunk), make([]fc.WindowCSR, chunk)
			}
			count, own, err = compute(next, chunk, bufs[1-cur], nets[1-cur])
		}
		if err != nil {
			return true, fmt.Errorf("dfc: windows %d–%d: %w", next, next+min(chunk, k-next)-1, err)
		}
		first = next
	}
}

// chunkSize is the windows of the first chunk: forced > 0, else all k windows up to
// MaxChunkWindows in equal chunks. Splitting a run that fits one chunk into two, so that the
// host builds the first half's windows while the device runs the second, was measured and
// not kept: W6 on an H200, 159 ms in one chunk against 166 ms in two overlapped chunks — the
// second chunk's re-basing (w products per pair) cost the device 19 ms, more than the host's
// share it hid (BENCHMARKS.md, W6).
func chunkSize(k, forced int) int {
	if forced > 0 {
		return min(forced, k)
	}
	chunk := min(k, MaxChunkWindows)
	parts := (k + chunk - 1) / chunk
	return (k + parts - 1) / parts // equal chunks
}

// emitChunk builds the chunk's windows' CSR networks and measures on up to GOMAXPROCS
// goroutines (each window's are independent), at most 2·GOMAXPROCS windows ahead of the one
// handed to each, which receives them in window order. cuts (nil: every window at
// opt.FC.Threshold) are the windows' thresholds and, for density, their edge counts, which
// are selected from the candidates first; own are the windows built from their own series.
// A window whose nets entry is set (fc.SlidingCSR: nets may be nil) takes its CSR, degrees
// and triangles from it instead of from its edges; tris (may be nil) counts the triangles of
// the windows built here with at least minDeviceTriangles edges.
func emitChunk(ctx context.Context, out [][]fc.Edge, nets []fc.WindowCSR, tris fc.WindowTriangles, first, n, t int, plan Plan, x []float32, constant []int, cuts *windowCuts, own map[int]*ownWindow, opt Options, samples int, buf *[]float32, res *Result, rep progress.Reporter, each func(*Window) error) error {
	count, w := len(out), plan.Window
	wins := make([]Window, count)
	errs := make([]error, count)
	done := make([]chan struct{}, count)
	for c := range done {
		done[c] = make(chan struct{})
	}
	ahead := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		for c := 0; c < count; c++ {
			select {
			case ahead <- struct{}{}:
			case <-quit:
				return
			}
			go func(c int) {
				defer close(done[c])
				kk := first + c
				start := plan.Starts[kk]
				if nv := n - constant[kk]; nv < 2 {
					errs[c] = fmt.Errorf("dfc: window %d (volumes %d–%d): only %d of %d series vary within it", kk, start, start+w-1, nv, n)
					return
				}
				if ow := own[kk]; ow != nil {
					win := Window{Index: kk, Start: start, Network: ow.nw}
					var err error
					if win.Measures, win.Degree, err = measure(ctx, ow.nw, ow.fr, ow.constant, opt); err != nil {
						errs[c] = fmt.Errorf("dfc: window %d: %w", kk, err)
					}
					wins[c] = win
					return
				}
				sc := scratchPool.Get().(*windowScratch)
				defer scratchPool.Put(sc)
				edges, thr := out[c], opt.FC.Threshold
				if cuts != nil {
					thr = cuts.theta[kk]
					if cuts.keep != nil {
						var v float32
						edges, v = selectStrongest(edges, cuts.keep[kk], &sc.keys, &sc.ties)
						thr = float64(v)
					} else if cuts.reported != nil {
						thr = cuts.reported[kk]
					}
				}
				var (
					nw  *network.Network
					deg []int32
					tri []uint32
					fr  = &fc.Report{Threshold: thr, Isolated: -1}
				)
				if c < len(nets) && nets[c].Indptr != nil {
					wc := nets[c]
					nw = &network.Network{N: n, Indptr: wc.Indptr, Indices: wc.Indices, Weights: wc.Weights}
					deg, tri = make([]int32, n), wc.Triangles
					for i, d := range wc.Degree {
						deg[i] = int32(d)
					}
					fr.LargestComponent = sc.largestComponentRows(nw)
				} else {
					nw, deg = sc.csr(edges, n)
					fr.LargestComponent = sc.largestComponent(edges, n)
					if tris != nil && len(edges) >= minDeviceTriangles {
						sc.devTri = resize(sc.devTri, n)
						if tris.WindowTriangles(ctx, nw.Indptr, nw.Indices, sc.devTri) == nil {
							tri = sc.devTri // else counted here
						}
					}
				}
				win := Window{Index: kk, Start: start, Network: nw}
				var err error
				if win.Measures, win.Degree, err = measureWith(ctx, sc, nw, deg, tri, fr, constant[kk], opt); err != nil {
					errs[c] = fmt.Errorf("dfc: window %d: %w", kk, err)
				}
				wins[c] = win
			}(c)
		}
	}()
	for c := 0; c < count; c++ {
		<-done[c]
		if err := ctx.Err(); err != nil {
			return err
		}
		if errs[c] != nil {
			return errs[c]
		}
		win := wins[c]
		wins[c] = Window{}
		if ow := own[first+c]; ow != nil {
			for _, note := range ow.fr.Notes {
				if !slices.Contains(res.Notes, note) {
					res.Notes = append(res.Notes, note)
				}
			}
			res.Notes = append(res.Notes, fmt.Sprintf("window %d: fewer pairs than its %d edges above the sampled bound; built from its own series", first+c, ow.nw.Edges()))
		}
		if err := lowRank(ctx, &win, x, n, t, w, opt, samples, buf); err != nil {
			return err
		}
		if each != nil {
			if err := each(&win); err != nil {
				return err
			}
		}
		if win.Network != nil && own[first+c] == nil && (c >= len(nets) || nets[c].Indptr == nil) {
			networkPool.Put(win.Network) // its arrays serve a later window's CSR (not the device's)
		}
		win.Network, win.Factor = nil, nil
		res.Windows = append(res.Windows, win)
		rep.Add(1)
		<-ahead
	}
	return nil
}

// lowRank adds the window's low-rank factor and its MAE when Options.Rank asks for them.
func lowRank(ctx context.Context, win *Window, x []float32, n, t, w int, opt Options, samples int, buf *[]float32) error {
	if opt.Rank <= 0 {
		return nil
	}
	*buf = (*buf)[:0]
	for i := 0; i < n; i++ {
		*buf = append(*buf, x[i*t+win.Start:i*t+win.Start+w]...)
	}
	u, err := NormalizedWindow(*buf, n, w, opt.FC.Measure)
	if err != nil {
		return err
	}
	f, lr, err := LowRankWindow(ctx, u, opt.Rank, samples, opt.Seed+uint64(win.Index))
	if err != nil {
		return fmt.Errorf("dfc: window %d: %w", win.Index, err)
	}
	win.Factor, win.LowRank = f, &lr
	return nil
}

// scanSeries counts, per window, the rows whose w values are all equal (exact float32
// equality, as fc.CheckSeries tests constancy), from the runs of equal values in each row, and
// reports whether every value is finite; rows are shared among GOMAXPROCS goroutines.
func scanSeries(x []float32, n, t int, plan Plan) (constant []int, finite bool) {
	workers := runtime.GOMAXPROCS(0)
	per := (n + workers - 1) / workers
	counts := make([][]int, 0, workers)
	bad := false
	var mu sync.Mutex
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		cnt := make([]int, plan.Count())
		counts = append(counts, cnt)
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			run := make([]int32, t)
			for i := lo; i < hi; i++ {
				row := x[i*t : (i+1)*t]
				for _, v := range row {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						mu.Lock()
						bad = true
						mu.Unlock()
						return
					}
				}
				run[0] = 1
				for q := 1; q < t; q++ {
					run[q] = 1
					if row[q] == row[q-1] {
						run[q] = run[q-1] + 1
					}
				}
				for k, s := range plan.Starts {
					if run[s+plan.Window-1] >= int32(plan.Window) {
						cnt[k]++
					}
				}
			}
		}(lo, min(lo+per, n))
	}
	wg.Wait()
	constant = make([]int, plan.Count())
	for _, cnt := range counts {
		for k, c := range cnt {
			constant[k] += c
		}
	}
	return constant, !bad
}

// edgesToCSR sorts a window's edges (any order, I < J) into a strict-upper-triangle CSR
// network over n nodes (windowScratch.csr with arrays of its own).
func edgesToCSR(edges []fc.Edge, n int) *network.Network {
	nw, _ := (&windowScratch{}).csr(edges, n)
	return nw
}

// windowScratch holds the per-window arrays that do not outlive a window's measures (the
// counting sort's cursors and rows, the triangle counts and marks, the union–find), reused
// from window to window through scratchPool: W6's 108 windows of 30,000 nodes otherwise
// allocate and clear ~1.5 MB each on every core, which the garbage collector then reclaims.
type windowScratch struct {
	next         []uint64
	rows         []fc.Edge
	keys         []float32 // selectStrongest's
	ties         []fc.Edge
	tri          []int64
	mark         []bool
	parent, size []int32
	devTri       []uint32 // the device's triangle counts (fc.WindowTriangles)
}

var scratchPool = sync.Pool{New: func() any { return new(windowScratch) }}

// networkPool holds the CSR networks of windows already handed over (Run's each may not keep
// a window's network after it returns), whose arrays the next windows' CSRs reuse.
var networkPool sync.Pool

// resize returns s with n elements, its contents unspecified.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// grow returns s resized to n elements, all zero.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// csr sorts a window's edges (any order, I < J) into a strict-upper-triangle CSR network over
// n nodes — a counting sort by row straight into the network's arrays, then each row's few
// columns sorted in place (insertion sort; a long row, a hub's, by slices.SortFunc through
// scratch) — and returns the nodes' degrees, counted in the same pass over the edges.
func (sc *windowScratch) csr(edges []fc.Edge, n int) (*network.Network, []int32) {
	e := len(edges)
	nw := &network.Network{N: n}
	if v := networkPool.Get(); v != nil {
		old := v.(*network.Network)
		nw.Indptr, nw.Indices, nw.Weights = old.Indptr, old.Indices, old.Weights
	}
	nw.Indptr = grow(nw.Indptr, n+1)
	nw.Indices = resize(nw.Indices, e) // every entry is written below
	nw.Weights = resize(nw.Weights, e)
	deg := make([]int32, n)
	if e == 0 {
		return nw, deg
	}
	for _, ed := range edges {
		nw.Indptr[ed.I+1]++
		deg[ed.J]++
	}
	for i := 0; i < n; i++ {
		deg[i] += int32(nw.Indptr[i+1])
		nw.Indptr[i+1] += nw.Indptr[i]
	}
	sc.next = grow(sc.next, n)
	next := sc.next
	copy(next, nw.Indptr[:n])
	idx, wts := nw.Indices, nw.Weights
	for _, ed := range edges {
		p := next[ed.I]
		idx[p], wts[p] = ed.J, ed.W
		next[ed.I] = p + 1
	}
	for i := 0; i < n; i++ {
		lo, hi := nw.Indptr[i], nw.Indptr[i+1]
		if hi-lo < 2 {
			continue
		}
		if hi-lo > 32 {
			r := sc.rows[:0]
			for p := lo; p < hi; p++ {
				r = append(r, fc.Edge{J: idx[p], W: wts[p]})
			}
			slices.SortFunc(r, func(a, b fc.Edge) int { return int(a.J) - int(b.J) })
			for q, ed := range r {
				idx[lo+uint64(q)], wts[lo+uint64(q)] = ed.J, ed.W
			}
			sc.rows = r
			continue
		}
		for p := lo + 1; p < hi; p++ {
			for q := p; q > lo && idx[q] < idx[q-1]; q-- {
				idx[q], idx[q-1] = idx[q-1], idx[q]
				wts[q], wts[q-1] = wts[q-1], wts[q]
			}
		}
	}
	return nw, deg
}
