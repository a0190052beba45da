//go:build cuda

package cuda

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/kernels"
	"gorgonia.org/cu"
)

// localRows is how many of a neighbourhood's searches one block of local_efficiency runs.
const localRows = 64

// LocalEfficiencies computes every node's local efficiency on the device
// (graph.LocalEfficiencyAccelerator): local_efficiency counts the pairs at each distance in
// every neighbourhood, a hub's searches spread over many blocks, and the host turns the counts
// into E_loc as graph.LocalEfficiencies does — the same numbers bit for bit.
func (a *graphAccel) LocalEfficiencies(ctx context.Context, g *graph.Graph) ([]float64, error) {
	n := g.N
	eloc := make([]float64, n)
	if n == 0 {
		return eloc, nil
	}
	// Work items by decreasing degree; counts[coff[i] + d] for d < k_i.
	coff := make([]int64, n+1)
	var items [][4]int32
	maxDeg := 2
	for i := 0; i < n; i++ {
		k := g.Degree(i)
		coff[i+1] = coff[i] + int64(k)
		if k < 2 {
			continue
		}
		maxDeg = max(maxDeg, k)
		for r0 := 0; r0 < k; r0 += localRows {
			items = append(items, [4]int32{int32(i), int32(r0), int32(min(r0+localRows, k)), 0})
		}
	}
	if len(items) == 0 {
		return eloc, nil
	}
	sort.SliceStable(items, func(x, y int) bool { return g.Degree(int(items[x][0])) > g.Degree(int(items[y][0])) })
	counts := make([]uint64, coff[n])
	err := a.b.do(func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := a.device(g)
		if err != nil {
			return err
		}
		words := int64((maxDeg + 63) / 64)
		perBlock := 8 * words * int64(maxDeg+3*localRows)
		blocks := int64(min(len(items), 1024))
		for blocks > 1 && blocks*perBlock > 1<<30 {
			blocks /= 2
		}
		tables := 16*int64(len(items)) + 8*int64(n+1) + 8*coff[n] + 8
		if err := a.room(blocks*perBlock + tables); err != nil {
			return err
		}
		scratch, err := alloc("local efficiency scratch", int(blocks*perBlock))
		if err != nil {
			return err
		}
		defer cu.MemFree(scratch)
		tab, err := alloc("local efficiency tables", int(tables))
		if err != nil {
			return err
		}
		defer cu.MemFree(tab)
		dItems, dCoff := tab, tab+cu.DevicePtr(16*len(items))
		dCounts := dCoff + cu.DevicePtr(8*(n+1))
		dNext := dCounts + cu.DevicePtr(8*coff[n])
		if err := upload(dItems, items, "local efficiency items"); err != nil {
			return err
		}
		if err := upload(dCoff, coff, "local efficiency offsets"); err != nil {
			return err
		}
		if err := cu.MemsetD32(dCounts, 0, 2*coff[n]+2); err != nil {
			return fmt.Errorf("cuda backend: clearing local efficiency counts: %w", err)
		}
		if err := launch(kernels.LocalEfficiency, a.fn.localEfficiency, int(blocks), 1, 256, 0, cu.Stream{},
			ptr(d.off), ptr(d.adj), ptr(dItems), i64(len(items)), ptr(dNext), ptr(scratch), i64(maxDeg), ptr(dCoff), ptr(dCounts)); err != nil {
			return err
		}
		return download(counts, dCounts, "local efficiency counts")
	})
	if errors.Is(err, errNoRoom) {
		a.fallback("local efficiency", g, err)
		return graph.LocalEfficiencies(ctx, g, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("local efficiency: %w", err)
	}
	// As graph.LocalEfficiencies: Σ_d count_d / d in increasing d, over k(k − 1).
	for i := 0; i < n; i++ {
		k := g.Degree(i)
		if k < 2 {
			continue
		}
		var inv float64
		for dd, c := range counts[coff[i]+1 : coff[i+1]] {
			if c != 0 {
				inv += float64(c) / float64(dd+1)
			}
		}
		eloc[i] = inv / (float64(k) * float64(k-1))
	}
	return eloc, nil
}
