//go:build cuda

package cuda

import (
	"fmt"
	"math"

	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/kernels"
	"gorgonia.org/cu"
)

// BindGroup uploads one group's modularity matrix B^(G) and returns a Lanczos basis of
// capacity vectors on the device (community.KrylovDevice): the leading-eigenvector method's
// products (modularity_apply, its rank-1 term a dot product) and Gram–Schmidt passes
// (krylov_dots, krylov_sum, krylov_combine: classical Gram–Schmidt run twice) stay on the
// device, and only the projected coefficients and a norm come back per product.
func (a *graphAccel) BindGroup(op community.GroupOperator, capacity int) (community.KrylovBasis, error) {
	n := len(op.K)
	if n == 0 || capacity < 2 || len(op.Offsets) != n+1 || len(op.RowSum) != n {
		return nil, fmt.Errorf("cuda backend: a group of %d nodes with %d offsets and capacity %d", n, len(op.Offsets), capacity)
	}
	k := &deviceKrylov{a: a, n: n, capacity: capacity, chunks: ceilDiv(n, 2048), twoM: op.TwoM, apply: -1}
	err := a.b.do(func() error {
		if err := a.load(); err != nil {
			return err
		}
		nnz := len(op.Adj)
		keep := 12
		need := int64(8*(n+1)+4*nnz+8*len(op.Weights)+16*n) + 8*int64(n)*int64(capacity+1+keep) + 8*int64(capacity*(k.chunks+2+keep)+4)
		if err := a.room(need); err != nil {
			return err
		}
		var err error
		for _, q := range []struct {
			p     *cu.DevicePtr
			bytes int
		}{
			{&k.off, 8 * (n + 1)}, {&k.adj, 4 * max(nnz, 1)}, {&k.k, 8 * n}, {&k.rowSum, 8 * n},
			{&k.basis, 8 * n * capacity}, {&k.w, 8 * n}, {&k.tmp, 8 * n * keep},
			{&k.partial, 8 * capacity * k.chunks}, {&k.coef, 8 * capacity}, {&k.out, 8 * capacity},
			{&k.cbuf, 8 * capacity * keep}, {&k.scalars, 8 * 4},
		} {
			if *q.p, err = alloc("Lanczos basis", q.bytes); err != nil {
				return err
			}
		}
		if len(op.Weights) > 0 {
			if k.wts, err = alloc("group weights", 8*len(op.Weights)); err != nil {
				return err
			}
			if err := upload(k.wts, op.Weights, "group weights"); err != nil {
				return err
			}
		}
		if err := upload(k.off, op.Offsets, "group offsets"); err != nil {
			return err
		}
		if err := upload(k.adj, op.Adj, "group adjacency"); err != nil {
			return err
		}
		if err := upload(k.k, op.K, "group degrees"); err != nil {
			return err
		}
		return upload(k.rowSum, op.RowSum, "group row sums")
	})
	if err != nil {
		k.Close()
		return nil, err
	}
	return k, nil
}

// deviceKrylov is a community.KrylovBasis on the device: vector i of the basis at basis + i·n.
type deviceKrylov struct {
	// Apply and Store only record what to do (apply, stores); the next call that needs the
	// device does it first, so a Lanczos step is one device call.
	apply  int // slot to multiply by B^(G) next, −1 none
	stores []pendingStore

	a                                 *graphAccel
	n, capacity, chunks               int
	twoM                              float64
	off, adj, wts, k, rowSum          cu.DevicePtr
	basis, w, tmp                     cu.DevicePtr
	partial, coef, out, cbuf, scalars cu.DevicePtr
}

type pendingStore struct {
	slot int
	div  float64
}

func (d *deviceKrylov) slot(i int) cu.DevicePtr { return d.basis + cu.DevicePtr(8*d.n*i) }

// do runs f on the device thread after the recorded stores and product, through the urgent
// queue (the Lanczos iteration waits on every step).
func (d *deviceKrylov) do(f func() error) error {
	return d.a.b.doUrgent(func() error {
		for _, st := range d.stores {
			if err := d.store(d.slot(st.slot), st.div); err != nil {
				return err
			}
		}
		d.stores = d.stores[:0]
		if d.apply >= 0 {
			j := d.apply
			d.apply = -1
			x := d.slot(j)
			if err := d.dots(d.k, 1, x, d.scalars, 0); err != nil {
				return err
			}
			if err := launch(kernels.ModularityApply, d.a.fn.modularityApply, ceilDiv(d.n, 256), 1, 256, 0, cu.Stream{},
				ptr(d.off), ptr(d.adj), ptr(d.wts), ptr(d.k), ptr(d.rowSum), ptr(d.scalars), f64(d.twoM), ptr(x), ptr(d.w), i64(d.n)); err != nil {
				return err
			}
		}
		return f()
	})
}

// dots sets out[0 … count) = v_iᵀ x for the count vectors from vs (adding them to coef unless
// coef is 0).
func (d *deviceKrylov) dots(vs cu.DevicePtr, count int, x, out, coef cu.DevicePtr) error {
	f := &d.a.fn
	if err := launch(kernels.KrylovDots, f.krylovDots, d.chunks, count, 256, 0, cu.Stream{},
		ptr(vs), i64(d.n), ptr(x), ptr(d.partial), i64(d.chunks)); err != nil {
		return err
	}
	return launch(kernels.KrylovSum, f.krylovSum, ceilDiv(count, 256), 1, 256, 0, cu.Stream{},
		ptr(d.partial), i64(d.chunks), i64(count), ptr(out), ptr(coef))
}

// combine sets y = beta·y + alpha·Σ_{i<count} c[i] v_i.
func (d *deviceKrylov) combine(count int, c, y cu.DevicePtr, beta, alpha float64) error {
	return launch(kernels.KrylovCombine, d.a.fn.krylovCombine, ceilDiv(d.n, 256), 1, 256, 0, cu.Stream{},
		ptr(d.basis), i64(d.n), i64(count), ptr(c), ptr(y), f64(beta), f64(alpha))
}

// gramSchmidt makes w orthogonal to v_0 … v_j by two classical passes and sets
// res[j+1] = ‖w‖². With coefficients, res[0 … j] are the two passes' coefficients summed: the
// first pass writes them there and the second adds to them, so nothing needs clearing. The
// caller downloads res.
func (d *deviceKrylov) gramSchmidt(j int, res cu.DevicePtr, coefficients bool) error {
	out1, acc2 := d.out, cu.DevicePtr(0)
	if coefficients {
		out1, acc2 = res, res
	}
	for _, p := range [2]struct{ out, acc cu.DevicePtr }{{out1, 0}, {d.out, acc2}} {
		if err := d.dots(d.basis, j+1, d.w, p.out, p.acc); err != nil {
			return err
		}
		if err := d.combine(j+1, p.out, d.w, 1, -1); err != nil {
			return err
		}
	}
	return d.dots(d.w, 1, d.w, res+cu.DevicePtr(8*(j+1)), 0)
}

func (d *deviceKrylov) Start(x []float64) error {
	return d.do(func() error { return upload(d.basis, x, "Lanczos start vector") })
}

// Apply records the product w = B^(G) v_j, done by the next call (Orthogonalize).
func (d *deviceKrylov) Apply(j int) error {
	d.apply = j
	return nil
}

func (d *deviceKrylov) Orthogonalize(j int, coef []float64) (float64, error) {
	var nrm float64
	err := d.do(func() error {
		if err := d.gramSchmidt(j, d.coef, true); err != nil {
			return err
		}
		// The coefficients and ‖w‖² in one copy: each step waits on one transfer.
		c := make([]float64, j+2)
		if err := download(c, d.coef, "Lanczos coefficients"); err != nil {
			return err
		}
		for i, v := range c[:j+1] {
			coef[i] += v
		}
		nrm = math.Sqrt(c[j+1])
		return nil
	})
	return nrm, err
}

func (d *deviceKrylov) Fresh(x []float64, j int) (float64, error) {
	var nrm float64
	err := d.do(func() error {
		if err := upload(d.w, x, "Lanczos direction"); err != nil {
			return err
		}
		if err := d.gramSchmidt(j, d.cbuf, false); err != nil {
			return err
		}
		s := make([]float64, 1)
		if err := download(s, d.cbuf+cu.DevicePtr(8*(j+1)), "Lanczos norm"); err != nil {
			return err
		}
		if nrm = math.Sqrt(s[0]); nrm > 0 {
			return d.store(d.w, nrm)
		}
		return nil
	})
	return nrm, err
}

func (d *deviceKrylov) store(dst cu.DevicePtr, div float64) error {
	return launch(kernels.KrylovStore, d.a.fn.krylovStore, ceilDiv(d.n, 256), 1, 256, 0, cu.Stream{},
		ptr(d.w), i64(d.n), f64(div), ptr(dst))
}

// Store records v_slot = w / div, done by the next call (before anything else touches w).
func (d *deviceKrylov) Store(slot int, div float64) error {
	d.stores = append(d.stores, pendingStore{slot, div})
	return nil
}

func (d *deviceKrylov) Restart(c [][]float64) error {
	keep := len(c)
	if keep > 12 {
		return fmt.Errorf("cuda backend: a restart keeping %d vectors (at most 12)", keep)
	}
	return d.do(func() error {
		m := len(c[0])
		flat := make([]float64, 0, keep*m)
		for _, r := range c {
			flat = append(flat, r...)
		}
		if err := upload(d.cbuf, flat, "Ritz coefficients"); err != nil {
			return err
		}
		vec := cu.DevicePtr(8 * d.n)
		for r := 0; r < keep; r++ {
			if err := d.combine(m, d.cbuf+cu.DevicePtr(8*m*r), d.tmp+vec*cu.DevicePtr(r), 0, 1); err != nil {
				return err
			}
		}
		if err := cu.MemcpyDtoD(d.slot(keep), d.slot(d.capacity-1), int64(8*d.n)); err != nil {
			return fmt.Errorf("cuda backend: moving the residual direction: %w", err)
		}
		if err := cu.MemcpyDtoD(d.basis, d.tmp, int64(8*d.n*keep)); err != nil {
			return fmt.Errorf("cuda backend: storing Ritz vectors: %w", err)
		}
		return nil
	})
}

func (d *deviceKrylov) Combination(c []float64) ([]float64, error) {
	x := make([]float64, d.n)
	err := d.do(func() error {
		if err := upload(d.cbuf, c, "Ritz coefficients"); err != nil {
			return err
		}
		if err := d.combine(len(c), d.cbuf, d.tmp, 0, 1); err != nil {
			return err
		}
		return download(x, d.tmp, "Ritz vector")
	})
	return x, err
}

func (d *deviceKrylov) Close() {
	_ = d.a.b.do(func() error {
		for _, p := range []*cu.DevicePtr{&d.off, &d.adj, &d.wts, &d.k, &d.rowSum, &d.basis, &d.w, &d.tmp,
			&d.partial, &d.coef, &d.out, &d.cbuf, &d.scalars} {
			if *p != 0 {
				cu.MemFree(*p)
				*p = 0
			}
		}
		return nil
	})
}
