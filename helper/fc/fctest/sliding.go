package fctest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
)

// SlidingTol is the agreement demanded of incremental sliding windows (fc.Sliding) with the
// per-window float64 reference: weights within it, and a pair kept by one and not the other
// only when its reference value lies within it of the threshold.
const SlidingTol = 1e-6

// slidingData is clustered Gaussian series with rows offset far from zero (the centring must
// absorb the offset), one row constant in the volumes 10–39 (so in some windows and not in
// others) and one row constant throughout. N = 300 crosses tile edges of 32, 64 and 128.
func slidingData() Dataset {
	d := Gaussian("sliding", 300, 61, 6, 11)
	for i := 0; i < d.N; i += 5 {
		for q := 0; q < d.L; q++ {
			d.X[i*d.L+q] += 500
		}
	}
	for q := 10; q < 40; q++ {
		d.X[7*d.L+q] = 3.25
	}
	for q := 0; q < d.L; q++ {
		d.X[8*d.L+q] = -1
	}
	return d
}

// windowReference is every pair's Pearson r of the window [s0, s0+w) in float64 (rows
// normalised by two passes, then dot products), NaN for a row constant in the window.
func windowReference(d Dataset, s0, w int) []float64 {
	n := d.N
	u := make([]float64, n*w)
	ok := make([]bool, n)
	for i := 0; i < n; i++ {
		row := d.X[i*d.L+s0 : i*d.L+s0+w]
		for _, v := range row[1:] {
			if v != row[0] {
				ok[i] = true
				break
			}
		}
		var m float64
		for _, v := range row {
			m += float64(v)
		}
		m /= float64(w)
		var ss float64
		for q, v := range row {
			u[i*w+q] = float64(v) - m
			ss += u[i*w+q] * u[i*w+q]
		}
		for q := range row {
			u[i*w+q] /= math.Sqrt(ss)
		}
	}
	r := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if !ok[i] || !ok[j] {
				r[i*n+j] = math.NaN()
				continue
			}
			var s float64
			for q := 0; q < w; q++ {
				s += u[i*w+q] * u[j*w+q]
			}
			r[i*n+j] = s
		}
	}
	return r
}

// CheckSliding runs the incremental sliding windows of s against the per-window float64
// reference: steps 1, 2, 3 and 7 (the last three leave trailing volumes that fill no window),
// windows in several chunks, |r| and r, θ = 0 and 0.25, and every window at its own θ
// (SlidingJob.Thresholds, the density and significance modes' cuts); then the edge budget
// and cancellation.
func CheckSliding(t *testing.T, s fc.Sliding) {
	d := slidingData()
	ctx := context.Background()
	if err := s.PrepareSliding(ctx, d.X, d.N, d.L); err != nil {
		t.Fatalf("PrepareSliding: %v", err)
	}
	n := d.N
	for _, c := range []struct {
		w, step int
		chunks  []int // windows per chunk, the rest in the last
		theta   float64
		abs     bool
		own     bool // window k at θ + 0.03·(k mod 4) through Thresholds
	}{
		{20, 1, []int{1, 12}, 0.25, false, false},
		{20, 3, []int{5}, 0.25, true, false},
		{33, 7, []int{2}, 0, false, false},
		{48, 1, nil, 0.4, true, false},
		{24, 2, []int{3, 7}, 0.2, true, true},
		{24, 1, nil, 0.25, false, true},
	} {
		k := (d.L-c.w)/c.step + 1
		name := fmt.Sprintf("w=%d/s=%d/theta=%g/abs=%v/own=%v", c.w, c.step, c.theta, c.abs, c.own)
		thetas := make([]float64, k)
		for kk := range thetas {
			thetas[kk] = c.theta
			if c.own {
				thetas[kk] += 0.03 * float64(kk%4)
			}
		}
		got := make([][]fc.Edge, k)
		for first, p := 0, 0; first < k; p++ {
			count := k - first
			if p < len(c.chunks) {
				count = min(count, c.chunks[p])
			}
			job := fc.SlidingJob{Window: c.w, Step: c.step, First: first, Count: count, Threshold: c.theta, Abs: c.abs}
			if c.own {
				job.Threshold, job.Thresholds = -1, thetas[first:first+count] // Threshold unused
			}
			if err := s.SlidingEdges(ctx, job, got[first:first+count]); err != nil {
				t.Fatalf("%s: SlidingEdges %+v: %v", name, job, err)
			}
			for c := first; c < first+count; c++ {
				got[c] = slices.Clone(got[c]) // the backend may reuse its buffer next call
			}
			first += count
		}
		total, near := 0, 0
		for kk := 0; kk < k; kk++ {
			ref := windowReference(d, kk*c.step, c.w)
			theta := thetas[kk]
			seen := make(map[int]float32, len(got[kk]))
			for _, e := range got[kk] {
				i, j := int(e.I), int(e.J)
				if i >= j || j >= n {
					t.Fatalf("%s window %d: edge (%d,%d) is not i < j < N", name, kk, i, j)
				}
				if _, dup := seen[i*n+j]; dup {
					t.Fatalf("%s window %d: pair (%d,%d) emitted twice", name, kk, i, j)
				}
				seen[i*n+j] = e.W
			}
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					r := ref[i*n+j]
					w, has := seen[i*n+j]
					if math.IsNaN(r) {
						if has {
							t.Fatalf("%s window %d: edge (%d,%d) on a row constant in the window", name, kk, i, j)
						}
						continue
					}
					if c.abs {
						r = math.Abs(r)
					}
					if (r > theta) != has {
						if math.Abs(r-theta) > SlidingTol {
							t.Fatalf("%s window %d: pair (%d,%d) r = %.9f: kept %v against θ = %g", name, kk, i, j, r, has, theta)
						}
						near++
						continue
					}
					if has {
						total++
						if math.Abs(float64(w)-r) > SlidingTol {
							t.Fatalf("%s window %d: pair (%d,%d) weight %.9f, reference %.9f", name, kk, i, j, w, r)
						}
					}
				}
			}
		}
		if total < 100*k || near > total/100+2 {
			t.Fatalf("%s: %d edges over %d windows (%d near the threshold): the comparison proves little", name, total, k, near)
		}
	}
	// Past the edge budget: ErrSlidingBudget, no partial answer to use.
	out := make([][]fc.Edge, 4)
	if err := s.SlidingEdges(ctx, fc.SlidingJob{Window: 20, Step: 1, Count: 4, Threshold: 0.1, MaxEdges: 10}, out); !errors.Is(err, fc.ErrSlidingBudget) {
		t.Errorf("10-edge budget: %v, want ErrSlidingBudget", err)
	}
	// Windows past the series, a negative threshold (as one window's own), too few thresholds:
	// refused.
	for _, job := range []fc.SlidingJob{{Window: 20, Step: 1, First: 40, Count: 3}, {Window: 20, Step: 1, Count: 1, Threshold: -0.1},
		{Window: 20, Step: 1, Count: 2, Thresholds: []float64{0.3, -0.1}}, {Window: 20, Step: 1, Count: 3, Thresholds: []float64{0.3, 0.3}}} {
		if err := s.SlidingEdges(ctx, job, out); err == nil {
			t.Errorf("job %+v accepted", job)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.SlidingEdges(cctx, fc.SlidingJob{Window: 20, Step: 1, Count: 4, Threshold: 0.3}, out); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v, want context.Canceled", err)
	}
}
