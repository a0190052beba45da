package network

import (
	"math"
	"strings"
	"testing"
)

func TestValidateAndDensity(t *testing.T) {
	// 4 nodes, edges (0,1) (0,3) (2,3).
	nw := &Network{N: 4, Indptr: []uint64{0, 2, 2, 3, 3}, Indices: []uint32{1, 3, 3}, Weights: []float32{0.5, 0.4, 0.9}}
	if err := nw.Validate(); err != nil {
		t.Fatal(err)
	}
	if nw.Edges() != 3 || math.Abs(nw.Density()-0.5) > 1e-15 {
		t.Fatalf("edges %d density %v, want 3 and 0.5", nw.Edges(), nw.Density())
	}
	if cols, ws := nw.Row(0); len(cols) != 2 || cols[1] != 3 || ws[1] != 0.4 {
		t.Fatalf("row 0 = %v %v", cols, ws)
	}
	bad := []struct {
		name string
		nw   Network
		want string
	}{
		{"lower triangle", Network{N: 3, Indptr: []uint64{0, 0, 1, 1}, Indices: []uint32{0}, Weights: []float32{1}}, "out of order or range"},
		{"diagonal", Network{N: 2, Indptr: []uint64{0, 1, 1}, Indices: []uint32{0}, Weights: []float32{1}}, "out of order or range"},
		{"unsorted row", Network{N: 4, Indptr: []uint64{0, 2, 2, 2, 2}, Indices: []uint32{3, 2}, Weights: []float32{1, 1}}, "out of order"},
		{"column out of range", Network{N: 2, Indptr: []uint64{0, 1, 1}, Indices: []uint32{2}, Weights: []float32{1}}, "range"},
		{"NaN weight", Network{N: 2, Indptr: []uint64{0, 1, 1}, Indices: []uint32{1}, Weights: []float32{float32(math.NaN())}}, "non-finite"},
		{"short indptr", Network{N: 3, Indptr: []uint64{0, 0}}, "indptr has 2 entries"},
		{"count mismatch", Network{N: 2, Indptr: []uint64{0, 1, 1}, Indices: nil, Weights: nil}, "claims 1 edges"},
		{"decreasing indptr", Network{N: 2, Indptr: []uint64{0, 1, 0}, Indices: nil, Weights: nil}, "indptr decreases"},
		{"overrunning indptr", Network{N: 3, Indptr: []uint64{0, 2, 1, 1}, Indices: []uint32{1}, Weights: []float32{1}}, "indptr decreases"},
	}
	for _, c := range bad {
		if err := c.nw.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	if (&Network{N: 1, Indptr: []uint64{0, 0}}).Density() != 0 {
		t.Error("density of a single node must be 0")
	}
}
