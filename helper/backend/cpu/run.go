package cpu

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hubscope/hubscope/helper/fc"
)

// stripBytes is the size of the packed row strip a worker keeps in its L2 cache while the
// column panels stream past it.
const stripBytes = 192 << 10

// Run processes the blocks one after another; inside a block, workers take row strips (all
// of the block's columns) from a shared counter, so a block's result is complete when they
// are done. ctx is checked between strips (milliseconds apart).
func (b *Backend) Run(ctx context.Context, blocks []fc.Block, op fc.Op, sink func(*fc.BlockResult) error) error {
	if b.n == 0 {
		return fmt.Errorf("cpu: Run before Prepare")
	}
	if err := op.Validate(); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	for _, blk := range blocks {
		if err := blk.Check(b.n); err != nil {
			return fmt.Errorf("cpu: %w", err)
		}
	}
	ws := make([]*worker, b.workers)
	for i := range ws {
		ws[i] = b.newWorker(&op)
	}
	// Two result buffers: the sink digests block k (on its own goroutine) while the workers
	// compute block k+1, so the host-side assembly hides behind the arithmetic.
	var res [2]*result
	for i := range res {
		res[i] = &result{}
		if op.Kind == fc.OpHistogram {
			res[i].Hist = make([]uint64, op.Bins)
		}
	}
	done := make(chan error, 1)
	pending := false
	wait := func() error {
		if !pending {
			return nil
		}
		pending = false
		return <-done
	}
	for k, blk := range blocks {
		err := ctx.Err()
		if err == nil {
			err = b.runBlock(ctx, blk, ws)
		}
		if err != nil {
			wait() // never leave a sink running after Run returns
			return err
		}
		r := res[k%2]
		b.merge(r, blk, ws)
		if err := wait(); err != nil {
			return err
		}
		pending = true
		go func() { done <- sink(&r.BlockResult) }()
	}
	return wait()
}

// worker holds one goroutine's scratch and partial results for the current block.
type worker struct {
	b    *Backend
	op   *fc.Op
	tile [mr * nr]float32
	t32  float32 // OpEdges: keep ⇔ value ≥ t32; OpHistogram: bin 0 fast path ⇔ value < t32
	abs  bool

	edges []fc.Edge
	hist  []uint64
	below uint64
	hmin  int // touched bins of hist: [hmin, hmax], so merging costs the values' spread, not Bins
	hmax  int
	bins  binner
	rows  fc.TopK // OpTopK: the strip's rows
	cols  fc.TopK // OpTopK: the block's columns
	row0  int     // first row of the current strip
}

func (b *Backend) newWorker(op *fc.Op) *worker {
	w := &worker{b: b, op: op, abs: op.Abs}
	switch op.Kind {
	case fc.OpEdges:
		w.t32 = op.Threshold32()
	case fc.OpHistogram:
		lo := fc.Op{Threshold: op.Lo, Inclusive: true}
		w.t32 = lo.Threshold32() // v < t32 ⇔ v < Lo ⇔ BinOf(v) = 0 without computing it
		w.hist = make([]uint64, op.Bins)
		w.hmin, w.hmax = op.Bins, -1
		w.bins = newBinner(op)
	}
	return w
}

func (b *Backend) runBlock(ctx context.Context, blk fc.Block, ws []*worker) error {
	p0, p1 := blk.I0/mr, (blk.I1-1)/mr+1 // mr-row panels covering the block's rows
	per := stripBytes / (mr * b.l * 4)
	if b.m == fc.Kendall {
		per = stripBytes / (mr * b.words * 16)
	}
	per = max(1, per)
	strips := (p1 - p0 + per - 1) / per
	for _, w := range ws {
		w.edges = w.edges[:0]
		if w.op.Kind == fc.OpTopK {
			w.cols.Reset(blk.J1-blk.J0, w.op.K)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				s := int(next.Add(1)) - 1
				if s >= strips {
					return
				}
				q0 := p0 + s*per
				w.strip(blk, q0, min(q0+per, p1))
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// strip computes the block's values for the rows of mr-panels [q0, q1) against all its
// columns, one mr×nr tile at a time, and folds each tile into the worker's result at once.
func (w *worker) strip(blk fc.Block, q0, q1 int) {
	b := w.b
	diag := blk.I0 == blk.J0
	r0, r1 := max(q0*mr, blk.I0), min(q1*mr, blk.I1)
	if w.op.Kind == fc.OpTopK {
		w.row0 = r0
		w.rows.Reset(r1-r0, w.op.K)
	}
	l := b.l
	t := w.t32 // OpTopK: set per tile from the heaps (topKFloor)
	for c := blk.J0 / nr; c*nr < blk.J1; c++ {
		cb := c * nr
		for p := q0; p < q1; p++ {
			ra := p * mr
			if diag && cb+nr-1 <= ra { // every j ≤ i: below the diagonal
				continue
			}
			if w.op.Kind == fc.OpTopK {
				t = w.topKFloor(blk, ra, cb, r0, r1)
			}
			var m0, m1 uint64
			if b.m == fc.Kendall {
				w.kendallTile(blk, ra, cb)
				m0, m1 = tileMask(&w.tile, t, w.abs)
			} else if l <= maxSingleK {
				m0, m1 = kernelMask(l, b.pa[p*mr*l:(p+1)*mr*l], b.pb[c*nr*l:(c+1)*nr*l], &w.tile, t, w.abs)
			} else {
				w.longTile(b.pa[p*mr*l:(p+1)*mr*l], b.pb[c*nr*l:(c+1)*nr*l])
				m0, m1 = tileMask(&w.tile, t, w.abs)
			}
			v0, v1 := validMask(blk, ra, cb, diag)
			w.epilogue(blk, ra, cb, m0&v0, m1&v1, v0, v1)
		}
	}
	if w.op.Kind == fc.OpTopK {
		w.rows.Flush(func(s int, nb fc.Neighbour) {
			w.edges = append(w.edges, fc.Edge{I: uint32(r0 + s), J: nb.U, W: nb.W})
		})
	}
}

// Long series are summed in chunks of chunkK time points, the chunks' float32 tiles added in
// float64: the float32 rounding error of a dot product grows with the number of terms, and
// for L ≈ 1500 a single float32 chain drifts by ~1e-6 from the exact value, chunking keeps it
// near 1e-7. Series up to maxSingleK points take the fused single-chain kernel.
const (
	maxSingleK = 256
	chunkK     = 128
)

func (w *worker) longTile(a, b []float32) {
	l := w.b.l
	var acc [mr * nr]float64
	for k0 := 0; k0 < l; k0 += chunkK {
		k1 := min(k0+chunkK, l)
		kernel(k1-k0, a[k0*mr:k1*mr], b[k0*nr:k1*nr], &w.tile)
		for i, v := range w.tile {
			acc[i] += float64(v)
		}
	}
	for i, v := range acc {
		w.tile[i] = float32(v)
	}
}

// topKFloor is the smallest value that can still enter a heap of the tile's rows or columns:
// the weakest root among full heaps, −∞ while any heap has room. Values below it are masked
// out by the kernel; equal ones pass, since a smaller index may still win the tie.
func (w *worker) topKFloor(blk fc.Block, ra, cb, r0, r1 int) float32 {
	t := float32(math.Inf(1))
	for i := max(ra, r0); i < min(ra+mr, r1); i++ {
		t = min(t, w.rows.Floor(i-r0))
	}
	for j := max(cb, blk.J0); j < min(cb+nr, blk.J1); j++ {
		t = min(t, w.cols.Floor(j-blk.J0))
	}
	return t
}

// kendallTile fills the tile with τ-b = (z_i·z_j)/sqrt(n_i n_j) from exact popcount dots.
// When neither series has ties (n = P, every sign ±1, the neg plane the complement of pos
// within P bits) z_i·z_j = P − 2·popcnt(pos_i ⊕ pos_j): one popcount per word instead of two.
func (w *worker) kendallTile(blk fc.Block, ra, cb int) {
	b := w.b
	nw := b.words
	full := int64(fc.SignPairs(b.l))
	for i := max(ra, blk.I0); i < min(ra+mr, blk.I1); i++ {
		pi, ni := b.pos[i*nw:(i+1)*nw], b.neg[i*nw:(i+1)*nw]
		j, j1 := max(cb, blk.J0, i+1), min(cb+nr, blk.J1)
		if b.cnt[i] == full { // four tie-free partners share each load of pos_i
			for ; j+4 <= j1 && b.cnt[j] == full && b.cnt[j+1] == full && b.cnt[j+2] == full && b.cnt[j+3] == full; j += 4 {
				c := xorCount4(pi, b.pos[j*nw:(j+1)*nw], b.pos[(j+1)*nw:(j+2)*nw], b.pos[(j+2)*nw:(j+3)*nw], b.pos[(j+3)*nw:(j+4)*nw])
				for q := 0; q < 4; q++ {
					w.tile[(i-ra)*nr+j+q-cb] = fc.KendallTau(full-2*c[q], full, full)
				}
			}
		}
		for ; j < j1; j++ {
			pj := b.pos[j*nw : (j+1)*nw]
			var dot int64
			if b.cnt[i] == full && b.cnt[j] == full {
				dot = full - 2*xorCount(pi, pj)
			} else {
				dot = signDot(pi, ni, pj, b.neg[j*nw:(j+1)*nw])
			}
			w.tile[(i-ra)*nr+j-cb] = fc.KendallTau(dot, b.cnt[i], b.cnt[j])
		}
	}
}

// xorCount4 is xorCount of a against four vectors at once.
func xorCount4(a, b0, b1, b2, b3 []uint64) (c [4]int64) {
	b0, b1, b2, b3 = b0[:len(a)], b1[:len(a)], b2[:len(a)], b3[:len(a)]
	var c0, c1, c2, c3 int
	for k, x := range a {
		c0 += bits.OnesCount64(x ^ b0[k])
		c1 += bits.OnesCount64(x ^ b1[k])
		c2 += bits.OnesCount64(x ^ b2[k])
		c3 += bits.OnesCount64(x ^ b3[k])
	}
	return [4]int64{int64(c0), int64(c1), int64(c2), int64(c3)}
}

// xorCount is popcnt(a ⊕ b) over the words, four at a time.
func xorCount(a, b []uint64) int64 {
	b = b[:len(a)]
	var c0, c1, c2, c3 int
	k := 0
	for ; k+4 <= len(a); k += 4 {
		c0 += bits.OnesCount64(a[k] ^ b[k])
		c1 += bits.OnesCount64(a[k+1] ^ b[k+1])
		c2 += bits.OnesCount64(a[k+2] ^ b[k+2])
		c3 += bits.OnesCount64(a[k+3] ^ b[k+3])
	}
	for ; k < len(a); k++ {
		c0 += bits.OnesCount64(a[k] ^ b[k])
	}
	return int64(c0 + c1 + c2 + c3)
}

// signDot is z_i·z_j over bit planes. Since pos and neg of one vector are disjoint,
// (p_i∧p_j)∨(n_i∧n_j) counts agreeing pairs and (p_i∧n_j)∨(n_i∧p_j) disagreeing ones.
func signDot(pi, ni, pj, nj []uint64) int64 {
	var agree, disagree int
	nj = nj[:len(pi)]
	pj = pj[:len(pi)]
	ni = ni[:len(pi)]
	for k, a := range pi {
		agree += bits.OnesCount64(a&pj[k] | ni[k]&nj[k])
		disagree += bits.OnesCount64(a&nj[k] | ni[k]&pj[k])
	}
	return int64(agree - disagree)
}

const (
	full0 = ^uint64(0)            // rows 0–3 of a tile
	full1 = uint64(1)<<(2*nr) - 1 // rows 4–5
)

// validMask marks the tile entries (bit 16·r+q as in the kernel's masks) that are pairs of the
// block: inside its rows and columns and, on a diagonal block, j > i.
func validMask(blk fc.Block, ra, cb int, diag bool) (v0, v1 uint64) {
	if ra >= blk.I0 && ra+mr <= blk.I1 && cb >= blk.J0 && cb+nr <= blk.J1 && (!diag || cb > ra+mr-1) {
		return full0, full1
	}
	for r := 0; r < mr; r++ {
		i := ra + r
		if i < blk.I0 || i >= blk.I1 {
			continue
		}
		lo, hi := max(cb, blk.J0)-cb, min(cb+nr, blk.J1)-cb
		if diag {
			lo = max(lo, i+1-cb)
		}
		if lo >= hi {
			continue
		}
		bits := (uint64(1)<<hi - 1) &^ (uint64(1)<<lo - 1)
		if r < 4 {
			v0 |= bits << (nr * r)
		} else {
			v1 |= bits << (nr * (r - 4))
		}
	}
	return v0, v1
}

// epilogue folds a tile into the worker's result. m0, m1 mark the valid entries with value
// (|v| with Abs) ≥ the tile's threshold (t32, or topKFloor); v0, v1 all valid entries.
func (w *worker) epilogue(blk fc.Block, ra, cb int, m0, m1, v0, v1 uint64) {
	switch w.op.Kind {
	case fc.OpEdges:
		w.emit(ra, cb, m0, 0)
		w.emit(ra, cb, m1, 4*nr)
	case fc.OpHistogram:
		// below Lo: bin 0 without computing BinOf (v < Lo ⇒ BinOf(v) = 0)
		w.below += uint64(bits.OnesCount64(v0&^m0) + bits.OnesCount64(v1&^m1))
		w.count(m0, 0)
		w.count(m1, 4*nr)
	case fc.OpTopK:
		w.offer(blk, ra, cb, m0, 0)
		w.offer(blk, ra, cb, m1, 4*nr)
	}
}

func (w *worker) emit(ra, cb int, m uint64, off int) {
	for ; m != 0; m &= m - 1 {
		x := off + bits.TrailingZeros64(m)
		w.edges = append(w.edges, fc.Edge{I: uint32(ra + x/nr), J: uint32(cb + x%nr), W: w.tile[x]})
	}
}

func (w *worker) count(m uint64, off int) {
	for ; m != 0; m &= m - 1 {
		bin := w.bins.binOf(w.tile[off+bits.TrailingZeros64(m)])
		w.hist[bin]++
		w.hmin, w.hmax = min(w.hmin, bin), max(w.hmax, bin)
	}
}

func (w *worker) offer(blk fc.Block, ra, cb int, m uint64, off int) {
	for ; m != 0; m &= m - 1 {
		x := off + bits.TrailingZeros64(m)
		i, j, v := ra+x/nr, cb+x%nr, w.tile[x]
		w.rows.Push(i-w.row0, fc.Neighbour{U: uint32(j), W: v})
		w.cols.Push(j-blk.J0, fc.Neighbour{U: uint32(i), W: v})
	}
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// merge gathers the workers' partial results of one block into res.
func (b *Backend) merge(res *result, blk fc.Block, ws []*worker) {
	res.Block = blk
	res.Edges = res.Edges[:0]
	switch ws[0].op.Kind {
	case fc.OpEdges:
		for _, w := range ws {
			res.Edges = append(res.Edges, w.edges...)
		}
	case fc.OpHistogram:
		clear(res.Hist[res.lo : res.hi+1])
		res.lo, res.hi = 0, 0
		for _, w := range ws {
			if w.hmax >= w.hmin {
				for i, c := range w.hist[w.hmin : w.hmax+1] {
					res.Hist[w.hmin+i] += c
				}
				clear(w.hist[w.hmin : w.hmax+1])
				res.hi = max(res.hi, w.hmax)
			}
			res.Hist[0] += w.below
			w.below, w.hmin, w.hmax = 0, len(w.hist), -1
		}
	case fc.OpTopK:
		// row winners are final per strip; column heaps merge across workers
		cols := &ws[0].cols
		for _, w := range ws[1:] {
			w.cols.Flush(func(s int, nb fc.Neighbour) { cols.Push(s, nb) })
		}
		for _, w := range ws {
			res.Edges = append(res.Edges, w.edges...)
		}
		cols.Flush(func(s int, nb fc.Neighbour) {
			res.Edges = append(res.Edges, fc.Edge{I: nb.U, J: uint32(blk.J0 + s), W: nb.W})
		})
		slices.SortFunc(res.Edges, func(x, y fc.Edge) int {
			if x.I != y.I {
				return int(x.I) - int(y.I)
			}
			return int(x.J) - int(y.J)
		})
		res.Edges = slices.CompactFunc(res.Edges, func(x, y fc.Edge) bool { return x.I == y.I && x.J == y.J })
	}
}

// result is the block result handed to the sink, plus the histogram range it last touched
// (bins [lo, hi]; the rest are zero).
type result struct {
	fc.BlockResult
	lo, hi int
}

// binner computes fc.Op.BinOf without its division: t = (x − Lo)·(Bins/(Hi − Lo)) differs
// from BinOf's (x − Lo)/(Hi − Lo)·Bins by a few roundings, i.e. by less than 1e-15·t, so
// floor(t) is BinOf's bin unless t lies within ε = 1e-12·t + 1e-9 of an integer or outside
// [1, Bins−1); those values take BinOf itself. The histogram thus stays bit-consistent with
// Op.BinOf.
type binner struct {
	op        *fc.Op
	lo, scale float64
	maxT      float64
}

func newBinner(op *fc.Op) binner {
	return binner{op: op, lo: op.Lo, scale: float64(op.Bins) / (op.Hi - op.Lo), maxT: float64(op.Bins - 1)}
}

func (b *binner) binOf(v float32) int {
	t := (float64(v) - b.lo) * b.scale
	if t >= 1 && t < b.maxT {
		i := int(t)
		eps := 1e-12*t + 1e-9
		if f := t - float64(i); f > eps && f < 1-eps {
			return i
		}
	}
	return b.op.BinOf(v)
}
