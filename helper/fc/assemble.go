package fc

import (
	"fmt"
	"math"
	"slices"

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

// panelChunk is a finished row panel: its rows' sorted columns and weights and per-row counts.
type panelChunk struct {
	cols []uint32
	w    []float32
	deg  []uint32 // len = panel height
}

// assembler builds the strict-upper-triangle CSR incrementally. Edges are appended to the
// buffer of their row panel; when every block of a panel has arrived (blocks come in any
// order) the panel is sorted by (i, j) and compacted to 8 bytes per edge. Host memory is
// O(E) for the network plus the unfinished panels' buffers — never N×N.
type assembler struct {
	n, rows  int
	buf      [][]Edge
	pending  []int
	chunks   []*panelChunk
	held     []Edge
	classify func(e Edge) edgeClass
	kept     int64
}

func newAssembler(n, rows int, classify func(Edge) edgeClass) *assembler {
	p := (n + rows - 1) / rows
	a := &assembler{n: n, rows: rows, buf: make([][]Edge, p), pending: make([]int, p),
		chunks: make([]*panelChunk, p), classify: classify}
	for i := range a.pending {
		a.pending[i] = p - i // blocks (i, j) with j ≥ i
	}
	return a
}

// add takes one block's edges. It checks that every edge belongs to the block, since a
// backend's slip would otherwise silently corrupt the network.
func (a *assembler) add(r *BlockResult) error {
	b := r.Block
	if b.I0%a.rows != 0 || b.I0 >= a.n {
		return fmt.Errorf("fc: backend returned block %+v that the driver did not plan", b)
	}
	p := b.I0 / a.rows
	if a.pending[p] <= 0 {
		return fmt.Errorf("fc: backend returned row panel %d's blocks more than once (block %+v)", p, b)
	}
	for _, e := range r.Edges {
		i, j := int(e.I), int(e.J)
		if i < b.I0 || i >= b.I1 || j < b.J0 || j >= b.J1 || j <= i {
			return fmt.Errorf("fc: backend returned edge (%d,%d) outside block %+v", i, j, b)
		}
		switch a.classify(e) {
		case keep:
			a.buf[p] = append(a.buf[p], e)
		case hold:
			a.held = append(a.held, e)
		}
	}
	a.pending[p]--
	if a.pending[p] == 0 {
		a.finishPanel(p)
	}
	return nil
}

// finishPanel turns a panel's edges into CSR rows: a counting sort by row, then each row's
// (column, weight) packed into uint64 keys column-major and sorted — columns are distinct, so
// the key order is the column order. O(E) plus short per-row sorts, instead of one comparison
// sort of the whole panel.
func (a *assembler) finishPanel(p int) {
	es := a.buf[p]
	a.buf[p] = nil
	i0 := p * a.rows
	h := min(a.rows, a.n-i0)
	c := &panelChunk{cols: make([]uint32, len(es)), w: make([]float32, len(es)), deg: make([]uint32, h)}
	for _, e := range es {
		c.deg[int(e.I)-i0]++
	}
	start := make([]int, h+1)
	for r, d := range c.deg {
		start[r+1] = start[r] + int(d)
	}
	keys := make([]uint64, len(es))
	fill := slices.Clone(start[:h])
	for _, e := range es {
		r := int(e.I) - i0
		keys[fill[r]] = uint64(e.J)<<32 | uint64(math.Float32bits(e.W))
		fill[r]++
	}
	es = nil
	for r := 0; r < h; r++ {
		row := keys[start[r]:start[r+1]]
		slices.Sort(row)
		for q, k := range row {
			c.cols[start[r]+q], c.w[start[r]+q] = uint32(k>>32), math.Float32frombits(uint32(k))
		}
	}
	a.chunks[p] = c
	a.kept += int64(len(keys))
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

// finish merges the finished panels with extra edges (sorted by (i, j), disjoint from the
// panels' edges) into the network. Panels that never received a block are an error.
func (a *assembler) finish(extra []Edge) (*network.Network, error) {
	for p, c := range a.chunks {
		if c == nil && a.pending[p] > 0 {
			return nil, fmt.Errorf("fc: row panel %d still waits for %d blocks", p, a.pending[p])
		}
	}
	return buildCSR(a.n, a.rows, a.chunks, extra)
}

func buildCSR(n, rows int, chunks []*panelChunk, extra []Edge) (*network.Network, error) {
	var total int64 = int64(len(extra))
	for _, c := range chunks {
		if c != nil {
			total += int64(len(c.cols))
		}
	}
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1),
		Indices: make([]uint32, 0, total), Weights: make([]float32, 0, total)}
	x := 0
	for p, c := range chunks {
		i0 := p * rows
		var off uint32
		for r := 0; i0+r < n && r < rows; r++ {
			i := i0 + r
			var cols []uint32
			var ws []float32
			if c != nil {
				d := c.deg[r]
				cols, ws = c.cols[off:off+d], c.w[off:off+d]
				off += d
			}
			// merge the row's panel edges with its extra edges, both sorted by column
			q := 0
			for x < len(extra) && int(extra[x].I) == i {
				e := extra[x]
				for q < len(cols) && cols[q] < e.J {
					nw.Indices, nw.Weights = append(nw.Indices, cols[q]), append(nw.Weights, ws[q])
					q++
				}
				if q < len(cols) && cols[q] == e.J {
					return nil, fmt.Errorf("fc: edge (%d,%d) assembled twice", i, e.J)
				}
				nw.Indices, nw.Weights = append(nw.Indices, e.J), append(nw.Weights, e.W)
				x++
			}
			nw.Indices, nw.Weights = append(nw.Indices, cols[q:]...), append(nw.Weights, ws[q:]...)
			nw.Indptr[i+1] = uint64(len(nw.Indices))
		}
		if c != nil {
			chunks[p] = nil // release the panel as soon as it is copied
		}
	}
	if x != len(extra) {
		return nil, fmt.Errorf("fc: %d extra edges not in (i, j) order", len(extra)-x)
	}
	return nw, nil
}

// each calls f for every edge of the finished panels.
func (a *assembler) each(f func(i int, j uint32, w float32)) {
	for p, c := range a.chunks {
		if c == nil {
			continue
		}
		x := 0
		for r, d := range c.deg {
			for q := x; q < x+int(d); q++ {
				f(p*a.rows+r, c.cols[q], c.w[q])
			}
			x += int(d)
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
		x, y := 0, 0
		for r, d := range c.deg {
			var nd uint32
			for q := x; q < x+int(d); q++ {
				if keep(p*a.rows+r, c.cols[q], c.w[q]) {
					c.cols[y], c.w[y] = c.cols[q], c.w[q]
					y++
					nd++
				}
			}
			x += int(d)
			c.deg[r] = nd
		}
		c.cols, c.w = c.cols[:y], c.w[:y]
		a.kept += int64(y)
	}
}
