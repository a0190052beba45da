package group

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/hubscope/hubscope/helper/scan"
)

// timing is how the subjects' time axes are made one: the common TR and length, and for each
// subject whose TR differs the resampling onto the common TR.
type timing struct {
	tr      float64
	length  int          // the cohort's volumes per subject, before cleaning removes any
	lengths []int        // each subject's volumes at the common TR, before truncation
	matrix  []*resampler // nil where the subject's TR is the common one
	resamp  []bool
	notes   []string
}

func (tp *timing) resampledWords(i int) string {
	if tp.resamp[i] {
		return fmt.Sprintf(" and resampling to TR %g s", tp.tr)
	}
	return ""
}

// planTiming decides the common time axis (docs/algorithms.md, "Group-mean networks"):
//
//   - TRs that differ (by more than 0.1 %) are made one by resampling every other subject to
//     the group's longest TR, the coarsest sampling present, so that no subject is upsampled
//     beyond what it measured: band-limited interpolation cut at the new Nyquist frequency
//     (resampler). A subject whose TR is unknown (0) cannot be placed on a time axis and is
//     refused.
//   - Lengths (at the common TR) that differ are refused, naming the subjects, unless truncate:
//     then every subject's first volumes, as many as the shortest has. A correlation over a
//     shorter window is still each subject's correlation; padding is not an option (it would
//     change every correlation).
func planTiming(subjects []Subject, svs []*scan.Survey, truncate bool) (*timing, error) {
	S := len(svs)
	tp := &timing{lengths: make([]int, S), matrix: make([]*resampler, S), resamp: make([]bool, S)}
	for _, sv := range svs {
		tp.tr = math.Max(tp.tr, sv.TR)
	}
	byTR := map[float64][]string{}
	var unknown []string
	for i, sv := range svs {
		tp.lengths[i] = sv.L
		if math.Abs(sv.TR-tp.tr) <= 1e-3*tp.tr {
			continue
		}
		if !(sv.TR > 0) {
			unknown = append(unknown, subjects[i].Label)
			continue
		}
		tp.resamp[i] = true
		byTR[sv.TR] = append(byTR[sv.TR], subjects[i].Label)
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("group: TR unknown for %s while others have %g s: give the subjects a TR (header pixdim[4] or a BIDS sidecar) to put them on one time axis", names(unknown), tp.tr)
	}
	if len(byTR) > 0 {
		cache := map[[2]float64]*resampler{}
		for i, sv := range svs {
			if !tp.resamp[i] {
				continue
			}
			key := [2]float64{float64(sv.L), sv.TR}
			if cache[key] == nil {
				cache[key] = newResampler(sv.L, sv.TR, tp.tr)
			}
			tp.matrix[i] = cache[key]
			tp.lengths[i] = cache[key].rows
		}
		trs := make([]float64, 0, len(byTR))
		for tr := range byTR {
			trs = append(trs, tr)
		}
		sort.Float64s(trs)
		var parts []string
		for _, tr := range trs {
			parts = append(parts, fmt.Sprintf("%d at %g s (%s)", len(byTR[tr]), tr, names(byTR[tr])))
		}
		tp.notes = append(tp.notes, fmt.Sprintf("TR: %s resampled to %g s, the group's longest TR, by band-limited interpolation (the mirrored series' cosine series, cut at the new Nyquist frequency)", strings.Join(parts, ", "), tp.tr))
	}
	tp.length = tp.lengths[0]
	longest := tp.lengths[0]
	for _, l := range tp.lengths {
		tp.length = min(tp.length, l)
		longest = max(longest, l)
	}
	if longest != tp.length {
		var bad []string
		for i, l := range tp.lengths {
			if l != tp.length {
				bad = append(bad, fmt.Sprintf("%s %d", subjects[i].Label, l))
			}
		}
		if !truncate {
			return nil, fmt.Errorf("group: subjects differ in length at TR %g s: %s volumes, where the shortest has %d (--truncate uses every subject's first %d)", tp.tr, names(bad), tp.length, tp.length)
		}
		var more []string
		for i, l := range tp.lengths {
			if l != tp.length {
				more = append(more, fmt.Sprintf("%s (%d)", subjects[i].Label, l))
			}
		}
		tp.notes = append(tp.notes, fmt.Sprintf("--truncate: every subject's first %d volumes at TR %g s, the shortest's length; %s had more", tp.length, tp.tr, names(more)))
	}
	return tp, nil
}

// names lists up to 5 names, then how many more.
func names(v []string) string {
	if len(v) <= 5 {
		return strings.Join(v, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(v[:5], ", "), len(v)-5)
}

// resampler maps a series of cols samples at TR from onto rows samples at TR to (the times
// k·to within the series' span): y = W·x.
//
// W is band-limited interpolation with mirrored ends: the series is extended evenly about
// both ends (period 2·cols, no jump where it wraps), written as its cosine series (DCT-II),
// x_j = X_0/cols + (2/cols) Σ_{m≥1} X_m cos(π m (j + ½)/cols), and that series, with the terms
// at or above the new Nyquist frequency 1/(2·to) dropped (term m oscillates at m/(2·cols·from)
// Hz), is evaluated at τ_k = k·to/from. At equal TRs it reproduces the samples exactly; a
// signal below the new Nyquist frequency is interpolated, one above it removed rather than
// aliased. Building W costs rows·cols·M operations once per (length, TR); applying it
// rows·cols per series.
type resampler struct {
	rows, cols int
	w          []float32
}

func newResampler(cols int, from, to float64) *resampler {
	rows := int(math.Floor(float64(cols-1)*from/to+1e-9)) + 1
	m := 0 // highest term kept
	for m+1 < cols && float64(m+1) < float64(cols)*from/to*(1-1e-12) {
		m++
	}
	// A[k][q] = weight · cos(π q (τ_k + ½)/cols), B[q][j] = cos(π q (j + ½)/cols).
	a := make([]float64, rows*(m+1))
	for k := 0; k < rows; k++ {
		tau := float64(k) * to / from
		for q := 0; q <= m; q++ {
			wt := 2.0 / float64(cols)
			if q == 0 {
				wt = 1.0 / float64(cols)
			}
			a[k*(m+1)+q] = wt * math.Cos(math.Pi*float64(q)*(tau+0.5)/float64(cols))
		}
	}
	b := make([]float64, (m+1)*cols)
	for q := 0; q <= m; q++ {
		for j := 0; j < cols; j++ {
			b[q*cols+j] = math.Cos(math.Pi * float64(q) * (float64(j) + 0.5) / float64(cols))
		}
	}
	r := &resampler{rows: rows, cols: cols, w: make([]float32, rows*cols)}
	row := make([]float64, cols)
	for k := 0; k < rows; k++ {
		clear(row)
		for q := 0; q <= m; q++ {
			aq := a[k*(m+1)+q]
			for j, bv := range b[q*cols : (q+1)*cols] {
				row[j] += aq * bv
			}
		}
		for j, v := range row {
			r.w[k*cols+j] = float32(v)
		}
	}
	return r
}

// apply writes the first len(dst) ≤ rows resampled values of x (cols values) into dst.
func (r *resampler) apply(dst, x []float32) {
	for k := range dst {
		var s float64
		for j, w := range r.w[k*r.cols : (k+1)*r.cols] {
			s += float64(w) * float64(x[j])
		}
		dst[k] = float32(s)
	}
}
