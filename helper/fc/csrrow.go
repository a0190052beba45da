package fc

import (
	"fmt"
	"math"
)

// rowWriter writes CSR rows into a network's Indices and Weights: each row is one or more
// segments of packed keys (column j in the high 32 bits, the float32 weight's bits in the
// low 32, strictly increasing in j) merged with the row's extra edges (the edges a
// threshold pass settled outside the segments, sorted by (I, J)). Both assembly paths use
// it: the block assembler (copyPanel, several pieces a row) and the row emitters
// (unpackRange, one segment a row).
type rowWriter struct {
	ind   []uint32
	wt    []float32
	n     uint32 // nodes: every column is below n
	extra []Edge
	x     int // next extra edge to write
}

// segment writes seg, a piece of row i, at out and returns the position after it. prev is
// the row's last column written so far (i before the first segment): every column of seg
// must exceed it, and none may equal an extra edge's column (an edge assembled twice).
func (w *rowWriter) segment(i uint32, seg []uint64, out int64, prev uint32) (int64, uint32, error) {
	ind, wt, extra := w.ind, w.wt, w.extra
	if w.x == len(extra) || extra[w.x].I != i { // no extra edge left in this row
		dst, dw := ind[out:out+int64(len(seg))], wt[out:out+int64(len(seg))]
		for t, k := range seg {
			j := uint32(k >> 32)
			if j <= prev || j >= w.n {
				return 0, 0, rowError(i, j, w.n)
			}
			prev = j
			dst[t], dw[t] = j, math.Float32frombits(uint32(k))
		}
		return out + int64(len(seg)), prev, nil
	}
	x := w.x
	for _, k := range seg {
		j := uint32(k >> 32)
		for x < len(extra) && extra[x].I == i && extra[x].J < j {
			ind[out], wt[out] = extra[x].J, extra[x].W
			out++
			x++
		}
		if x < len(extra) && extra[x].I == i && extra[x].J == j {
			w.x = x
			return 0, 0, fmt.Errorf("edge (%d,%d) assembled twice", i, j)
		}
		if j <= prev || j >= w.n {
			w.x = x
			return 0, 0, rowError(i, j, w.n)
		}
		prev = j
		ind[out], wt[out] = j, math.Float32frombits(uint32(k))
		out++
	}
	w.x = x
	return out, prev, nil
}

// finish writes row i's remaining extra edges at out and returns the row's end.
func (w *rowWriter) finish(i uint32, out int64) int64 {
	for w.x < len(w.extra) && w.extra[w.x].I == i {
		w.ind[out], w.wt[out] = w.extra[w.x].J, w.extra[w.x].W
		out++
		w.x++
	}
	return out
}

// rowError says why column j cannot follow in row i of an n-node network.
func rowError(i, j, n uint32) error {
	if j >= n {
		return fmt.Errorf("row %d has column %d, beyond the %d nodes", i, j, n)
	}
	return fmt.Errorf("edge (%d,%d) returned more than once or out of order (a row's columns must increase above the row)", i, j)
}
