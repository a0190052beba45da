package fc

import "math"

// Neighbour is a candidate partner U of a node with connection value W.
type Neighbour struct {
	U uint32
	W float32
}

// Better is the order of OpTopK and the k-NN mode: the larger value first, ties to the smaller
// partner index.
func Better(a, b Neighbour) bool { return a.W > b.W || (a.W == b.W && a.U < b.U) }

// TopK keeps the K best neighbours (by Better) of each of several slots in bounded binary
// heaps whose root is the worst kept entry, so a candidate is tested against one value and
// accepted in O(log K). Memory is slots·K; the CPU backend's OpTopK tiles and the driver's
// k-NN merge share it.
type TopK struct {
	k int
	h []Neighbour
	n []int32
}

// Reset empties the heaps and sizes them for slots × k, reusing memory where it can.
func (t *TopK) Reset(slots, k int) {
	t.k = k
	if cap(t.h) < slots*k || cap(t.n) < slots {
		t.h = make([]Neighbour, slots*k)
		t.n = make([]int32, slots)
	}
	t.h = t.h[:slots*k]
	t.n = t.n[:slots]
	clear(t.n)
}

// Push offers candidate c to slot s.
func (t *TopK) Push(s int, c Neighbour) {
	k := t.k
	h := t.h[s*k : (s+1)*k]
	n := int(t.n[s])
	if n < k { // sift up
		h[n] = c
		t.n[s]++
		for i := n; i > 0; {
			p := (i - 1) / 2
			if !Better(h[p], h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		return
	}
	if !Better(c, h[0]) {
		return
	}
	h[0] = c // replace the worst kept entry and sift down
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < k && Better(h[m], h[l]) {
			m = l
		}
		if r < k && Better(h[m], h[r]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// Floor is the worst kept value of slot s when its heap is full, else −∞: no candidate below
// it can enter.
func (t *TopK) Floor(s int) float32 {
	if int(t.n[s]) < t.k {
		return float32(math.Inf(-1))
	}
	return t.h[s*t.k].W
}

// Kept returns slot s's kept entries (in heap order).
func (t *TopK) Kept(s int) []Neighbour { return t.h[s*t.k : s*t.k+int(t.n[s])] }

// Flush hands every kept entry to f and empties the heaps.
func (t *TopK) Flush(f func(s int, nb Neighbour)) {
	for s, n := range t.n {
		for _, nb := range t.h[s*t.k : s*t.k+int(n)] {
			f(s, nb)
		}
		t.n[s] = 0
	}
}
