package dfc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/progress"
)

// Per-window cuts of the incremental path (docs/algorithms.md, "Dynamic connectivity",
// incremental windows with data-dependent thresholds). The strength mode cuts every window at
// the same r; the density and Bonferroni modes cut each window at a value of its own, which
// the sweep takes as fc.SlidingJob.Thresholds:
//
//   - Bonferroni: r ≥ CriticalValue(α/m_k, w), m_k = N_k(N_k−1)/2 over the window's N_k
//     non-constant series — an r threshold, fixed before the sweep.
//   - Density: exactly K_k = round(D·m_k) pairs, the strongest by (value desc, i, j), as
//     fc.Build's density mode keeps them. The sweep emits each window's candidates, every pair
//     above a lower bound read off a sample of pairs of that window (fc.SampleDensityBounds:
//     about K_k(1 + a few σ) pairs above it), and the window's K_k strongest are selected among
//     them on the host (selectStrongest). All pairs above the bound are candidates, so with at
//     least K_k of them the selection is the exact one; a window whose bound was too high
//     (fewer candidates than K_k: rare by construction, the bound sits 5σ above the expected
//     rank) is built from its own series by fc.Build, the per-window path, instead.

// MaxIncrementalDensity is the largest density the incremental path takes: above it the
// candidates approach all pairs of every window (and without --abs the k-th value nears r = 0,
// below which the sweep's θ ≥ 0 cannot reach), so the per-window path is as cheap.
const MaxIncrementalDensity = 0.25

// densitySampleNodes is the sample of each window's density bound: the nodes fc.Build's
// density mode samples (s(s−1)/2 = 179,700 pairs), their pairs swept incrementally too.
const densitySampleNodes = 600

// densityBoundHook, when set by a test, replaces every window's sampled density bound (to
// force the fallback of a window with too few candidates).
var densityBoundHook func(k int, bound float64) float64

// windowCuts are the per-window cuts of an incremental run.
type windowCuts struct {
	theta []float64 // every window's θ for the sweep
	keep  []int64   // density: every window's exact edge count; nil otherwise
	// reported is the window's reported threshold (Measures.Threshold) where it is not θ:
	// Bonferroni's inclusive r cut; nil: θ (strength) or the selected k-th value (density).
	reported []float64
	notes    []string
}

// pairsOf is m = N(N−1)/2 of a window with nv non-constant series.
func pairsOf(nv int) int64 { return int64(nv) * int64(nv-1) / 2 }

// newWindowCuts computes the cuts of the incremental path for the run's threshold mode (one of
// those incremental accepts). constant[k] is window k's constant series.
func newWindowCuts(ctx context.Context, x []float32, n, t int, plan Plan, constant []int, opt Options) (*windowCuts, error) {
	cfg, k := opt.FC, plan.Count()
	cuts := &windowCuts{theta: make([]float64, k)}
	switch cfg.Mode {
	case fc.Strength:
		for c := range cuts.theta {
			cuts.theta[c] = cfg.Threshold
		}
	case fc.Significance: // Bonferroni (incremental refuses FDR)
		cuts.reported = make([]float64, k)
		seen := map[int64]bool{}
		for c := range cuts.theta {
			m := pairsOf(n - constant[c])
			if m == 0 { // fewer than 2 series vary: emitChunk reports the window
				cuts.theta[c], cuts.reported[c] = 1, math.Inf(1)
				continue
			}
			v := fc.CriticalValue(cfg.Measure, cfg.Alpha/float64(m), plan.Window)
			cuts.theta[c], cuts.reported[c] = v, v
			if !seen[m] {
				seen[m] = true
				cuts.notes = append(cuts.notes, fmt.Sprintf("Bonferroni: p ≤ %g/%d ⇔ |%s| ≥ %.6f", cfg.Alpha, m, cfg.Measure, v))
			}
		}
	case fc.Density:
		cuts.keep = make([]int64, k)
		for c := range cuts.keep {
			cuts.keep[c] = int64(math.Round(cfg.Density * float64(pairsOf(n-constant[c]))))
		}
		if err := cuts.densityBounds(ctx, x, n, t, plan, constant, cfg); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("dfc: threshold mode %s has no incremental path", cfg.Mode)
	}
	if !cfg.Abs && (cfg.Mode == fc.Significance || cfg.Mode == fc.Density) {
		cuts.notes = append(cuts.notes, "negative correlations are not kept as links; ask for absolute values (--abs) to rank pairs by |r| instead")
	}
	return cuts, nil
}

// densityBounds sets every window's θ to the tight bound sampled from its own pairs: the
// sampled nodes' series go through fc.SlidingCPU at θ = 0 (every pair with r > 0, |r| > 0
// with Abs; the others cannot be among the strongest while θ ≥ 0), 16 windows at a time.
// With fewer than 50 nodes, or a bound the sample cannot give, θ = 0: every candidate.
func (cuts *windowCuts) densityBounds(ctx context.Context, x []float32, n, t int, plan Plan, constant []int, cfg fc.Config) error {
	s := min(densitySampleNodes, n)
	if s < 50 {
		return nil
	}
	nodes := fc.SampleNodes(n, s)
	xs := make([]float32, 0, s*t)
	for _, i := range nodes {
		xs = append(xs, x[i*t:(i+1)*t]...)
	}
	sl := &fc.SlidingCPU{}
	defer sl.Close()
	if err := sl.PrepareSliding(ctx, xs, s, t); err != nil {
		return err
	}
	const per = 16
	out := make([][]fc.Edge, per)
	vals := make([]float64, s*(s-1)/2)
	for first := 0; first < plan.Count(); first += per {
		count := min(per, plan.Count()-first)
		job := fc.SlidingJob{Window: plan.Window, Step: plan.Step, First: first, Count: count, Abs: cfg.Abs}
		if err := sl.SlidingEdges(ctx, job, out[:count]); err != nil {
			return err
		}
		for c := 0; c < count; c++ {
			kk := first + c
			for q := range vals {
				vals[q] = math.Inf(-1)
			}
			for _, e := range out[c] {
				a, b := int(e.I), int(e.J)
				vals[a*s-a*(a+1)/2+b-a-1] = float64(e.W)
			}
			tight, _, ok := fc.SampleDensityBounds(vals, s, cuts.keep[kk], pairsOf(n-constant[kk]))
			if ok && tight > 0 {
				cuts.theta[kk] = min(tight, 1)
			}
			if densityBoundHook != nil {
				cuts.theta[kk] = densityBoundHook(kk, cuts.theta[kk])
			}
		}
	}
	return nil
}

// selectStrongest keeps the k strongest of a window's candidates by (value desc, i, j) — the
// order fc.Build's density mode keeps them in — at the front of edges (in no particular order)
// and returns them with the k-th value; keys and ties are scratch. k ≤ len(edges).
func selectStrongest(edges []fc.Edge, k int64, keys *[]float32, ties *[]fc.Edge) ([]fc.Edge, float32) {
	if k == 0 {
		return edges[:0], float32(math.Inf(1))
	}
	kv := resize(*keys, len(edges))
	for p, e := range edges {
		kv[p] = e.W
	}
	v := fc.KthLargest(kv, int(k-1))
	*keys = kv
	q := 0
	tv := (*ties)[:0]
	for _, e := range edges {
		switch {
		case e.W > v:
			edges[q] = e
			q++
		case e.W == v:
			tv = append(tv, e)
		}
	}
	slices.SortFunc(tv, func(a, b fc.Edge) int {
		return cmp.Or(cmp.Compare(a.I, b.I), cmp.Compare(a.J, b.J))
	})
	q += copy(edges[q:k], tv)
	*ties = tv
	return edges[:q], v
}

// ownWindow is a window the incremental path left to its own series (fc.Build): its network,
// report and constant series.
type ownWindow struct {
	nw       *network.Network
	fr       *fc.Report
	constant int
}

// buildOwn builds window k's network from its own series on b, as Run's per-window path does
// (constant series left out, the network renumbered to all n nodes).
func buildOwn(ctx context.Context, b fc.Backend, x []float32, n, t int, plan Plan, k int, cfg fc.Config) (*ownWindow, error) {
	start, w := plan.Starts[k], plan.Window
	buf := make([]float32, n*w)
	for i := 0; i < n; i++ {
		copy(buf[i*w:(i+1)*w], x[i*t+start:i*t+start+w])
	}
	keep := nonConstantRows(buf, n, w)
	series, nv := buf, n
	if keep != nil {
		if len(keep) < 2 {
			return nil, fmt.Errorf("dfc: window %d (volumes %d–%d): only %d of %d series vary within it", k, start, start+w-1, len(keep), n)
		}
		series, nv = gather(nil, buf, keep, w), len(keep)
	}
	nw, fr, err := fc.Build(ctx, b, series, nv, w, cfg, progress.Discard)
	if err != nil {
		return nil, fmt.Errorf("dfc: window %d (volumes %d–%d): %w", k, start, start+w-1, err)
	}
	if keep != nil {
		nw = expand(nw, keep, n)
	}
	return &ownWindow{nw: nw, fr: fr, constant: n - nv}, nil
}
