package realign

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/hubscope/hubscope/helper/progress"
)

// Options tune the realignment. DefaultOptions documents the defaults.
type Options struct {
	// Interp samples the moving volumes during estimation and reslicing.
	Interp Interp
	// RegisterToMean adds SPM's second pass: after every volume is registered to the first,
	// the mean of the realigned series becomes the reference and every volume is registered
	// to it again (starting from the first pass). Parameters stay relative to the first volume.
	RegisterToMean bool
	// MaxIterations bounds the Gauss–Newton steps per pyramid level (default 40).
	MaxIterations int
	// Tolerance stops a level once a step moves no point of a 50 mm sphere by more than this many
	// mm (default 1e-3 at the finest level; coarser levels use it times their voxel ratio).
	Tolerance float64
	// SmoothFWHM (mm) smooths the reference and every volume before estimation, as SPM's
	// realign does (default 5 mm; negative: no smoothing). Reslicing uses the unsmoothed volumes.
	SmoothFWHM float64
	// Workers register volumes in parallel (default GOMAXPROCS).
	Workers int
}

// DefaultOptions: trilinear, two passes (first volume, then the mean), 5 mm smoothing, 40
// iterations a level, 0.001 mm tolerance, GOMAXPROCS workers.
func DefaultOptions() Options {
	return Options{Interp: Trilinear, RegisterToMean: true, MaxIterations: 40, Tolerance: 1e-3, SmoothFWHM: 5}
}

func (o Options) withDefaults() Options {
	if o.MaxIterations <= 0 {
		o.MaxIterations = 40
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 1e-3
	}
	if o.SmoothFWHM == 0 {
		o.SmoothFWHM = 5
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// Result is the motion of every volume relative to the first.
type Result struct {
	Params []Params   // per volume, relative to volume 0 (Params[0] = 0)
	FD     []float64  // framewise displacement (Power et al. 2012), FD[0] = 0
	Center [3]float64 // the rotation centre c (world mm): the middle of the grid
	Passes int        // 1 or 2 (registered to the first volume, then to the mean)
}

// ErrNoOverlap is returned when a volume, at some stage of the search, shares too little of the
// field of view with the reference to be registered.
var ErrNoOverlap = errors.New("volume does not overlap the reference")

// minOverlap is the share of a level's reference samples that must fall inside a moving volume.
const minOverlap = 0.25

// Estimate registers every volume of the series (vols[t] on grid g) rigidly to the first volume
// (and then to the mean of the realigned series when opt.RegisterToMean): inverse-compositional
// Gauss–Newton on the sum of squared intensity differences (Baker & Matthews 2004) over a
// coarse-to-fine pyramid, parallel over volumes. Progress: one unit per volume and pass (plus one
// per volume for the mean); ctx is checked at every iteration, so cancellation takes effect
// within milliseconds.
func Estimate(ctx context.Context, g Grid, vols [][]float32, opt Options, rep progress.Reporter) (*Result, error) {
	opt = opt.withDefaults()
	rep = progress.OrDiscard(rep)
	if len(vols) == 0 {
		return nil, errors.New("realign: no volumes")
	}
	for t, v := range vols {
		if len(v) != g.Len() {
			return nil, fmt.Errorf("realign: volume %d has %d voxels, the grid %d", t, len(v), g.Len())
		}
	}
	if _, ok := Inverse(g.Affine); !ok {
		return nil, errors.New("realign: the scan's affine is singular")
	}
	passes := 1
	if opt.RegisterToMean && len(vols) > 2 {
		passes = 2
	}
	total := int64(len(vols) * passes)
	if passes == 2 {
		total += int64(len(vols))
	}
	rep.Start("realign", total)
	c := g.Center()
	ref := newReference(g, vols[0], opt)
	init := make([]Params, len(vols))
	params, err := ref.registerAll(ctx, vols, init, rep)
	if err != nil {
		return nil, err
	}
	if passes == 2 {
		mean, err := MeanResliced(ctx, g, vols, params, c, opt, rep)
		if err != nil {
			return nil, err
		}
		ref = newReference(g, mean, opt)
		if params, err = ref.registerAll(ctx, vols, params, rep); err != nil {
			return nil, err
		}
		// Re-express every volume relative to the first, as SPM does: x ↦ M_t·M_0⁻¹.
		m0inv, _ := Inverse(params[0].Matrix(c))
		for t := range params {
			params[t] = ParamsOf(Mul(params[t].Matrix(c), m0inv), c)
		}
	}
	return &Result{Params: params, FD: FramewiseDisplacement(params), Center: c, Passes: passes}, nil
}

// Screen is a cheap first look at a series' motion (--realign auto decides with it whether the
// full realignment is worth its resampling): one pass, every volume registered to the first on
// the coarsest pyramid level only (voxels of ≥ 6 mm, an eighth or less of the samples), with a
// tolerance of 0.02 mm. Its parameters are within about 0.1 mm / 0.2° of the truth for motion of
// up to 3 mm / 3° (TestScreen): enough to tell a still scan from a moving one, at a fraction of
// Estimate's cost.
func Screen(ctx context.Context, g Grid, vols [][]float32, opt Options, rep progress.Reporter) (*Result, error) {
	opt = opt.withDefaults()
	opt.Tolerance = 0.02
	rep = progress.OrDiscard(rep)
	if len(vols) == 0 {
		return nil, errors.New("realign: no volumes")
	}
	for t, v := range vols {
		if len(v) != g.Len() {
			return nil, fmt.Errorf("realign: volume %d has %d voxels, the grid %d", t, len(v), g.Len())
		}
	}
	if _, ok := Inverse(g.Affine); !ok {
		return nil, errors.New("realign: the scan's affine is singular")
	}
	rep.Start("motion screen", int64(len(vols)))
	ref := newReference(g, vols[0], opt)
	ref.stop = len(ref.levels) - 1
	params, err := ref.registerAll(ctx, vols, make([]Params, len(vols)), rep)
	if err != nil {
		return nil, err
	}
	return &Result{Params: params, FD: FramewiseDisplacement(params), Center: g.Center(), Passes: 1}, nil
}

// MaxDisplacement is the largest displacement of any volume from the first (mm), measured as
// FD is (Power et al. 2012): |Δx| + |Δy| + |Δz| + 50 mm · (|Δrx| + |Δry| + |Δrz|).
func (r *Result) MaxDisplacement() float64 {
	var d float64
	for _, p := range r.Params {
		d = math.Max(d, math.Abs(p[0])+math.Abs(p[1])+math.Abs(p[2])+FDRadius*(math.Abs(p[3])+math.Abs(p[4])+math.Abs(p[5])))
	}
	return d
}

// level is one pyramid level of the reference: its grid and the samples the cost is summed over.
type level struct {
	dims   [3]int
	affine Affine // level voxel → world
	inv    Affine
	halve  [3]int // factors from the previous (finer) level to this one
	tol    float64
	ijk    [][3]float64
	val    []float64
	jac    [][6]float64
}

type reference struct {
	levels []level // finest first
	// stop is the finest level register solves on (0: all; Screen: the coarsest only).
	stop int
	c    [3]float64
	vs   [3]float64 // voxel sizes of the finest level (mm)
	opt  Options
}

// newReference builds the pyramid of the reference volume: levels are halved until the voxels
// reach 6 mm or an axis would drop below 8 voxels (at most 4 levels). Samples are the voxels
// of the head (see makeLevel) with a non-zero gradient; each carries the inverse-compositional Jacobian ∂R(W(x; p))/∂p at p = 0,
// [∇R, (x − c) × ∇R], with ∇R the central-difference gradient turned into world units.
func newReference(g Grid, vol []float32, opt Options) *reference {
	r := &reference{c: g.Center(), opt: opt, vs: voxelSizes(g.Affine)}
	cur, dims, aff := Smooth(vol, g.Dims, r.vs, opt.SmoothFWHM), g.Dims, g.Affine
	halve := [3]int{1, 1, 1}
	vs0 := voxelSizes(g.Affine)
	for l := 0; ; l++ {
		vs := voxelSizes(aff)
		ratio := math.Max(1, math.Min(vs[0], math.Min(vs[1], vs[2]))/math.Min(vs0[0], math.Min(vs0[1], vs0[2])))
		r.levels = append(r.levels, makeLevel(cur, dims, aff, halve, r.c, opt.Tolerance*ratio))
		f := halving(dims, 8)
		if l == 3 || f == [3]int{1, 1, 1} || math.Min(vs[0], math.Min(vs[1], vs[2])) >= 6 {
			break
		}
		cur, dims = downsample(cur, dims, f)
		aff = scaleAffine(aff, f)
		halve = f
	}
	return r
}

func makeLevel(vol []float32, dims [3]int, aff Affine, halve [3]int, c [3]float64, tol float64) level {
	inv, _ := Inverse(aff)
	lv := level{dims: dims, affine: aff, inv: inv, halve: halve, tol: tol}
	var mean float64
	for _, v := range vol {
		mean += float64(v)
	}
	mean /= float64(len(vol))
	// The head: an eighth of the mean of the voxels above the global mean (SPM's mean/8 rule,
	// taken over the bright voxels so that the ghosting and noise around a real EPI head —
	// often a third of the field of view at a tenth of the brain's intensity — stay out).
	var bright float64
	var nb int
	for _, v := range vol {
		if float64(v) > mean {
			bright += float64(v)
			nb++
		}
	}
	thr := mean / 8
	if nb > 0 {
		thr = bright / float64(nb) / 8
	}
	nx, ny, nz := dims[0], dims[1], dims[2]
	st := [3]int{1, nx, nx * ny}
	n := [3]int{nx, ny, nz}
	for k := 0; k < nz; k++ {
		for j := 0; j < ny; j++ {
			for i := 0; i < nx; i++ {
				f := i + nx*(j+ny*k)
				v := float64(vol[f])
				if !(v > thr) {
					continue
				}
				pos := [3]int{i, j, k}
				var gv [3]float64
				for a := 0; a < 3; a++ {
					lo, hi, h := f, f, 0.0
					if pos[a] > 0 {
						lo -= st[a]
						h++
					}
					if pos[a] < n[a]-1 {
						hi += st[a]
						h++
					}
					if h > 0 {
						gv[a] = (float64(vol[hi]) - float64(vol[lo])) / h
					}
				}
				// World gradient: ∇_x R = A⁻ᵀ ∇_ijk R.
				var gw [3]float64
				for a := 0; a < 3; a++ {
					gw[a] = inv[0][a]*gv[0] + inv[1][a]*gv[1] + inv[2][a]*gv[2]
				}
				if gw == [3]float64{} {
					continue
				}
				x := Apply(aff, [3]float64{float64(i), float64(j), float64(k)})
				d := [3]float64{x[0] - c[0], x[1] - c[1], x[2] - c[2]}
				lv.ijk = append(lv.ijk, [3]float64{float64(i), float64(j), float64(k)})
				lv.val = append(lv.val, v)
				lv.jac = append(lv.jac, [6]float64{
					gw[0], gw[1], gw[2],
					d[1]*gw[2] - d[2]*gw[1],
					d[2]*gw[0] - d[0]*gw[2],
					d[0]*gw[1] - d[1]*gw[0],
				})
			}
		}
	}
	return lv
}

// worker holds one goroutine's moving pyramid and spline scratch.
type worker struct {
	pyr     [][]float32
	scratch [][]float32
}

func (r *reference) registerAll(ctx context.Context, vols [][]float32, init []Params, rep progress.Reporter) ([]Params, error) {
	out := make([]Params, len(vols))
	newWorker := func() *worker { return &worker{} }
	err := parallel(ctx, r.opt.Workers, len(vols), newWorker, func(ctx context.Context, t int, wk *worker) error {
		p, err := r.register(ctx, wk, vols[t], init[t])
		if err != nil {
			return fmt.Errorf("realign: volume %d: %w", t, err)
		}
		out[t] = p
		rep.Add(1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// register estimates one volume's parameters, coarse to fine, starting from init.
func (r *reference) register(ctx context.Context, wk *worker, vol []float32, init Params) (Params, error) {
	nl := len(r.levels)
	if len(wk.pyr) != nl {
		wk.pyr = make([][]float32, nl)
		wk.scratch = make([][]float32, nl)
	}
	wk.pyr[0] = Smooth(vol, r.levels[0].dims, r.vs, r.opt.SmoothFWHM)
	for l := 1; l < nl; l++ {
		wk.pyr[l], _ = downsample(wk.pyr[l-1], r.levels[l-1].dims, r.levels[l].halve)
	}
	m := init.Matrix(r.c)
	for l := nl - 1; l >= r.stop; l-- {
		lv := &r.levels[l]
		if r.opt.Interp == BSpline && len(wk.scratch[l]) < len(wk.pyr[l]) {
			wk.scratch[l] = make([]float32, len(wk.pyr[l]))
		}
		s := newSampler(lv.dims, wk.pyr[l], r.opt.Interp, wk.scratch[l])
		var err error
		if m, err = r.solveLevel(ctx, lv, &s, m); err != nil {
			return Params{}, err
		}
	}
	return ParamsOf(m, r.c), nil
}

// solveLevel runs Gauss–Newton steps on one level: with e = I(W(x; p)) − R(x) over the samples
// inside the moving volume, Δp = H⁻¹ Σ Jᵀe, H = Σ JᵀJ, and W ← W ∘ W(Δp)⁻¹. A step that raises
// the mean squared difference is taken back and retried at half its length (a backtracking line
// search): with noise and a field of view that cuts the head, plain Gauss–Newton can otherwise
// cycle between a few points instead of converging.
func (r *reference) solveLevel(ctx context.Context, lv *level, s *sampler, m Affine) (Affine, error) {
	if len(lv.ijk) < 12 {
		return m, nil // nothing to register on at this level (a tiny or empty volume)
	}
	prevM, prevMSE := m, math.Inf(1)
	var prevDp [6]float64
	prevMove, scale := math.Inf(1), 1.0
	for it := 0; it < r.opt.MaxIterations; it++ {
		if err := ctx.Err(); err != nil {
			return m, err
		}
		v := Mul(lv.inv, Mul(m, lv.affine)) // reference voxel → moving voxel
		var h [21]float64
		var b [6]float64
		var sse float64
		n := 0
		for q, x := range lv.ijk {
			y0 := v[0][0]*x[0] + v[0][1]*x[1] + v[0][2]*x[2] + v[0][3]
			y1 := v[1][0]*x[0] + v[1][1]*x[1] + v[1][2]*x[2] + v[1][3]
			y2 := v[2][0]*x[0] + v[2][1]*x[1] + v[2][2]*x[2] + v[2][3]
			iv, ok := s.at(y0, y1, y2)
			if !ok {
				continue
			}
			n++
			e := iv - lv.val[q]
			sse += e * e
			j := &lv.jac[q]
			idx := 0
			for a := 0; a < 6; a++ {
				b[a] += j[a] * e
				for c := a; c < 6; c++ {
					h[idx] += j[a] * j[c]
					idx++
				}
			}
		}
		if float64(n) < minOverlap*float64(len(lv.ijk)) {
			return m, ErrNoOverlap
		}
		mse := sse / float64(n)
		if mse > prevMSE {
			// The last step made things worse: retry it from where it started, shorter — unless
			// it was already small (the cost's floor: noise and interpolation), then stop there.
			scale /= 2
			if scale < 1.0/64 || prevMove*scale < 10*lv.tol {
				return prevM, nil
			}
			m = stepFrom(prevM, prevDp, scale, r.c)
			continue
		}
		prevM, prevMSE = m, mse
		dp, ok := solve6(h, b)
		if !ok {
			return m, errors.New("registration is degenerate (the reference has no structure to align)")
		}
		prevDp = dp
		scale = math.Min(1, 2*scale)
		m = stepFrom(m, dp, scale, r.c)
		move := scale * (math.Sqrt(dp[0]*dp[0]+dp[1]*dp[1]+dp[2]*dp[2]) + FDRadius*math.Sqrt(dp[3]*dp[3]+dp[4]*dp[4]+dp[5]*dp[5]))
		prevMove = move
		if math.IsNaN(move) {
			return m, errors.New("registration diverged")
		}
		if move < lv.tol {
			break
		}
	}
	return m, nil
}

// stepFrom is the inverse-compositional update m ∘ W(scale·Δp)⁻¹.
func stepFrom(m Affine, dp [6]float64, scale float64, c [3]float64) Affine {
	var p Params
	for k := range p {
		p[k] = scale * dp[k]
	}
	inv, _ := Inverse(p.Matrix(c))
	return Mul(m, inv)
}

// solve6 solves H·x = b for the symmetric positive definite H given by its upper triangle
// (row-major), by Cholesky factorisation.
func solve6(h [21]float64, b [6]float64) ([6]float64, bool) {
	var a [6][6]float64
	idx := 0
	for i := 0; i < 6; i++ {
		for j := i; j < 6; j++ {
			a[i][j], a[j][i] = h[idx], h[idx]
			idx++
		}
	}
	var l [6][6]float64
	for i := 0; i < 6; i++ {
		for j := 0; j <= i; j++ {
			s := a[i][j]
			for k := 0; k < j; k++ {
				s -= l[i][k] * l[j][k]
			}
			if i == j {
				if !(s > 1e-12*a[i][i]) || s <= 0 {
					return [6]float64{}, false
				}
				l[i][i] = math.Sqrt(s)
			} else {
				l[i][j] = s / l[j][j]
			}
		}
	}
	var y, x [6]float64
	for i := 0; i < 6; i++ {
		s := b[i]
		for k := 0; k < i; k++ {
			s -= l[i][k] * y[k]
		}
		y[i] = s / l[i][i]
	}
	for i := 5; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < 6; k++ {
			s -= l[k][i] * x[k]
		}
		x[i] = s / l[i][i]
	}
	return x, true
}
