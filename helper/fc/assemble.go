package fc

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hubscope/hubscope/helper/network"
)

// edgeClass is the fate of an edge a pass emitted: dropped, kept in its row panel, or held
// back globally until a cut only known at the end (the density mode's boundary bin).
type edgeClass uint8

const (
	drop edgeClass = iota
	keep
	hold
)

// panelChunk is a finished row panel: its blocks' pieces in column-block order (row i of the
// panel is row i of each piece, concatenated) and the rows' edge counts. The pieces are
// unpacked straight into the network (buildCSR), so a panel is never copied in between.
type panelChunk struct {
	pieces []*blockPiece
	deg    []uint32 // len = panel height
}

// blockPiece is one block's kept edges in CSR order: for each block row, its packed
// (column, weight) keys sorted by column. A block covers one column range, so a panel's
// row i is the concatenation of row i of its pieces in column-block order — finishing a
// panel needs no sort.
type blockPiece struct {
	keys []uint64 // uint64(j)<<32 | float32bits(w), block rows consecutive, each sorted
	deg  []uint32 // kept edges per block row
}

// assembler builds the strict-upper-triangle CSR incrementally. The backend's sink (add)
// only checks the block against the plan, copies its edges into a pooled buffer and queues
// it; workers (one per GOMAXPROCS) validate, classify and sort each block by (row, column)
// in parallel (blockPiece), and the worker that completes a row panel files its pieces as a
// panelChunk; buildCSR unpacks the panels into the network in parallel. At most
// GOMAXPROCS+2 copied blocks exist at a time (the sink waits for a free buffer), so host
// memory is O(E) for the network plus a few blocks — never N×N. With one worker the sink
// does the work itself, without the copy.
type assembler struct {
	n, rows, panels int
	// classify decides each edge's fate; nil means every edge gets class all (the common
	// keep-everything and hold-everything passes, without a call per edge).
	classify func(e Edge) edgeClass
	all      edgeClass
	// binned replaces classify by the density mode's bin rule (newAssemblerBins): keep bin
	// > bin, hold bin == bin; for |W| ≤ binRange that is keep W ≥ keepAt, hold W ≥ holdAt.
	binned         bool
	binOp          *Op
	bin            int
	keepAt, holdAt float32

	// sink side: touched only by the goroutine calling add
	pending []int      // blocks of panel p not yet received
	seen    [][]uint64 // bitset of received column blocks per open panel
	workers []*asmWorker
	jobs    chan asmJob
	free    chan []Edge
	wg      sync.WaitGroup
	started bool
	closed  bool

	// shared between workers; chunks and pieces[p][q] each have one writer
	pieces    [][]*blockPiece
	remaining []atomic.Int32 // blocks of panel p not yet processed
	chunks    []*panelChunk
	keptSum   atomic.Int64
	failed    atomic.Bool
	errMu     sync.Mutex
	err       error

	// results, valid after wait
	held []Edge
	kept int64
}

// asmWorker is one worker's scratch and its share of the held edges.
type asmWorker struct {
	start, cstart, sstart []int  // row, column and strip offsets of the block being sorted
	scratch, tmp, strip   []Edge // compaction (when the edges are the backend's), strip order, column order
	held                  []Edge
}

// stripEdges is the number of edges a worker sorts at a time once a block has more than
// 8·stripEdges (≈ 0.5 M) edges: with their column-ordered copy and keys about 2 MB, within a
// core's share of L3. On the 2-core development machine (AMD EPYC, shared) strips made
// 10⁸-edge runs (1.3 M edges a block) faster but 2·10⁷-edge runs (0.27 M a block) slower,
// since the strip scatter is one more pass; hence the threshold. A variable for tests only.
var stripEdges = 1 << 16

type asmJob struct {
	b   Block
	buf []Edge
}

// newAssembler makes an assembler for n nodes in row panels of height rows; classify nil
// keeps every edge.
func newAssembler(n, rows int, classify func(Edge) edgeClass) *assembler {
	a := newAssemblerAll(n, rows, keep)
	a.classify = classify
	return a
}

// newAssemblerBins makes the density mode's assembler: an edge whose bin (op.BinOf) is
// above b is kept, one in bin b held, the rest dropped. Over [−binRange, binRange] BinOf is
// monotone in the value (no integer overflow there), so each class is a value range; its
// float32 bounds are found once (binCut) and an edge costs two comparisons instead of a
// BinOf call, with exactly the same classes. Values outside (none from a correct backend:
// |r|, |τ| ≤ 1) and NaN still go through BinOf.
func newAssemblerBins(n, rows int, op *Op, b int) *assembler {
	a := newAssemblerAll(n, rows, keep)
	a.binned, a.binOp, a.bin = true, op, b
	a.keepAt, a.holdAt = binCut(op, b+1), binCut(op, b)
	return a
}

// binClassSlow classifies the values outside [−binRange, binRange] and NaN by the formula
// itself.
func (a *assembler) binClassSlow(v float32) edgeClass {
	switch bin := a.binOp.BinOf(v); {
	case bin > a.bin:
		return keep
	case bin == a.bin:
		return hold
	}
	return drop
}

// binRange bounds the values classified by comparison (newAssemblerBins).
const binRange = 1 << 16

// binCut is the smallest float32 v in [−binRange, binRange] with op.BinOf(v) ≥ c, or NaN
// when there is none (W ≥ NaN is never true): a bisection over the float32 values in their
// order, with BinOf itself as the predicate.
func binCut(op *Op, c int) float32 {
	// order-preserving map of the non-NaN float32 values onto uint32
	key := func(f float32) uint32 {
		if b := math.Float32bits(f); b>>31 == 1 {
			return ^b
		} else {
			return b | 1<<31
		}
	}
	val := func(k uint32) float32 {
		if k>>31 == 1 {
			return math.Float32frombits(k &^ (1 << 31))
		}
		return math.Float32frombits(^k)
	}
	if op.BinOf(binRange) < c {
		return float32(math.NaN())
	}
	if op.BinOf(-binRange) >= c {
		return -binRange
	}
	lo, hi := key(-binRange), key(binRange) // BinOf(val(lo)) < c ≤ BinOf(val(hi))
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if op.BinOf(val(mid)) >= c {
			hi = mid
		} else {
			lo = mid
		}
	}
	return val(hi)
}

// newAssemblerAll makes an assembler that gives every edge the class c.
func newAssemblerAll(n, rows int, c edgeClass) *assembler {
	p := (n + rows - 1) / rows
	a := &assembler{n: n, rows: rows, panels: p, all: c, pending: make([]int, p),
		seen: make([][]uint64, p), pieces: make([][]*blockPiece, p),
		remaining: make([]atomic.Int32, p), chunks: make([]*panelChunk, p)}
	for i := range a.pending {
		a.pending[i] = p - i // blocks (i, j) with j ≥ i
		a.remaining[i].Store(int32(p - i))
	}
	return a
}

// start launches the workers on the first block.
func (a *assembler) start() {
	a.started = true
	nw := runtime.GOMAXPROCS(0)
	a.workers = make([]*asmWorker, nw)
	for w := range a.workers {
		a.workers[w] = &asmWorker{}
	}
	if nw == 1 {
		return
	}
	// one copied block per worker and two queued keep every worker busy while the sink
	// copies the next, and bound the copies to a few blocks beyond the workers' own
	inflight := nw + 2
	a.jobs = make(chan asmJob, inflight)
	a.free = make(chan []Edge, inflight)
	for range inflight {
		a.free <- nil
	}
	for _, w := range a.workers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for j := range a.jobs {
				if !a.failed.Load() {
					a.process(w, j.b, j.buf, true)
				}
				a.free <- j.buf[:0]
			}
		}()
	}
}

func (a *assembler) fail(err error) {
	a.errMu.Lock()
	if a.err == nil {
		a.err = err
	}
	a.errMu.Unlock()
	a.failed.Store(true)
}

// add takes one block's edges. It checks that the block is one the driver planned and came
// once; the workers check that every edge belongs to the block, since a backend's slip would
// otherwise silently corrupt the network. A worker's error is returned by a later add and by
// wait.
func (a *assembler) add(r *BlockResult) error {
	b := r.Block
	if a.closed {
		return fmt.Errorf("fc: backend returned block %+v after the pass ended", b)
	}
	if b.I0%a.rows != 0 || b.I0 < 0 || b.I0 >= a.n || b.I1 != min(b.I0+a.rows, a.n) ||
		b.J0%a.rows != 0 || b.J0 < b.I0 || b.J0 >= a.n || b.J1 != min(b.J0+a.rows, a.n) {
		return fmt.Errorf("fc: backend returned block %+v that the driver did not plan", b)
	}
	p, q := b.I0/a.rows, (b.J0-b.I0)/a.rows
	if a.pending[p] <= 0 {
		return fmt.Errorf("fc: backend returned row panel %d's blocks more than once (block %+v)", p, b)
	}
	if a.seen[p] == nil {
		a.seen[p] = make([]uint64, (a.panels-p+63)/64)
		a.pieces[p] = make([]*blockPiece, a.panels-p)
	}
	if a.seen[p][q/64]&(1<<(q%64)) != 0 {
		return fmt.Errorf("fc: backend returned block %+v more than once", b)
	}
	if a.failed.Load() {
		return a.firstErr()
	}
	a.seen[p][q/64] |= 1 << (q % 64)
	a.pending[p]--
	if a.pending[p] == 0 {
		a.seen[p] = nil
	}
	if !a.started {
		a.start()
	}
	if a.jobs == nil {
		a.process(a.workers[0], b, r.Edges, false)
		return a.firstErr()
	}
	buf := <-a.free // back-pressure: wait while inflight blocks are queued
	buf = append(buf[:0], r.Edges...)
	a.jobs <- asmJob{b, buf}
	return nil
}

func (a *assembler) firstErr() error {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	return a.err
}

// wait ends the pass: it lets the workers drain the queue, gathers their held edges and
// returns the first error. It may be called more than once.
func (a *assembler) wait() error {
	if !a.closed {
		a.closed = true
		if a.jobs != nil {
			close(a.jobs)
			a.wg.Wait()
			a.jobs, a.free = nil, nil
		}
		var nh int
		for _, w := range a.workers {
			nh += len(w.held)
		}
		if nh > 0 {
			held := make([]Edge, 0, len(a.held)+nh)
			held = append(held, a.held...)
			for _, w := range a.workers {
				held = append(held, w.held...)
				w.held = nil
			}
			a.held = held
		}
		a.workers = nil
		a.kept = a.keptSum.Load()
	}
	return a.firstErr()
}

// process turns one block's edges into a blockPiece (and held edges). src may be reused for
// the compaction only if owned (a pooled copy); otherwise the worker's scratch takes it.
func (a *assembler) process(w *asmWorker, b Block, src []Edge, owned bool) {
	h := b.I1 - b.I0
	i0, j0, j1 := uint32(b.I0), uint32(b.J0), uint32(b.J1)
	// outside reports the first edge that is not in the block (or not i < j)
	outside := func() {
		for _, e := range src {
			if e.I-i0 >= uint32(h) || e.J < j0 || e.J >= j1 || e.J <= e.I {
				a.fail(fmt.Errorf("fc: backend returned edge (%d,%d) outside block %+v", e.I, e.J, b))
				return
			}
		}
	}
	deg := make([]uint32, h)
	kept := src
	switch {
	case a.classify == nil && !a.binned && a.all == keep:
		for _, e := range src {
			r := e.I - i0
			if r >= uint32(h) || e.J < j0 || e.J >= j1 || e.J <= e.I {
				outside()
				return
			}
			deg[r]++
		}
	case a.classify == nil && !a.binned:
		for _, e := range src {
			if e.I-i0 >= uint32(h) || e.J < j0 || e.J >= j1 || e.J <= e.I {
				outside()
				return
			}
		}
		if a.all == hold {
			w.held = append(w.held, src...)
		}
		kept = nil
	default:
		dst := src
		if !owned {
			w.scratch = slices.Grow(w.scratch[:0], len(src))[:len(src)]
			dst = w.scratch
		}
		// compaction in place is safe: the write index never passes the read index
		k := 0
		for _, e := range src {
			r := e.I - i0
			if r >= uint32(h) || e.J < j0 || e.J >= j1 || e.J <= e.I {
				outside()
				return
			}
			var c edgeClass
			if v := e.W; a.binned && v >= -binRange && v <= binRange {
				// the bin rule by two comparisons (keepAt ≥ holdAt), not a call per edge
				if v >= a.keepAt {
					c = keep
				} else if v >= a.holdAt {
					c = hold
				}
			} else if a.binned {
				c = a.binClassSlow(v)
			} else {
				c = a.classify(e)
			}
			switch c {
			case keep:
				dst[k] = e
				k++
				deg[r]++
			case hold:
				w.held = append(w.held, e)
			}
		}
		kept = dst[:k]
	}
	// (row, column) order without comparisons; a large block in strips of rows holding about
	// stripEdges edges: a stable scatter by strip (a few sequential write streams), then per strip two
	// stable counting sorts — by column, then by row — whose random writes stay within the
	// strip's cache-resident edges and keys. A whole large block at once would scatter into
	// thousands of buckets spread over megabytes, one cache miss per edge.
	n := len(kept)
	w.start = slices.Grow(w.start[:0], h+1)[:h+1]
	rs := w.start // rs[r]: where row r's keys go next
	rs[0] = 0
	for r, d := range deg {
		rs[r+1] = rs[r] + int(d)
	}
	sr := h // rows per strip
	if n > 8*stripEdges {
		sr = max(1, int(int64(h)*int64(stripEdges)/int64(n)))
	}
	byStrip := kept
	if sr < h {
		w.tmp = slices.Grow(w.tmp[:0], n)[:n]
		byStrip = w.tmp
		ns := (h + sr - 1) / sr
		w.sstart = slices.Grow(w.sstart[:0], ns)[:ns]
		ss := w.sstart
		for t := range ss {
			ss[t] = rs[t*sr]
		}
		for _, e := range kept {
			t := int(e.I-i0) / sr
			byStrip[ss[t]] = e
			ss[t]++
		}
	}
	wd := b.J1 - b.J0
	w.cstart = slices.Grow(w.cstart[:0], wd+1)[:wd+1]
	cs := w.cstart
	pc := &blockPiece{keys: make([]uint64, n), deg: deg}
	keys := pc.keys
	for r0 := 0; r0 < h; r0 += sr {
		r1 := min(r0+sr, h)
		seg := byStrip[rs[r0]:rs[r1]] // rows ≥ r0 are not yet scattered, so rs there is intact
		if len(seg) == 0 {
			continue
		}
		clear(cs)
		for _, e := range seg {
			cs[e.J-j0+1]++
		}
		for c := 1; c <= wd; c++ {
			cs[c] += cs[c-1]
		}
		w.strip = slices.Grow(w.strip[:0], len(seg))[:len(seg)]
		byCol := w.strip
		for _, e := range seg {
			c := e.J - j0
			byCol[cs[c]] = e
			cs[c]++
		}
		// one packed key per edge: a single write stream per row
		for _, e := range byCol {
			r := e.I - i0
			keys[rs[r]] = uint64(e.J)<<32 | uint64(math.Float32bits(e.W))
			rs[r]++
		}
	}
	p, q := b.I0/a.rows, (b.J0-b.I0)/a.rows
	a.pieces[p][q] = pc
	if a.remaining[p].Add(-1) == 0 {
		a.finishPanel(p)
	}
}

// finishPanel makes the panel's chunk once its last block is in.
func (a *assembler) finishPanel(p int) {
	pieces := a.pieces[p]
	a.pieces[p] = nil
	h := min(a.rows, a.n-p*a.rows)
	c := &panelChunk{pieces: pieces, deg: make([]uint32, h)}
	total := 0
	for _, pc := range pieces {
		total += len(pc.keys)
		for r, d := range pc.deg {
			c.deg[r] += d
		}
	}
	a.chunks[p] = c
	a.keptSum.Add(int64(total))
}

func cmpIJ(x, y Edge) int {
	switch {
	case x.I != y.I:
		if x.I < y.I {
			return -1
		}
		return 1
	case x.J != y.J:
		if x.J < y.J {
			return -1
		}
		return 1
	}
	return 0
}

// finish ends the pass and merges the finished panels with extra edges (sorted by (i, j),
// disjoint from the panels' edges) into the network. Panels that never received a block
// are an error.
func (a *assembler) finish(extra []Edge) (*network.Network, error) {
	if err := a.wait(); err != nil {
		return nil, err
	}
	for p, c := range a.chunks {
		if c == nil && a.pending[p] > 0 {
			return nil, fmt.Errorf("fc: row panel %d still waits for %d blocks", p, a.pending[p])
		}
	}
	return buildCSR(a.n, a.rows, a.chunks, extra)
}

// parallelFor calls f(t) for t in [0, tasks) on up to GOMAXPROCS goroutines.
func parallelFor(tasks int, f func(t int)) {
	nw := min(runtime.GOMAXPROCS(0), tasks)
	if nw <= 1 {
		for t := range tasks {
			f(t)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := int(next.Add(1) - 1); t < tasks; t = int(next.Add(1) - 1) {
				f(t)
			}
		}()
	}
	wg.Wait()
}

// buildCSR copies the panels (releasing each once copied) and the extra edges into one
// network. Each panel's place in Indices/Weights is known beforehand (prefix sum of the
// panels' edge counts and their rows' extra edges), so the panels are copied in parallel
// into arrays allocated once at their exact size.
func buildCSR(n, rows int, chunks []*panelChunk, extra []Edge) (*network.Network, error) {
	for x := range extra {
		if e := extra[x]; e.J <= e.I || int(e.J) >= n {
			return nil, fmt.Errorf("fc: extra edge (%d,%d) is not a pair i < j of %d nodes", e.I, e.J, n)
		}
		if x > 0 && cmpIJ(extra[x-1], extra[x]) >= 0 {
			return nil, fmt.Errorf("fc: %d extra edges not in (i, j) order", len(extra)-x)
		}
	}
	// xs[p]: first extra edge of panel p; base[p]: panel p's first position
	np := len(chunks)
	xs := make([]int, np+1)
	base := make([]int64, np+1)
	for p := range np {
		xs[p+1] = sort.Search(len(extra), func(x int) bool { return int(extra[x].I) >= (p+1)*rows })
		base[p+1] = base[p] + int64(xs[p+1]-xs[p])
		if c := chunks[p]; c != nil {
			for _, pc := range c.pieces {
				base[p+1] += int64(len(pc.keys))
			}
		}
	}
	if xs[np] != len(extra) {
		return nil, fmt.Errorf("fc: %d extra edges beyond the row panels", len(extra)-xs[np])
	}
	total := base[np]
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1),
		Indices: make([]uint32, total), Weights: make([]float32, total)}
	errs := make([]error, np)
	parallelFor(np, func(p int) {
		errs[p] = copyPanel(nw, p*rows, min(rows, n-p*rows), chunks[p], extra[xs[p]:xs[p+1]], base[p])
		chunks[p] = nil // release the panel as soon as it is copied
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return nw, nil
}

// copyPanel writes rows [i0, i0+h) from chunk c (nil: no panel edges) merged with the rows'
// extra edges into nw from position at on. Each row of a piece is strictly increasing and
// the pieces' column ranges increase, so a row is the pieces' segments in order; an equal
// column means the backend returned an edge twice.
func copyPanel(nw *network.Network, i0, h int, c *panelChunk, extra []Edge, at int64) error {
	out := at
	var pieces []*blockPiece
	if c != nil {
		pieces = c.pieces
	}
	off := make([]int, len(pieces))
	w := rowWriter{ind: nw.Indices, wt: nw.Weights, n: uint32(nw.N), extra: extra}
	for r := 0; r < h; r++ {
		i := uint32(i0 + r)
		prev := i
		for q, pc := range pieces {
			d := int(pc.deg[r])
			var err error
			if out, prev, err = w.segment(i, pc.keys[off[q]:off[q]+d], out, prev); err != nil {
				return fmt.Errorf("fc: backend's blocks: %w", err)
			}
			off[q] += d
		}
		out = w.finish(i, out)
		nw.Indptr[i+1] = uint64(out)
	}
	return nil
}

// each calls f for every edge of the finished panels, row by row in column order.
func (a *assembler) each(f func(i int, j uint32, w float32)) {
	for p, c := range a.chunks {
		if c == nil {
			continue
		}
		off := make([]int, len(c.pieces))
		for r := range c.deg {
			for q, pc := range c.pieces {
				d := int(pc.deg[r])
				for _, k := range pc.keys[off[q] : off[q]+d] {
					f(p*a.rows+r, uint32(k>>32), math.Float32frombits(uint32(k)))
				}
				off[q] += d
			}
		}
	}
}

// filter keeps only the edges of the finished panels for which keep is true.
func (a *assembler) filter(keep func(i int, j uint32, w float32) bool) {
	a.kept = 0
	for p, c := range a.chunks {
		if c == nil {
			continue
		}
		clear(c.deg)
		for _, pc := range c.pieces {
			x, y := 0, 0
			for r, d := range pc.deg {
				var nd uint32
				for _, k := range pc.keys[x : x+int(d)] {
					if keep(p*a.rows+r, uint32(k>>32), math.Float32frombits(uint32(k))) {
						pc.keys[y] = k
						y++
						nd++
					}
				}
				x += int(d)
				pc.deg[r] = nd
				c.deg[r] += nd
			}
			pc.keys = pc.keys[:y]
			a.kept += int64(y)
		}
	}
}
