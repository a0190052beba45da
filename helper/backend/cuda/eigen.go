//go:build cuda

package cuda

import (
	"context"
	"errors"
	"math"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/kernels"
	"gorgonia.org/cu"
)

// PowerIterate runs eigenvector centrality's power iteration on the device
// (graph.PowerIterator): y = (A+I)x (csr_products, the host's summation order), m = max y
// (eigen_max), y /= m and the change max|y − x| (eigen_scale), the two scalars copied back per
// iteration; the iterates are the host's bit for bit.
func (a *graphAccel) PowerIterate(ctx context.Context, g *graph.Graph, x0 []float64, maxIter int, tol float64) ([]float64, float64, float64, bool, error) {
	n := g.N
	x := make([]float64, n)
	var m, change float64
	var converged bool
	err := a.b.do(func() error {
		d, err := a.device(g)
		if err != nil {
			return err
		}
		if err := a.room(16*int64(n) + 16); err != nil {
			return err
		}
		buf, err := alloc("eigenvector iterates", 16*n+16)
		if err != nil {
			return err
		}
		defer cu.MemFree(buf)
		dx, dy := buf, buf+cu.DevicePtr(8*n)
		scalars := buf + cu.DevicePtr(16*n) // m's bits, change's bits
		if err := upload(dx, x0, "eigenvector start"); err != nil {
			return err
		}
		grid := min(ceilDiv(n, 256), 1024)
		got := make([]uint64, 2)
		for it := 0; it < maxIter; it++ {
			if it%64 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := cu.MemsetD32(scalars, 0, 4); err != nil {
				return err
			}
			if err := launch(kernels.CSRProducts, a.fn.csrProducts, ceilDiv(n, 256), 1, 256, 0, cu.Stream{},
				ptr(d.off), ptr(d.adj), ptr(dx), ptr(dy), i64(n), 1); err != nil {
				return err
			}
			if err := launch(kernels.EigenMax, a.fn.eigenMax, grid, 1, 256, 0, cu.Stream{}, ptr(dy), i64(n), ptr(scalars)); err != nil {
				return err
			}
			if err := launch(kernels.EigenScale, a.fn.eigenScale, grid, 1, 256, 0, cu.Stream{},
				ptr(dy), ptr(dx), i64(n), ptr(scalars), ptr(scalars+8)); err != nil {
				return err
			}
			if err := download(got, scalars, "power iteration scalars"); err != nil {
				return err
			}
			m, change = math.Float64frombits(got[0]), math.Float64frombits(got[1])
			dx, dy = dy, dx
			if change < tol {
				converged = true
				break
			}
		}
		return download(x, dx, "eigenvector")
	})
	if errors.Is(err, errNoRoom) {
		a.fallback("eigenvector centrality", g, err)
		return graph.CPU{}.PowerIterate(ctx, g, x0, maxIter, tol)
	}
	return x, m, change, converged, err
}
