package fc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Sliding-window Pearson networks by rank-2s updates of the windows' cross-products
// (docs/algorithms.md, "Dynamic connectivity", incremental windows).
//
// Every series is centred on its whole-scan mean (conditioning: the cross-products then hold
// no large common term) and kept in float64. For a pair (i, j) the window's cross-product
// S_ij = Σ_t x_it x_jt over the window's volumes moves to the next window by adding the s
// entering volumes' products and subtracting the s leaving ones' (a rank-2s update, 2s
// multiply-adds per pair instead of w). With the window's row sums Σ_i and centred sums of
// squares D_i² = Σ_t (x_it − m_i)², both computed per window and row from the series,
//
//	c_ij = S_ij − Σ_i Σ_j / w,   r_ij = c_ij / (D_i D_j),
//
// and r_ij > θ ⇔ c_ij > θ D_i D_j (D > 0), tested in the same loop as the update. Pairs are
// processed tile by tile: one tile's accumulators stay in cache (registers on a GPU) while
// the tile sweeps every window of a chunk, so memory traffic is the series and the emitted
// edges only. S is recomputed from the series at the start of every chunk (re-basing), which
// bounds rounding drift to one chunk's updates and lets the caller size chunks by the memory
// their edges take. A row constant within a window (exact equality of its float32 values, as
// CheckSeries tests it) has no edge in that window.

// SlidingJob is one chunk of windows: window k (First ≤ k < First+Count) covers the columns
// [k·Step, k·Step+Window) of the prepared series.
type SlidingJob struct {
	Window, Step int
	First, Count int
	// Threshold θ ≥ 0: an edge is r > θ, or |r| > θ with Abs; its weight is r (|r| with Abs).
	Threshold float64
	// Thresholds, when not nil, is every window's own θ (Thresholds[c] for window First+c;
	// len ≥ Count), in place of Threshold: the density and significance modes cut each window
	// at its own value (docs/algorithms.md, "Dynamic connectivity").
	Thresholds []float64
	Abs        bool
	// MaxEdges > 0 bounds the edges of the chunk: past it SlidingEdges stops with
	// ErrSlidingBudget and the caller retries with fewer windows.
	MaxEdges int64
}

// ErrSlidingBudget says a chunk's edges passed SlidingJob.MaxEdges.
var ErrSlidingBudget = errors.New("sliding windows: the chunk's edges exceed its budget")

// Sliding is implemented by backends that compute sliding-window Pearson networks by
// incremental updates (the CUDA backend on the device, the CPU backend through SlidingCPU).
// PrepareSliding takes the N×T series (row-major; every value finite) and keeps what the
// chunks need; SlidingEdges sets out[k−First] (len(out) ≥ Count) to the edges of window k,
// First ≤ k < First+Count (any order within a window; I < J), and checks ctx between tiles.
// The slices may share a buffer of the backend's that stays valid until its next
// SlidingEdges or Close. Close frees the prepared series with the rest.
type Sliding interface {
	PrepareSliding(ctx context.Context, x []float32, n, t int) error
	SlidingEdges(ctx context.Context, job SlidingJob, out [][]Edge) error
}

// SlidingOverlap is implemented by Sliding backends that may run a chunk while the caller
// reads the previous chunk's edges: their SlidingEdges leaves the host's cores free (a GPU)
// and the slices it sets stay valid until the second next SlidingEdges (not only the next).
// SlidingOverlaps reports whether that holds for this backend.
type SlidingOverlap interface {
	SlidingOverlaps() bool
}

// WindowCSR is one window's network as SlidingCSR returns it: the strict-upper-triangle CSR
// of network.Network (Indptr n+1 row starts, Indices columns j > i increasing within a row,
// Weights r) with every node's degree and the triangles through it (each triangle i < j < k
// counted at all three corners), from which the window's C_p follows without walking the rows.
type WindowCSR struct {
	Indptr    []uint64
	Indices   []uint32
	Weights   []float32
	Degree    []uint32
	Triangles []uint32
}

// SlidingCSR is implemented by Sliding backends that also sort each window's edges into its
// CSR network and count its degrees and triangles where the edges are made (a GPU), so that
// only these come back: docs/algorithms.md, "Dynamic connectivity", per-window measures. Its
// slices stay valid as SlidingEdges' do (SlidingOverlap). It fails with ErrSlidingRows, having
// set nothing, when a window's longest row is too long for its sort; the caller then takes the
// chunk's edges from SlidingEdges. ErrSlidingBudget is as for SlidingEdges.
type SlidingCSR interface {
	SlidingCSR(ctx context.Context, job SlidingJob, out []WindowCSR) error
}

// WindowTriangles is implemented by backends that count the triangles through every node of a
// window's strict-upper-triangle CSR network (rows sorted) on a device: for the windows whose
// CSR the host builds (density: selected from their candidates), where counting them is most
// of the host's work per window. tri gets N counts, each triangle counted at its three corners.
type WindowTriangles interface {
	WindowTriangles(ctx context.Context, indptr []uint64, indices []uint32, tri []uint32) error
}

// ErrSlidingRows is SlidingCSR's answer for a chunk with a row too long to sort there.
var ErrSlidingRows = errors.New("sliding windows: a window's row is too long for the device's sort")

// Validate reports a job the prepared series cannot run.
func (j *SlidingJob) Validate(t int) error {
	if j.Window < 3 || j.Step < 1 || j.First < 0 || j.Count < 1 || (j.First+j.Count-1)*j.Step+j.Window > t {
		return fmt.Errorf("sliding windows: window %d, step %d, windows %d…%d do not fit %d volumes", j.Window, j.Step, j.First, j.First+j.Count-1, t)
	}
	if j.Thresholds != nil && len(j.Thresholds) < j.Count {
		return fmt.Errorf("sliding windows: %d thresholds for %d windows", len(j.Thresholds), j.Count)
	}
	for c := 0; c < j.Count; c++ {
		// θ < 0 is refused: θ·D_i·D_j with a constant row's D = +Inf would then be −Inf.
		if th := j.ThresholdOf(c); !(th >= 0) || math.IsInf(th, 1) {
			return fmt.Errorf("sliding windows: threshold %g: want a finite θ ≥ 0", th)
		}
	}
	return nil
}

// ThresholdOf is the θ of window First+c: Thresholds[c], or Threshold when Thresholds is nil.
func (j *SlidingJob) ThresholdOf(c int) float64 {
	if j.Thresholds != nil {
		return j.Thresholds[c]
	}
	return j.Threshold
}

// SlidingCPU is the incremental sliding-window computation on the host, over Workers
// goroutines (0: GOMAXPROCS).
type SlidingCPU struct {
	Workers int
	n, t    int
	xc      []float64 // centred series, column-major: xc[t·N + i]
	xr      []float64 // the same, row-major: xr[i·T + t]
	run     []int32   // run[t·N + i]: equal values of row i ending at column t
}

// Sliding tile of the CPU: slideRows × slideCols float64 accumulators (32 KiB, an L1 cache).
const (
	slideRows = 32
	slideCols = 128
)

// PrepareSliding centres and transposes the series (float64, N·T·8 bytes) and records the
// runs of equal values that make a row constant within a window.
func (s *SlidingCPU) PrepareSliding(ctx context.Context, x []float32, n, t int) error {
	if n < 2 || t < 3 || len(x) != n*t {
		return fmt.Errorf("sliding windows: %d values for %d series of %d volumes", len(x), n, t)
	}
	s.n, s.t = n, t
	s.xc = make([]float64, n*t)
	s.xr = make([]float64, n*t)
	s.run = make([]int32, n*t)
	for i := 0; i < n; i++ {
		row := x[i*t : (i+1)*t]
		var sum float64
		for _, v := range row {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("sliding windows: series %d has a non-finite value", i)
			}
			sum += float64(v)
		}
		mean := sum / float64(t)
		for k, v := range row {
			s.xc[k*n+i] = float64(v) - mean
			s.xr[i*t+k] = s.xc[k*n+i]
			if k > 0 && v == row[k-1] {
				s.run[k*n+i] = s.run[(k-1)*n+i] + 1
			} else {
				s.run[k*n+i] = 1
			}
		}
	}
	return ctx.Err()
}

// Close drops the prepared series.
func (s *SlidingCPU) Close() error {
	s.xc, s.xr, s.run = nil, nil, nil
	return nil
}

// windowStats fills, for window k of the job (c = k − First), the row values the test needs:
// a[c·N+i] = Σ_i/√w, d[c·N+i] = D_i and b[c·N+i] = θ·D_i, with D = b = +Inf for a row
// constant in the window (then c > b·d and |c| > b·d never hold: +Inf or NaN on the right).
func windowStats(xc []float64, run []int32, n int, job *SlidingJob, a, d, b []float64, lo, hi int) {
	w := job.Window
	rw := 1 / math.Sqrt(float64(w))
	for c := 0; c < job.Count; c++ {
		s0 := (job.First + c) * job.Step
		theta := job.ThresholdOf(c)
		for i := lo; i < hi; i++ {
			p := c*n + i
			if run[(s0+w-1)*n+i] >= int32(w) {
				a[p], d[p], b[p] = 0, math.Inf(1), math.Inf(1)
				continue
			}
			var sum float64
			for q := s0; q < s0+w; q++ {
				sum += xc[q*n+i]
			}
			m := sum / float64(w)
			var ss float64
			for q := s0; q < s0+w; q++ {
				e := xc[q*n+i] - m
				ss += e * e
			}
			a[p], d[p] = sum*rw, math.Sqrt(ss)
			b[p] = theta * d[p]
		}
	}
}

// SlidingEdges computes one chunk of windows (see Sliding).
func (s *SlidingCPU) SlidingEdges(ctx context.Context, job SlidingJob, out [][]Edge) error {
	if s.xc == nil {
		return errors.New("sliding windows: series not prepared")
	}
	if err := job.Validate(s.t); err != nil {
		return err
	}
	if len(out) < job.Count {
		return fmt.Errorf("sliding windows: %d edge lists for %d windows", len(out), job.Count)
	}
	n := s.n
	workers := s.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	a := make([]float64, job.Count*n)
	d := make([]float64, job.Count*n)
	b := make([]float64, job.Count*n)
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			windowStats(s.xc, s.run, n, &job, a, d, b, lo, hi)
		}(lo, min(lo+per, n))
	}
	wg.Wait()

	// Tiles of the strict upper triangle, row band by row band.
	type tile struct{ i0, j0 int }
	var tiles []tile
	for i0 := 0; i0 < n; i0 += slideRows {
		for j0 := i0 / slideCols * slideCols; j0 < n; j0 += slideCols {
			if j0+slideCols > i0+1 { // some j > i in the tile
				tiles = append(tiles, tile{i0, j0})
			}
		}
	}
	var next, total atomic.Int64
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	results := make([][][]Edge, workers)
	for wk := 0; wk < workers; wk++ {
		wg.Add(1)
		go func(wk int) {
			defer wg.Done()
			acc := make([]float64, slideRows*slideCols)
			hits := make([]int32, slideCols/4)
			edges := make([][]Edge, job.Count)
			for {
				k := next.Add(1) - 1
				if k >= int64(len(tiles)) {
					break
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				tl := tiles[k]
				before := 0
				for _, e := range edges {
					before += len(e)
				}
				s.sweepTile(&job, acc, tl.i0, min(tl.i0+slideRows, n), tl.j0, min(tl.j0+slideCols, n), a, d, b, edges, hits)
				after := 0
				for _, e := range edges {
					after += len(e)
				}
				if t := total.Add(int64(after - before)); job.MaxEdges > 0 && t > job.MaxEdges {
					fail(ErrSlidingBudget)
					return
				}
			}
			results[wk] = edges
		}(wk)
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	for c := range out[:job.Count] {
		out[c] = out[c][:0]
		for _, edges := range results {
			out[c] = append(out[c], edges[c]...)
		}
	}
	return nil
}

// sweepTile runs tile rows [i0, i1) × columns [j0, j1) through every window of the chunk:
// S from the first window's volumes (rank-1 updates), then per window the rank-2s update fused
// with the test (slideUpdate, slideTest: AVX2 on amd64). Only pairs j > i are held (on a
// diagonal tile the rest of a row is never touched). hits is slideTest's scratch.
func (s *SlidingCPU) sweepTile(job *SlidingJob, acc []float64, i0, i1, j0, j1 int, a, d, b []float64, edges [][]Edge, hits []int32) {
	n, w, step := s.n, job.Window, job.Step
	h, wd := i1-i0, j1-j0
	lo := func(ii int) int { return max(0, i0+ii-j0+1) }
	for ii := 0; ii < h; ii++ {
		clear(acc[ii*slideCols+lo(ii) : ii*slideCols+wd])
	}
	// Two volumes per pass over the tile (x·v − (−y)·u: the update kernel's two products).
	s0 := job.First * step
	for q := s0; q < s0+w; q += 2 {
		col := s.xc[q*n : (q+1)*n]
		next, y := col, 0.0
		for ii := 0; ii < h; ii++ {
			jl := lo(ii)
			if q+1 < s0+w {
				next, y = s.xc[(q+1)*n:(q+2)*n], -s.xc[(q+1)*n+i0+ii]
			}
			slideUpdate(acc[ii*slideCols+jl:ii*slideCols+wd], col[j0+jl:j1], next[j0+jl:j1], col[i0+ii], y)
		}
	}
	for c := 0; c < job.Count; c++ {
		var add, sub []float64
		if c > 0 {
			// Volumes entering: prev+w … prev+w+step−1; leaving: prev … prev+step−1. All but the
			// last pair of updates here, the last fused with the test below.
			prev := (job.First + c - 1) * step
			for q := 0; q < step-1; q++ {
				add, sub = s.xc[(prev+w+q)*n:(prev+w+q+1)*n], s.xc[(prev+q)*n:(prev+q+1)*n]
				for ii := 0; ii < h; ii++ {
					jl := lo(ii)
					slideUpdate(acc[ii*slideCols+jl:ii*slideCols+wd], add[j0+jl:j1], sub[j0+jl:j1], add[i0+ii], sub[i0+ii])
				}
			}
			add, sub = s.xc[(prev+w+step-1)*n:(prev+w+step)*n], s.xc[(prev+step-1)*n:(prev+step)*n]
		}
		ac, dc, bc := a[c*n:(c+1)*n], d[c*n:(c+1)*n], b[c*n:(c+1)*n]
		for ii := 0; ii < h; ii++ {
			i := i0 + ii
			jl := lo(ii)
			row := acc[ii*slideCols+jl : ii*slideCols+wd]
			vn, vo, xn, xo := row, row, 0.0, 0.0 // window 0: S as re-based (adding 0 is exact)
			if c > 0 {
				vn, vo, xn, xo = add[j0+jl:j1], sub[j0+jl:j1], add[i], sub[i]
			}
			bi := bc[i]
			if math.IsInf(bi, 1) { // constant in this window: update only
				if c > 0 {
					slideUpdate(row, vn, vo, xn, xo)
				}
				continue
			}
			ai, di := ac[i], dc[i]
			as, ds := ac[j0+jl:j1], dc[j0+jl:j1]
			jbase := j0 + jl
			slideTest(row, vn, vo, as, ds, xn, xo, ai, bi, job.Abs, hits, func(jj int, cv float64) {
				edges[c] = append(edges[c], edge(i, jbase+jj, cv, di*ds[jj], job.Abs))
			})
		}
	}
}

// edge is the pair (i, j) with weight c/(D_i D_j), or its absolute value.
func edge(i, j int, c, dd float64, abs bool) Edge {
	r := c / dd
	if abs {
		r = math.Abs(r)
	}
	return Edge{I: uint32(i), J: uint32(j), W: float32(r)}
}
