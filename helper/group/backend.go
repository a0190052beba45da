// Package group builds the group-mean functional network of several subjects on one grid, as
// Wang et al. (2009) averaged 197 subjects' correlation matrices before thresholding. Two means:
//
//   - Mean r: with every subject's rows normalised (zero mean, unit norm), the mean of r over
//     S subjects is one product of the subjects' series concatenated along time and scaled by
//     1/√S, so the ordinary backends build it in one pass (Concatenate).
//   - Mean Fisher z: r̄ = tanh((1/S) Σ_s atanh r_s). It is no single product, so the FisherZ
//     backend visits the driver's blocks row panel by row panel and, inside each block, the
//     subjects one after another (subjects inner), accumulating atanh r in float64 before the
//     block's threshold, histogram or top-K is applied — the blocking a GPU backend would use
//     with every subject's normalised series resident on the device.
//
// Either way fc.Build's threshold modes (strength, exact density, significance, k nearest
// neighbours) and sweeps apply unchanged to the group mean.
package group

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/hubscope/hubscope/helper/fc"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// ZClamp bounds |r| before atanh: a subject's r of exactly ±1 (two identical voxels) would
// give an infinite z. atanh(1 − 1e-7) ≈ 8.4, far beyond any physiological z.
const ZClamp = 1 - 1e-7

// FisherZ is an fc.Backend whose pair value is the mean Fisher z of S subjects, back on the r
// scale: tanh((1/S) Σ_s atanh r_s). Prepare takes the subjects' series concatenated along
// time (N × S·L, subject s in columns [s·L, (s+1)·L) of every row) and normalises each
// subject's part of each row separately (ranks first for Spearman).
type FisherZ struct {
	S       int
	workers int
	rows    int
	n, l    int         // nodes, time points per subject
	u       [][]float32 // per subject: N×l unit rows
	acc     []float64   // a block's Σ_s atanh r_s
	prod    []float32   // a block's r of one subject
}

// NewFisherZ returns a backend for the mean Fisher z of s subjects.
func NewFisherZ(s int) *FisherZ { return &FisherZ{S: s, workers: runtime.GOMAXPROCS(0)} }

func (b *FisherZ) Name() string { return "cpu" }

func (b *FisherZ) Device() string {
	return fmt.Sprintf("%d workers, group mean Fisher z of %d subjects", b.workers, b.S)
}

// SetBlockRows forces the block height (0 restores the default).
func (b *FisherZ) SetBlockRows(h int) { b.rows = h }

// BlockRows keeps a block's float64 accumulator (rows × rows) near 2 MiB.
func (b *FisherZ) BlockRows() int {
	if b.rows > 0 {
		return b.rows
	}
	h := 512
	if b.n > 0 {
		h = min(h, b.n)
	}
	return max(h, 1)
}

// Prepare splits x (N × S·L) into the subjects' parts and normalises each row of each part.
func (b *FisherZ) Prepare(ctx context.Context, x []float32, n, l int, m fc.Measure) error {
	if b.S < 1 || l%b.S != 0 {
		return fmt.Errorf("group: %d time points do not split into %d subjects", l, b.S)
	}
	if m == fc.Kendall {
		return fmt.Errorf("group: the mean Fisher z is defined for Pearson and Spearman, not Kendall's τ")
	}
	ls := l / b.S
	if ls < 3 {
		return fmt.Errorf("group: %d time points per subject; need at least 3", ls)
	}
	b.n, b.l = n, ls
	b.u = make([][]float32, b.S)
	for s := range b.u {
		b.u[s] = make([]float32, n*ls)
	}
	var firstErr error
	var mu sync.Mutex
	parallel(b.workers, n, func(i0, i1 int) {
		var rk fc.Ranker
		tmp := make([]float32, ls)
		for i := i0; i < i1; i++ {
			for s := 0; s < b.S; s++ {
				d := x[i*l+s*ls : i*l+(s+1)*ls]
				if bad := badSeries(d); bad != "" {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("group: node %d %s in subject %d (drop it before the group mean)", i, bad, s+1)
					}
					mu.Unlock()
					return
				}
				if m == fc.Spearman {
					rk.Ranks(tmp, d)
					d = tmp
				}
				fc.NormalizeRow(b.u[s][i*ls:(i+1)*ls], d)
			}
		}
	})
	if firstErr != nil {
		b.u = nil
		return firstErr
	}
	return ctx.Err()
}

// badSeries says what makes one subject's series of a node unusable ("is constant", "holds a
// NaN or an infinity"), or "" when it is usable. It is Prepare's whole check: fc.Build leaves
// the rows to it (ChecksSeries), so the cohort's matrix is read once, per subject, instead of
// once more as whole rows.
func badSeries(d []float32) string {
	for _, v := range d {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return "holds a NaN or an infinity"
		}
	}
	for _, v := range d[1:] {
		if v != d[0] {
			return ""
		}
	}
	return "is constant"
}

// ChecksSeries implements fc.SeriesChecker: Prepare refuses every node that is constant or
// not finite in any subject, which covers fc.CheckSeries's test of the whole row.
func (b *FisherZ) ChecksSeries() bool { return true }

// parallel runs f over [0, n) in contiguous ranges on up to w goroutines.
func parallel(w, n int, f func(i0, i1 int)) {
	w = max(1, min(w, n))
	var wg sync.WaitGroup
	for p := 0; p < w; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n*p/w, n*(p+1)/w)
		}()
	}
	wg.Wait()
}

// values fills vals (h×w) with the block's mean-z values on the r scale: for every subject
// one product of the block's row panel with its column panel (float32 GEMM), then atanh of
// every value accumulated in float64, in parallel over the block's rows (subjects inner).
func (b *FisherZ) values(ctx context.Context, blk fc.Block, vals []float32) {
	h, w, l, S := blk.I1-blk.I0, blk.J1-blk.J0, b.l, b.S
	if cap(b.acc) < h*w {
		b.acc = make([]float64, h*w)
		b.prod = make([]float32, h*w)
	}
	acc, prod := b.acc[:h*w], b.prod[:h*w]
	clear(acc)
	for s := 0; s < S; s++ {
		if ctx.Err() != nil {
			return
		}
		u := b.u[s]
		blas32.Gemm(blas.NoTrans, blas.Trans, 1,
			blas32.General{Rows: h, Cols: l, Stride: l, Data: u[blk.I0*l : blk.I1*l]},
			blas32.General{Rows: w, Cols: l, Stride: l, Data: u[blk.J0*l : blk.J1*l]},
			0, blas32.General{Rows: h, Cols: w, Stride: w, Data: prod})
		parallel(b.workers, h, func(r0, r1 int) {
			for k := r0 * w; k < r1*w; k++ {
				rv := math.Max(-ZClamp, math.Min(ZClamp, float64(prod[k])))
				acc[k] += math.Atanh(rv)
			}
		})
	}
	parallel(b.workers, h, func(r0, r1 int) {
		for k := r0 * w; k < r1*w; k++ {
			vals[k] = float32(math.Tanh(acc[k] / float64(S)))
		}
	})
}

// Run computes each block's values and applies op to them (fc.Backend's contract).
func (b *FisherZ) Run(ctx context.Context, blocks []fc.Block, op fc.Op, sink func(*fc.BlockResult) error) error {
	if err := op.Validate(); err != nil {
		return err
	}
	if b.u == nil {
		return fmt.Errorf("group: Run before Prepare")
	}
	var vals []float32
	var hist []uint64
	if op.Kind == fc.OpHistogram {
		hist = make([]uint64, op.Bins)
	}
	for _, blk := range blocks {
		if err := blk.Check(b.n); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		h, w := blk.I1-blk.I0, blk.J1-blk.J0
		if cap(vals) < h*w {
			vals = make([]float32, h*w)
		}
		vals = vals[:h*w]
		b.values(ctx, blk, vals)
		if err := ctx.Err(); err != nil {
			return err
		}
		res := &fc.BlockResult{Block: blk}
		switch op.Kind {
		case fc.OpEdges:
			t := op.Threshold32()
			for r := 0; r < h; r++ {
				i := blk.I0 + r
				for c := 0; c < w; c++ {
					j := blk.J0 + c
					if j <= i {
						continue
					}
					if v := op.Value(vals[r*w+c]); v >= t {
						res.Edges = append(res.Edges, fc.Edge{I: uint32(i), J: uint32(j), W: v})
					}
				}
			}
		case fc.OpHistogram:
			clear(hist)
			for r := 0; r < h; r++ {
				i := blk.I0 + r
				for c := 0; c < w; c++ {
					if blk.J0+c > i {
						hist[op.BinOf(op.Value(vals[r*w+c]))]++
					}
				}
			}
			res.Hist = hist
		case fc.OpTopK:
			res.Edges = topK(blk, vals, &op)
		}
		if err := sink(res); err != nil {
			return err
		}
	}
	return nil
}

// topK is OpTopK on a dense block: every row's K best columns and every column's K best rows
// (larger value first, ties to the smaller partner index), each pair once.
func topK(blk fc.Block, vals []float32, op *fc.Op) []fc.Edge {
	h, w := blk.I1-blk.I0, blk.J1-blk.J0
	keep := map[[2]int]float32{}
	type cand struct {
		partner int
		v       float32
	}
	best := func(cs []cand) []cand {
		sort.Slice(cs, func(a, b int) bool {
			if cs[a].v != cs[b].v {
				return cs[a].v > cs[b].v
			}
			return cs[a].partner < cs[b].partner
		})
		return cs[:min(op.K, len(cs))]
	}
	var cs []cand
	for r := 0; r < h; r++ {
		i := blk.I0 + r
		cs = cs[:0]
		for c := 0; c < w; c++ {
			if j := blk.J0 + c; j > i {
				cs = append(cs, cand{j, op.Value(vals[r*w+c])})
			}
		}
		for _, x := range best(cs) {
			keep[[2]int{i, x.partner}] = x.v
		}
	}
	for c := 0; c < w; c++ {
		j := blk.J0 + c
		cs = cs[:0]
		for r := 0; r < h; r++ {
			if i := blk.I0 + r; j > i {
				cs = append(cs, cand{i, op.Value(vals[r*w+c])})
			}
		}
		for _, x := range best(cs) {
			keep[[2]int{x.partner, j}] = x.v
		}
	}
	es := make([]fc.Edge, 0, len(keep))
	for p, v := range keep {
		es = append(es, fc.Edge{I: uint32(p[0]), J: uint32(p[1]), W: v})
	}
	return es
}

// Close frees the prepared series.
func (b *FisherZ) Close() error {
	b.u = nil
	return nil
}
