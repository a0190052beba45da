package fc

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/hubscope/hubscope/helper/network"
)

// RowEmitter is implemented by backends that assemble an OpEdges pass's kept edges in CSR
// order themselves (the CUDA backend does it on the device: per-tile row counts, prefix sums
// and a gather per row panel). The driver then only copies the rows into the network's
// arrays at offsets known beforehand, instead of sorting the blocks' edges on the host. The
// generic path (Backend.Run into the block assembler) stays the reference; a backend that
// cannot serve a pass this way returns an error wrapping ErrRowsUnsupported and the driver
// takes the generic path.
type RowEmitter interface {
	// EmitRows runs op (OpEdges) over blocks, which are row panels as PlanBlocks makes them
	// (all blocks of a panel consecutive, columns from the panel's first row to N). Every
	// pair passing op whose value (Op.Value) is ≥ split is kept in its row; the other passing
	// pairs are held (returned unordered). done is called with the number of blocks finished
	// after each panel; ctx is checked between panels.
	EmitRows(ctx context.Context, blocks []Block, op Op, split float32, done func(blocks int)) (RowEdges, error)
}

// RowEdges are the edges of one EmitRows pass, held by the backend until Close.
type RowEdges interface {
	// Degrees is the number of kept edges of every row (len N).
	Degrees() []uint32
	// Held are the passing edges below split, in any order.
	Held() []Edge
	// Rows delivers the kept edges in row order: f gets consecutive row ranges [i0, i1) and
	// their edges as keys uint64(j)<<32 | float32bits(w), row by row, increasing j within a
	// row. keys is only valid until f returns. f runs on one goroutine at a time.
	Rows(ctx context.Context, f func(i0, i1 int, keys []uint64) error) error
	// Close frees the backend's copy of the edges.
	Close() error
}

// RowSelector is a RowEmitter that can also run the density mode in one pass
// (densityOnePass): EmitSelectableRows keeps every pair passing op in its row (no split, no
// held edges), and the edges it returns can be histogrammed and trimmed where they are, so
// the k-th largest value is found among the kept edges instead of by a histogram pass over
// all pairs.
type RowSelector interface {
	RowEmitter
	EmitSelectableRows(ctx context.Context, blocks []Block, op Op, done func(blocks int)) (SelectableRows, error)
}

// SelectableRows are RowEdges that the backend can histogram and trim on its side.
type SelectableRows interface {
	RowEdges
	// Histogram counts the kept edges' values into op's bins (OpHistogram, Op.BinOf).
	Histogram(op Op) ([]uint64, error)
	// Trim keeps in their rows only the edges whose value is ≥ keep, makes those in
	// [hold, keep) the held edges (replacing Held) and drops the rest; Degrees, Held and Rows
	// describe the trimmed edges afterwards. A NaN keep keeps none.
	Trim(hold, keep float32) error
}

// RowComponents is implemented by RowEdges whose backend can find the connected components
// of the kept edges where they are (the CUDA backend: union–find kernels), so the report's
// isolated nodes and largest component need no pass over the network's edges on the host.
type RowComponents interface {
	// ComponentLabels returns a root for every node: label[v] is a node of v's component
	// under the kept edges (Degrees/Rows, not Held) with label[label[v]] == label[v], so v
	// and w are connected exactly when their labels are equal.
	ComponentLabels() ([]uint32, error)
}

// ErrRowsUnsupported says that a backend cannot run a pass through RowEmitter (measure,
// memory); the driver falls back to Backend.Run.
var ErrRowsUnsupported = errors.New("row-ordered emission not available for this pass")

// emitRows runs op through the backend's RowEmitter when it has one; nil, nil means "use the
// generic path".
func (d *driver) emitRows(op Op, split float32) (RowEdges, error) {
	re, ok := d.b.(RowEmitter)
	if !ok || rowsDisabled {
		return nil, nil
	}
	return d.runRows(func(done func(int)) (RowEdges, error) {
		return re.EmitRows(d.ctx, d.blocks, op, split, done)
	})
}

// runRows runs one row-ordered edge pass (emit) as the "edges" stage and checks what it
// returned; nil, nil when the backend declined the pass (ErrRowsUnsupported).
func (d *driver) runRows(emit func(done func(int)) (RowEdges, error)) (RowEdges, error) {
	if err := d.ctx.Err(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	d.rep.Start("edges", int64(len(d.blocks)))
	rows, err := emit(func(n int) { d.rep.Add(int64(n)) })
	if errors.Is(err, ErrRowsUnsupported) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fc: edges pass on %s: %w", d.b.Name(), err)
	}
	if err := d.checkHeld(rows); err != nil {
		return nil, err
	}
	if deg := rows.Degrees(); len(deg) != d.n {
		rows.Close()
		return nil, fmt.Errorf("fc: edges pass on %s returned %d row degrees for %d nodes", d.b.Name(), len(deg), d.n)
	}
	d.timing("edges", len(d.blocks), t0)
	return rows, nil
}

// checkHeld verifies that rows' held edges are pairs i < j of the network (and closes rows
// when not).
func (d *driver) checkHeld(rows RowEdges) error {
	for _, e := range rows.Held() {
		if e.J <= e.I || int(e.J) >= d.n {
			rows.Close()
			return fmt.Errorf("fc: edges pass on %s held edge (%d,%d), not a pair i < j of %d nodes", d.b.Name(), e.I, e.J, d.n)
		}
	}
	return nil
}

// csrArrays are a network's Indices and Weights allocated ahead of the edge pass (the density
// mode knows its k edges before it), their pages touched by parallel goroutines while the
// backend works: allocating (zeroing, when the runtime reuses memory) and faulting in 8 bytes
// an edge is otherwise single-threaded work after the pass.
type csrArrays struct {
	ind   []uint32
	wt    []float32
	ready chan struct{}
}

// prefaultCSR starts allocating and touching arrays for total edges.
func prefaultCSR(total int64) *csrArrays {
	a := &csrArrays{ready: make(chan struct{})}
	go func() {
		defer close(a.ready)
		a.ind, a.wt = make([]uint32, total), make([]float32, total)
		const page = 1024 // 4-byte elements per 4 KiB page
		parallelFor(runtime.GOMAXPROCS(0)*4, func(t int) {
			parts := int64(runtime.GOMAXPROCS(0) * 4)
			lo, hi := total*int64(t)/parts, total*int64(t+1)/parts
			for x := lo; x < hi; x += page {
				a.ind[x], a.wt[x] = 0, 0
			}
		})
	}()
	return a
}

// prefault returns the driver's network arrays for total edges, started by prefaultCSR on
// the first call (the one-pass density falls back to the two-pass one with the same k).
func (d *driver) prefault(total int64) *csrArrays {
	if d.pre == nil {
		d.pre = prefaultCSR(total)
	}
	return d.pre
}

// rowsDisabled makes the driver ignore RowEmitter (tests compare both paths).
var rowsDisabled bool

// finishRows builds the network from the backend's rows merged with extra edges (sorted by
// (i, j), disjoint from the rows), and closes rows. Indptr comes from the degrees before any
// edge is copied, so every row range the backend delivers is unpacked straight into its
// final place by parallel workers (the first touch of the arrays' pages is parallel too).
func (d *driver) finishRows(rows RowEdges, extra []Edge, pre *csrArrays) (*network.Network, error) {
	defer rows.Close()
	t0 := time.Now()
	n := d.n
	for x := range extra {
		if e := extra[x]; e.J <= e.I || int(e.J) >= n {
			return nil, fmt.Errorf("fc: extra edge (%d,%d) is not a pair i < j of %d nodes", e.I, e.J, n)
		}
		if x > 0 && cmpIJ(extra[x-1], extra[x]) >= 0 {
			return nil, fmt.Errorf("fc: %d extra edges not in (i, j) order", len(extra)-x)
		}
	}
	var labels []uint32
	if rc, ok := rows.(RowComponents); ok { // on the device, before its edges are copied back
		var err error
		if labels, err = rc.ComponentLabels(); err != nil {
			return nil, fmt.Errorf("fc: connected components on %s: %w", d.b.Name(), err)
		}
	}
	t1 := time.Since(t0)
	t0 = time.Now()
	deg := rows.Degrees()
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1)}
	x := 0
	for i := range n {
		c := uint64(deg[i])
		for x < len(extra) && int(extra[x].I) == i {
			c++
			x++
		}
		nw.Indptr[i+1] = nw.Indptr[i] + c
	}
	total := nw.Indptr[n]
	if pre != nil {
		<-pre.ready
	}
	if pre != nil && uint64(len(pre.ind)) == total {
		nw.Indices, nw.Weights = pre.ind, pre.wt
	} else {
		nw.Indices, nw.Weights = make([]uint32, total), make([]float32, total)
	}
	next := 0 // rows delivered so far: ranges must come in order and cover every row
	err := rows.Rows(d.ctx, func(i0, i1 int, keys []uint64) error {
		if i0 != next || i1 <= i0 || i1 > n {
			return fmt.Errorf("fc: %s delivered rows [%d,%d) after row %d", d.b.Name(), i0, i1, next)
		}
		next = i1
		return unpackRows(nw, deg, extra, i0, i1, keys)
	})
	if err == nil && next != n {
		err = fmt.Errorf("fc: %s delivered rows up to %d of %d", d.b.Name(), next, n)
	}
	if err != nil {
		return nil, fmt.Errorf("fc: assembling rows from %s: %w", d.b.Name(), err)
	}
	d.timing("assemble", 0, t0)
	if labels != nil {
		t0 = time.Now()
		iso, largest, err := componentsFromLabels(labels, extra)
		if err != nil {
			return nil, fmt.Errorf("fc: component labels from %s: %w", d.b.Name(), err)
		}
		d.rpt.Isolated, d.rpt.LargestComponent, d.componentsDone = iso, largest, true
		d.rpt.Passes = append(d.rpt.Passes, PassTiming{Stage: "components", Seconds: (t1 + time.Since(t0)).Seconds()})
	}
	return nw, nil
}

// componentsFromLabels is Components for a network whose kept edges' components a backend
// labelled (RowComponents) plus extra edges: the labels seed the union–find forest, the
// extra edges (the density mode's boundary selection, a few) are merged on the host, and the
// components are counted. Labels that are not roots of the nodes' own range are an error.
func componentsFromLabels(labels []uint32, extra []Edge) (isolated, largest int, err error) {
	n := len(labels)
	parent := make([]uint32, n)
	for v, r := range labels {
		if int(r) >= n || labels[r] != r {
			return 0, 0, fmt.Errorf("node %d labelled %d, which is not a root of the %d nodes", v, r, n)
		}
		parent[v] = r
	}
	find := func(x uint32) uint32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]] // path halving
			x = parent[x]
		}
		return x
	}
	for _, e := range extra {
		if int(e.I) >= n || int(e.J) >= n {
			return 0, 0, fmt.Errorf("edge (%d,%d) beyond the %d nodes", e.I, e.J, n)
		}
		if a, b := find(e.I), find(e.J); a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	size := make([]int32, n)
	for v := range parent {
		size[find(uint32(v))]++
	}
	for _, c := range size {
		if c == 1 {
			isolated++
		}
		largest = max(largest, int(c))
	}
	return isolated, largest, nil
}

// unpackRows writes rows [i0, i1) from keys (their kept edges, row by row) merged with the
// rows' extra edges into nw at nw.Indptr. Workers take row ranges of about equal edge counts.
// Each row must be strictly increasing in j with i < j < N, and disjoint from its extras.
func unpackRows(nw *network.Network, deg []uint32, extra []Edge, i0, i1 int, keys []uint64) error {
	// kstart[t]: first key of row i0+t
	h := i1 - i0
	var sum int
	for _, d := range deg[i0:i1] {
		sum += int(d)
	}
	if sum != len(keys) {
		return fmt.Errorf("rows [%d,%d) came with %d edges, their degrees say %d", i0, i1, len(keys), sum)
	}
	parts := min(runtime.GOMAXPROCS(0), max(1, len(keys)/(1<<16)))
	// cut points: row ranges [cut[w], cut[w+1]) of about len(keys)/parts edges each
	cut := make([]int, 0, parts+1)
	koff := make([]int, 0, parts+1)
	cut, koff = append(cut, i0), append(koff, 0)
	acc := 0
	for t := range h {
		if len(cut) < parts && acc >= len(cut)*len(keys)/parts && i0+t > cut[len(cut)-1] {
			cut, koff = append(cut, i0+t), append(koff, acc)
		}
		acc += int(deg[i0+t])
	}
	cut, koff = append(cut, i1), append(koff, acc)
	errs := make([]error, len(cut)-1)
	var wg sync.WaitGroup
	for w := range len(cut) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = unpackRange(nw, deg, extra, cut[w], cut[w+1], keys[koff[w]:koff[w+1]])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func unpackRange(nw *network.Network, deg []uint32, extra []Edge, r0, r1 int, keys []uint64) error {
	x := sort.Search(len(extra), func(k int) bool { return int(extra[k].I) >= r0 })
	w := rowWriter{ind: nw.Indices, wt: nw.Weights, n: uint32(nw.N), extra: extra, x: x}
	k := 0
	for r := r0; r < r1; r++ {
		i := uint32(r)
		seg := keys[k : k+int(deg[r])]
		k += len(seg)
		out, _, err := w.segment(i, seg, int64(nw.Indptr[r]), i)
		if err != nil {
			return err
		}
		w.finish(i, out)
	}
	return nil
}
