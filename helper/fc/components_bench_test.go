package fc

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/network"
)

// denseRandomNetwork is a density-mode-like CSR: every row i gets about deg random partners
// j > i (a giant component), rows of nodes ≡ 0 mod 1009 stay empty.
func denseRandomNetwork(n, deg int, seed uint64) *network.Network {
	r := rand.New(rand.NewPCG(seed, 5))
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1)}
	nw.Indices = make([]uint32, 0, n*deg)
	row := make([]uint32, 0, 2*deg)
	for i := 0; i < n; i++ {
		row = row[:0]
		if i%1009 != 0 && i < n-1 {
			for range deg {
				j := i + 1 + r.IntN(n-i-1)
				if j%1009 != 0 {
					row = append(row, uint32(j))
				}
			}
		}
		slices.Sort(row)
		row = slices.Compact(row)
		nw.Indices = append(nw.Indices, row...)
		nw.Indptr[i+1] = uint64(len(nw.Indices))
	}
	nw.Weights = make([]float32, len(nw.Indices))
	return nw
}

func BenchmarkComponentsDense(b *testing.B) {
	nw := denseRandomNetwork(200000, 100, 1)
	b.ResetTimer()
	for b.Loop() {
		Components(nw)
	}
}
