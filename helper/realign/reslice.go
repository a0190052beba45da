package realign

import (
	"context"
	"fmt"
	"sync"

	"github.com/hubscope/hubscope/helper/progress"
)

// resliceVolume samples vol (grid g) at W(x; p) for every voxel x of the reference grid into out
// and marks in covered which voxels fell inside the volume.
func resliceVolume(g Grid, vol []float32, m Affine, order Interp, scratch []float32, out []float32, covered []bool) {
	inv, _ := Inverse(g.Affine)
	v := Mul(inv, Mul(m, g.Affine))
	s := newSampler(g.Dims, vol, order, scratch)
	nx, ny, nz := g.Dims[0], g.Dims[1], g.Dims[2]
	f := 0
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			// y(i) = y(0) + i·v[:,0]: one matrix product per row.
			x0 := v[0][1]*float64(j) + v[0][2]*float64(k) + v[0][3]
			y0 := v[1][1]*float64(j) + v[1][2]*float64(k) + v[1][3]
			z0 := v[2][1]*float64(j) + v[2][2]*float64(k) + v[2][3]
			for i := 0; i < nx; i++ {
				fi := float64(i)
				val, ok := s.at(x0+v[0][0]*fi, y0+v[1][0]*fi, z0+v[2][0]*fi)
				out[f] = float32(val)
				covered[f] = ok
				f++
			}
		}
	}
}

// forVolumes runs fn(t, buffers) for every volume on opt.Workers goroutines, each with its own
// output, coverage and spline buffers; ctx is checked before each volume.
func forVolumes(ctx context.Context, g Grid, n int, opt Options, fn func(t int, out []float32, covered []bool, scratch []float32) error) error {
	type buffers struct {
		out     []float32
		cov     []bool
		scratch []float32
	}
	newBuffers := func() buffers {
		b := buffers{out: make([]float32, g.Len()), cov: make([]bool, g.Len())}
		if opt.Interp == BSpline {
			b.scratch = make([]float32, g.Len())
		}
		return b
	}
	return parallel(ctx, opt.Workers, n, newBuffers, func(_ context.Context, t int, b buffers) error {
		return fn(t, b.out, b.cov, b.scratch)
	})
}

// parallel runs fn(ctx, t, state) for t = 0..n−1 on up to workers goroutines, each with its own
// state from newState. The first error cancels the others and is returned; ctx is checked before
// each t is handed out, and its cancellation is returned as realign's error.
func parallel[S any](ctx context.Context, workers, n int, newState func() S, fn func(ctx context.Context, t int, s S) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newState()
			for t := range jobs {
				if err := fn(ctx, t, s); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		}()
	}
	for t := 0; t < n; t++ {
		if ctx.Err() != nil {
			break
		}
		jobs <- t
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("realign: %w", err)
	}
	return nil
}

// MeanResliced is the mean of the series resliced into the reference grid by params (about c);
// voxels that some volume does not cover average the volumes that do.
func MeanResliced(ctx context.Context, g Grid, vols [][]float32, params []Params, c [3]float64, opt Options, rep progress.Reporter) ([]float32, error) {
	opt = opt.withDefaults()
	rep = progress.OrDiscard(rep)
	var mu sync.Mutex
	sum := make([]float64, g.Len())
	cnt := make([]int32, g.Len())
	err := forVolumes(ctx, g, len(vols), opt, func(t int, out []float32, cov []bool, scratch []float32) error {
		resliceVolume(g, vols[t], params[t].Matrix(c), opt.Interp, scratch, out, cov)
		mu.Lock()
		for f, ok := range cov {
			if ok {
				sum[f] += float64(out[f])
				cnt[f]++
			}
		}
		mu.Unlock()
		rep.Add(1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	mean := make([]float32, g.Len())
	for f, s := range sum {
		if cnt[f] > 0 {
			mean[f] = float32(s / float64(cnt[f]))
		}
	}
	return mean, nil
}

// Reslice resamples every volume, in place, into the first volume's grid with the motion res
// found (opt.Interp). A voxel that some volume does not cover after its motion is set to 0 in
// every volume (SPM's reslice mask), so no series mixes real signal with the field of view's
// edge; the number of such voxels is returned. Progress: one unit per volume.
func Reslice(ctx context.Context, g Grid, vols [][]float32, res *Result, opt Options, rep progress.Reporter) (uncovered int, err error) {
	opt = opt.withDefaults()
	rep = progress.OrDiscard(rep)
	rep.Start("reslice", int64(len(vols)))
	var mu sync.Mutex
	all := make([]bool, g.Len())
	for i := range all {
		all[i] = true
	}
	err = forVolumes(ctx, g, len(vols), opt, func(t int, out []float32, cov []bool, scratch []float32) error {
		resliceVolume(g, vols[t], res.Params[t].Matrix(res.Center), opt.Interp, scratch, out, cov)
		copy(vols[t], out)
		mu.Lock()
		for f, ok := range cov {
			if !ok {
				all[f] = false
			}
		}
		mu.Unlock()
		rep.Add(1)
		return nil
	})
	if err != nil {
		return 0, err
	}
	for f, ok := range all {
		if !ok {
			uncovered++
			for _, v := range vols {
				v[f] = 0
			}
		}
	}
	return uncovered, nil
}

// Resample writes into out (grid g) the volume vol (same grid) sampled at m·x for the world
// position x of every voxel (0 where m·x falls outside the grid) and returns how many voxels
// fell inside. With m = Params.Matrix(c)⁻¹ it moves a head by the parameters (a phantom).
func Resample(g Grid, vol []float32, m Affine, order Interp, out []float32) int {
	cov := make([]bool, g.Len())
	var scratch []float32
	if order == BSpline {
		scratch = make([]float32, g.Len())
	}
	resliceVolume(g, vol, m, order, scratch, out, cov)
	n := 0
	for _, ok := range cov {
		if ok {
			n++
		}
	}
	return n
}
