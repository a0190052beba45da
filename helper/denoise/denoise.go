// Package denoise cleans voxel time series before correlation: drop of the first volumes,
// detrending, Butterworth or cosine-basis filtering, confound regression, censoring of
// volumes and standardisation, in the order and with the edge cases of nilearn 0.10.4's
// signal.clean: detrend, filter the signals and the confounds with the same filter, project
// the confounds out, standardise (Lindquist et al. 2019, Hum Brain Mapp 40:2358, "Modular
// preprocessing pipelines can reintroduce artifacts into fMRI data"). One deliberate
// difference: nilearn 0.10.4 interpolates censored volumes through ~sample_mask on an index
// array (a bitwise not: the mirror-image volumes), which leaves a censored volume whose
// mirror is censored too un-interpolated; here every censored volume is interpolated.
//
// Every step but the last is linear in a voxel's series once the confounds and the sample
// mask are fixed, so Compile builds the whole chain as one T'×T matrix (T' kept volumes) by
// running nilearn's steps on the identity in float64, and Apply multiplies every voxel's
// series by it with the network's float32 micro-kernel (O(N·T·T'), never N×N) and then
// standardises each row in float64. No I/O happens here.
package denoise

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hubscope/hubscope/helper/backend/cpu"
)

// Filters.
const (
	FilterNone        = ""
	FilterButterworth = "butterworth"
	FilterCosine      = "cosine"
)

// Standardisations (nilearn's standardize argument).
const (
	StandardizeNone     = ""
	ZScore              = "zscore"        // population SD (ddof 0)
	ZScoreSample        = "zscore_sample" // sample SD (ddof 1)
	PercentSignalChange = "psc"
)

// Options are signal.clean's arguments (names in nilearn's words where they exist).
type Options struct {
	// Drop removes the first Drop volumes (non-steady state) before anything else; the
	// confounds' and the sample mask's rows are counted on the original axis.
	Drop int `json:"drop_volumes,omitempty"`
	// Detrend removes the mean and the linear trend (nilearn's detrend=True). DetrendOrder > 1
	// also removes polynomial trends up to that order (orthogonal polynomials; order 1 is
	// nilearn's linear detrend exactly).
	Detrend      bool `json:"detrend"`
	DetrendOrder int  `json:"detrend_order,omitempty"`
	// Filter is "", "butterworth" or "cosine"; HighPass and LowPass are the band edges in Hz
	// (0 = that edge absent; nilearn's high_pass is the lower edge). Order is the Butterworth
	// order (nilearn's default 5). TR is the repetition time in seconds.
	Filter   string  `json:"filter,omitempty"`
	HighPass float64 `json:"high_pass,omitempty"`
	LowPass  float64 `json:"low_pass,omitempty"`
	Order    int     `json:"butterworth_order,omitempty"`
	TR       float64 `json:"t_r,omitempty"`
	// Standardize is "", "zscore", "zscore_sample" or "psc"; StandardizeConfounds z-scores
	// the confounds before the regression (nilearn's default true; false scales them by
	// their largest magnitude).
	Standardize          string `json:"standardize,omitempty"`
	StandardizeConfounds bool   `json:"standardize_confounds"`
}

// DefaultOrder is nilearn's Butterworth order.
const DefaultOrder = 5

// Plan is a compiled clean for one scan length, confound matrix and sample mask.
type Plan struct {
	T, Out int       // input and output volumes
	Kept   []int     // original indices of the output volumes
	m      []float64 // Out×T operator (mean-add folded in)
	m32    []float32
	ones   []float64 // m·1: what a constant series becomes
	std    string
	// ConfoundRank is the number of independent confound directions projected out.
	ConfoundRank int
}

// Compile builds the plan for series of t volumes. confounds is column-major (each column t
// values, on the original axis); sampleMask lists the volumes kept (ascending original
// indices; nil = all). It returns an error in words for impossible requests.
func Compile(t int, confounds [][]float64, sampleMask []int, o Options) (*Plan, error) {
	if err := o.check(t); err != nil {
		return nil, err
	}
	for j, c := range confounds {
		if len(c) != t {
			return nil, fmt.Errorf("confound %d has %d rows but the scan has %d volumes", j+1, len(c), t)
		}
		for i, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("confound %d has a non-finite value at volume %d", j+1, i)
			}
		}
	}
	// Drop the first volumes: the operator's first Drop columns stay zero.
	n := t - o.Drop
	conf := make([][]float64, len(confounds))
	for j, c := range confounds {
		conf[j] = slices.Clone(c[o.Drop:])
	}
	var mask []int
	if sampleMask != nil {
		for i, v := range sampleMask {
			if v < 0 || v >= t || (i > 0 && v <= sampleMask[i-1]) {
				return nil, fmt.Errorf("sample mask entry %d (%d) is not an ascending volume index below %d", i, v, t)
			}
			if v >= o.Drop {
				mask = append(mask, v-o.Drop)
			}
		}
		if len(mask) == 0 {
			return nil, errors.New("every volume is censored")
		}
		if len(mask) == n {
			mask = nil
		}
	}
	filter := o.Filter
	if filter == FilterButterworth && o.HighPass == 0 && o.LowPass == 0 {
		filter = FilterNone // nilearn: Butterworth with no cut-off is no filter
	}
	// The "signals": column c of s is what volume c of the (dropped) input contributes,
	// i.e. s starts as the n×n identity, stored column-major: s[c][time].
	s := make([][]float64, n)
	for c := range s {
		s[c] = make([]float64, n)
		s[c][c] = 1
	}
	if filter == FilterCosine {
		conf = cosineConfounds(conf, n, o.HighPass, o.TR)
	}
	rows := n // current number of time points
	kept := make([]int, 0, n)
	if mask == nil {
		for i := 0; i < n; i++ {
			kept = append(kept, i)
		}
	} else {
		kept = append(kept, mask...)
	}
	// Censoring: interpolate before a Butterworth filter, else censor now.
	if mask != nil {
		if filter == FilterButterworth {
			times := make([]float64, n)
			for i := range times {
				times[i] = float64(i) * o.TR
			}
			sp, err := newSpline(times, mask)
			if err != nil {
				return nil, err
			}
			for _, col := range s {
				sp.fill(col)
			}
			for _, col := range conf {
				sp.fill(col)
			}
		} else {
			for c := range s {
				s[c] = pick(s[c], mask)
			}
			for j := range conf {
				conf[j] = pick(conf[j], mask)
			}
			rows = len(mask)
		}
	}
	// nilearn's mean_signals, taken here, is added back before standardising when filtering
	// (and for psc after detrending).
	meanW := make([]float64, n)
	for c := range s {
		meanW[c] = mean(s[c])
	}
	if o.Detrend && rows > 1 {
		order := max(o.DetrendOrder, 1)
		basis := trendBasis(rows, order)
		for _, col := range s {
			detrend(col, basis)
		}
		for _, col := range conf {
			detrend(col, basis)
		}
	}
	if filter == FilterButterworth {
		if rows <= padLen(o) {
			return nil, fmt.Errorf("%d volumes are too few for the Butterworth filter (it needs more than %d)", rows, padLen(o))
		}
		b, a := butterBA(o.order(), o.HighPass, o.LowPass, 1/o.TR)
		ff, err := newFiltfilt(b, a)
		if err != nil {
			return nil, err
		}
		for _, col := range s {
			ff.apply(col, col)
		}
		for _, col := range conf {
			ff.apply(col, col)
		}
		if mask != nil {
			for c := range s {
				s[c] = pick(s[c], mask)
			}
			for j := range conf {
				conf[j] = pick(conf[j], mask)
			}
			rows = len(mask)
		}
	}
	rank := 0
	if len(conf) > 0 {
		if rows < len(conf)+2 {
			return nil, fmt.Errorf("%d uncensored volumes are too few for %d confounds (at least %d needed)", rows, len(conf), len(conf)+2)
		}
		for _, col := range conf {
			if o.StandardizeConfounds {
				zscore(col, 0)
			} else {
				mx := 0.0
				for _, v := range col {
					mx = math.Max(mx, math.Abs(v))
				}
				if mx == 0 {
					mx = 1
				}
				for i := range col {
					col[i] /= mx
				}
			}
		}
		q := pivotedQR(conf, 100*eps64)
		rank = len(q)
		for _, col := range s {
			for _, qj := range q {
				d := dot(qj, col)
				for i, v := range qj {
					col[i] -= d * v
				}
			}
		}
	}
	addMean := (o.Detrend && o.Standardize == PercentSignalChange) || filter == FilterButterworth
	p := &Plan{T: t, Out: rows, std: o.Standardize, ConfoundRank: rank, ones: make([]float64, rows)}
	for _, k := range kept {
		p.Kept = append(p.Kept, k+o.Drop)
	}
	p.m = make([]float64, rows*t)
	p.m32 = make([]float32, rows*t)
	for c := range s {
		for r := 0; r < rows; r++ {
			v := s[c][r]
			if addMean {
				v += meanW[c]
			}
			p.m[r*t+o.Drop+c] = v
			p.m32[r*t+o.Drop+c] = float32(v)
			p.ones[r] += v
		}
	}
	return p, nil
}

const eps64 = 2.220446049250313e-16

func (o Options) order() int {
	if o.Order > 0 {
		return o.Order
	}
	return DefaultOrder
}

// padLen is filtfilt's default padding: 3·(number of filter taps).
func padLen(o Options) int {
	if o.HighPass > 0 && o.LowPass > 0 {
		return 3 * (2*o.order() + 1)
	}
	return 3 * (o.order() + 1)
}

// check refuses impossible options with one line each.
func (o Options) check(t int) error {
	switch {
	case o.Drop < 0:
		return fmt.Errorf("cannot drop %d volumes", o.Drop)
	case o.Drop >= t:
		return fmt.Errorf("dropping %d volumes leaves none of the scan's %d", o.Drop, t)
	case o.DetrendOrder < 0:
		return fmt.Errorf("detrend order %d is negative", o.DetrendOrder)
	case o.Order < 0:
		return fmt.Errorf("butterworth order %d is negative", o.Order)
	}
	switch o.Standardize {
	case StandardizeNone, ZScore, ZScoreSample, PercentSignalChange:
	default:
		return fmt.Errorf("unknown standardisation %q (zscore, zscore_sample, psc or none)", o.Standardize)
	}
	switch o.Filter {
	case FilterNone:
		return nil
	case FilterButterworth, FilterCosine:
	default:
		return fmt.Errorf("unknown filter %q (butterworth or cosine)", o.Filter)
	}
	if o.HighPass < 0 || o.LowPass < 0 || math.IsNaN(o.HighPass) || math.IsNaN(o.LowPass) {
		return fmt.Errorf("band edges must be positive (high-pass %g Hz, low-pass %g Hz)", o.HighPass, o.LowPass)
	}
	if o.Filter == FilterButterworth && o.HighPass == 0 && o.LowPass == 0 {
		return nil
	}
	if !(o.TR > 0) || math.IsInf(o.TR, 0) {
		return fmt.Errorf("filtering needs the repetition time: set --tr SECONDS")
	}
	nyq := 0.5 / o.TR
	if o.Filter == FilterCosine {
		if o.HighPass == 0 {
			return errors.New("the cosine filter needs a high-pass cut-off")
		}
		return nil
	}
	if o.HighPass > 0 && o.LowPass > 0 && o.HighPass >= o.LowPass {
		return fmt.Errorf("band %g–%g Hz: the low edge must be below the high edge", o.HighPass, o.LowPass)
	}
	for _, f := range []float64{o.HighPass, o.LowPass} {
		if f >= nyq {
			return fmt.Errorf("band edge %g Hz is at or above the Nyquist frequency %g Hz of TR %g s (check --tr)", f, nyq, o.TR)
		}
	}
	return nil
}

func pick(v []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for i, k := range idx {
		out[i] = v[k]
	}
	return out
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// trendBasis returns orthonormal polynomial trends of degree 1..order on 0..n-1 (each
// orthogonal to the constant); degree 1 is nilearn's centred, unit-norm ramp.
func trendBasis(n, order int) [][]float64 {
	var basis [][]float64
	for d := 1; d <= order && d < n; d++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Pow(float64(i), float64(d))
		}
		detrend(v, basis) // Gram–Schmidt against the constant and the lower degrees
		nv := math.Sqrt(dot(v, v))
		if nv < eps64 {
			continue
		}
		for i := range v {
			v[i] /= nv
		}
		basis = append(basis, v)
	}
	return basis
}

// detrend is nilearn's _detrend: remove the mean, then the projection on each trend.
func detrend(v []float64, basis [][]float64) {
	m := mean(v)
	for i := range v {
		v[i] -= m
	}
	for _, b := range basis {
		p := dot(b, v)
		for i := range v {
			v[i] -= p * b[i]
		}
	}
}

// zscore centres v and divides by its SD (ddof 0 or 1; an SD below float64's epsilon counts
// as 1, as in nilearn).
func zscore(v []float64, ddof int) {
	if len(v) == 1 {
		return
	}
	m := mean(v)
	ss := 0.0
	for i := range v {
		v[i] -= m
		ss += v[i] * v[i]
	}
	sd := math.Sqrt(ss / float64(len(v)-ddof))
	if sd < eps64 {
		sd = 1
	}
	for i := range v {
		v[i] /= sd
	}
}

// cosineConfounds appends nilearn's cosine drift terms (the DCT-II basis below high_pass,
// create_cosine_drift without its constant) to the confounds, unless a confound already
// correlates above 0.9 with one of them (then the user's own drift terms are kept alone).
func cosineConfounds(conf [][]float64, n int, highPass, tr float64) [][]float64 {
	order := min(n-1, int(math.Floor(2*float64(n)*highPass*tr)))
	if order <= 0 {
		return conf
	}
	norm := math.Sqrt(2 / float64(n))
	cos := make([][]float64, order)
	for k := 1; k <= order; k++ {
		c := make([]float64, n)
		for i := range c {
			c[i] = norm * math.Cos(math.Pi/float64(n)*(float64(i)+0.5)*float64(k))
		}
		cos[k-1] = c
	}
	for _, c := range cos {
		for _, u := range conf {
			if corr(c, u) > 0.9 {
				return conf
			}
		}
	}
	return append(conf, cos...)
}

func corr(a, b []float64) float64 {
	ma, mb := mean(a), mean(b)
	var sab, saa, sbb float64
	for i := range a {
		x, y := a[i]-ma, b[i]-mb
		sab += x * y
		saa += x * x
		sbb += y * y
	}
	return sab / math.Sqrt(saa*sbb)
}

// Apply cleans the n series of x (row-major n×T, float32) into dst (n×Out). Each row is
// centred on its float64 mean before the float32 product so that a large baseline does not
// cost precision; the mean's contribution is added back exactly (μ·m·1).
func (p *Plan) Apply(dst, x []float32, n int) {
	// Blocks of rows bound the scratch memory (the centred copy) to applyBlock·T values
	// instead of a second N×T copy of the series (10⁶ voxels × 128: 512 MB).
	for i0 := 0; i0 < n; i0 += applyBlock {
		i1 := min(n, i0+applyBlock)
		p.applyRows(dst[i0*p.Out:i1*p.Out], x[i0*p.T:i1*p.T], i1-i0)
	}
}

// applyBlock is how many rows Apply centres and multiplies at a time (a variable for tests).
var applyBlock = 32768

func (p *Plan) applyRows(dst, x []float32, n int) {
	t, out := p.T, p.Out
	centred := make([]float32, n*t)
	means := make([]float64, n)
	parallel(n, func(i0, i1 int) {
		for i := i0; i < i1; i++ {
			row := x[i*t : (i+1)*t]
			s := 0.0
			for _, v := range row {
				s += float64(v)
			}
			m := s / float64(t)
			means[i] = m
			c := centred[i*t : (i+1)*t]
			for k, v := range row {
				c[k] = float32(float64(v) - m)
			}
		}
	})
	cpu.MulRows(dst, centred, n, t, p.m32, out)
	parallel(n, func(i0, i1 int) {
		buf := make([]float64, out)
		for i := i0; i < i1; i++ {
			row := dst[i*out : (i+1)*out]
			for k, v := range row {
				buf[k] = float64(v) + means[i]*p.ones[k]
			}
			p.standardize(buf)
			for k, v := range buf {
				row[k] = float32(v)
			}
		}
	})
}

// standardize is nilearn's standardize_signal(detrend=False) for one series.
func (p *Plan) standardize(v []float64) {
	if len(v) == 1 {
		return
	}
	switch p.std {
	case ZScore:
		zscore(v, 0)
	case ZScoreSample:
		zscore(v, 1)
	case PercentSignalChange:
		m := mean(v)
		if math.Abs(m) < eps64 {
			clear(v)
			return
		}
		for i := range v {
			v[i] = (v[i] - m) / math.Abs(m) * 100
		}
	}
}

// Operator returns the Out×T float64 matrix (row-major) the plan applies before
// standardising.
func (p *Plan) Operator() []float64 { return p.m }
