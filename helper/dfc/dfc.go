package dfc

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/progress"
)

// DefaultMAESamples is the number of pairs the low-rank MAE samples per window in Run: the
// standard error of the estimate is then ≈ SD(|error|)/450, below 1 % of the MAE for the
// near-normal errors of a truncated factor, at a cost of ~10⁸ flops per window.
const DefaultMAESamples = 200_000

// Options configure Run.
type Options struct {
	Window, Step int
	// FC is every window's network: the static network's measure and threshold mode. The
	// density and significance modes are applied per window (N(N−1)/2 pairs of the window,
	// w − 2 degrees of freedom), so each window keeps its own threshold.
	FC fc.Config
	// Modularity runs Leiden on every window's network for its Q. It is the costly part of the
	// per-window measures at voxel scale (about 2 s for a 10⁴-node, 5·10⁵-edge network on one
	// CPU core, against milliseconds for the rest), hence optional.
	Modularity bool
	Leiden     community.LeidenOptions
	// Rank > 0 also factorises every window's correlation matrix at rank l (Pearson and
	// Spearman; l ≤ w): Window.Factor holds F with S ≈ F Fᵀ, Window.LowRank the MAE of the SVD
	// and randomized factors over MAESamples sampled pairs (0: DefaultMAESamples).
	Rank       int
	MAESamples int
	Seed       uint64 // randomized sketch and MAE pairs

	// Censoring (a sample mask, scrubbing): Axis > 0 is the length of the original time
	// axis on which the windows are laid out, and Kept[j] the position on it of x's column j
	// (increasing; len(Kept) = T). A window with more than MaxCensored of its w volumes
	// censored is left out (Result.Skipped); the others use their uncensored volumes. Axis 0:
	// the columns of x are the axis.
	Axis        int
	Kept        []int
	MaxCensored float64

	// PerWindow forces every window's network to be built from the window's own series by
	// fc.Build, the path taken anyway for Spearman and Kendall, the FDR and k-NN modes,
	// densities above MaxIncrementalDensity, censoring and steps larger than
	// Window/IncrementalStepRatio. Otherwise the windows' cross-products are updated
	// incrementally (incremental.go; density and Bonferroni cut each window at its own value:
	// cuts.go); both give the same networks up to rounding (pairs within ~1e-6 of the
	// threshold may differ).
	PerWindow bool
	// ChunkWindows > 0 sets the windows per chunk of the incremental path (each chunk's
	// cross-products are re-based from the series); 0 chooses (incremental.go, chunkSize).
	ChunkWindows int
}

// Skipped is a window left out for its censored volumes.
type Skipped struct {
	Index    int `json:"index"`
	Start    int `json:"start"`    // first volume on the original axis
	Censored int `json:"censored"` // censored volumes among its Window
}

// Measures are one window's global measures (docs/algorithms.md, "Thresholds" and "Network measures"), those that stay cheap at
// voxel scale: no path lengths.
type Measures struct {
	Threshold             float64  // the value cut the window's network used (fc.Report.Threshold)
	Edges                 int64    // E
	Density               float64  // E / (N(N−1)/2), N counting every node
	MeanDegree            float64  // 2E/N
	Isolated              int      // nodes without an edge (constant-in-window rows included)
	Clustering            float64  // C_p, C_i = 0 below degree 2 (graph.MeanClustering)
	LargestComponentShare float64  // nodes of the largest component / N
	Modularity            *float64 // Leiden Q; nil when not asked for or the window has no edge
	Constant              int      // rows constant within the window, left out of its network
}

// Map returns the measures keyed as metrics.json names them, the form of schema.DFCWindow's
// Measures map (the app's Dynamics tab plots them by these names).
func (m Measures) Map() map[string]float64 {
	out := map[string]float64{
		"threshold":               m.Threshold,
		"density":                 m.Density,
		"mean_degree":             m.MeanDegree,
		"isolated_nodes":          float64(m.Isolated),
		"clustering_coefficient":  m.Clustering,
		"largest_component_share": m.LargestComponentShare,
	}
	if m.Modularity != nil {
		out["modularity"] = *m.Modularity
	}
	return out
}

// Window is one window's result.
type Window struct {
	Index, Start int
	Measures     Measures
	Degree       []int32 // degree of every node in this window
	LowRank      *LowRank
	// Network and Factor (N×l, S ≈ F Fᵀ; with Options.Rank) are only valid inside the
	// callback of Run and are dropped afterwards so that k windows never sit in memory.
	Network *network.Network
	Factor  *mat.Dense
}

// Result is the sliding-window analysis.
type Result struct {
	Plan    Plan
	N       int
	Windows []Window // Network and Factor cleared
	// Skipped are the windows left out for censored volumes (Options.MaxCensored), in order;
	// Windows then keep their plan index, so the indices have gaps.
	Skipped []Skipped
	// Nodal variability of degree over the k windows: mean, population SD (divisor k) and
	// coefficient of variation SD/mean (NaN where a node never has an edge: undefined).
	DegreeMean, DegreeSD, DegreeCV []float64
	Notes                          []string
}

// Run builds one network per window of the N×T series x (row-major, as fc.Build takes them) on
// backend b, each window's series normalised on its own by the backend's Prepare, and calls
// each (if not nil) with every window while its network is still held (each must not keep
// win.Network after it returns: the incremental path reuses its arrays for later windows). The window's N×w
// series are gathered into one reused buffer: N·w floats per window, never a copy of the N×T
// matrix. Progress: stage "dynamic connectivity", one unit per window; ctx is checked between
// windows and, through fc.Build, within them.
func Run(ctx context.Context, b fc.Backend, x []float32, n, t int, opt Options, rep progress.Reporter, each func(*Window) error) (*Result, error) {
	rep = progress.OrDiscard(rep)
	axis := t
	if opt.Axis > 0 {
		axis = opt.Axis
		if len(opt.Kept) != t {
			return nil, fmt.Errorf("dfc: %d kept volume positions for %d columns", len(opt.Kept), t)
		}
		for j, p := range opt.Kept {
			if p < 0 || p >= axis || (j > 0 && p <= opt.Kept[j-1]) {
				return nil, fmt.Errorf("dfc: kept volume positions must increase within 0…%d", axis-1)
			}
		}
		if opt.MaxCensored < 0 || opt.MaxCensored >= 1 {
			return nil, fmt.Errorf("dfc: largest censored share %g: want 0 ≤ share < 1", opt.MaxCensored)
		}
	}
	plan, err := NewPlan(axis, opt.Window, opt.Step)
	if err != nil {
		return nil, err
	}
	if n < 2 {
		return nil, fmt.Errorf("dfc: need at least 2 series, got %d", n)
	}
	if len(x) != n*t {
		return nil, fmt.Errorf("dfc: series matrix has %d values, want N·T = %d·%d", len(x), n, t)
	}
	if opt.Rank != 0 {
		if opt.FC.Measure != fc.Pearson && opt.FC.Measure != fc.Spearman {
			return nil, fmt.Errorf("dfc: low-rank rank %d: factors need Pearson or Spearman, not %s", opt.Rank, opt.FC.Measure)
		}
		if opt.Rank < 0 || opt.Rank > opt.Window || opt.Rank > n {
			return nil, fmt.Errorf("dfc: low-rank rank %d: want 1 ≤ l ≤ min(window %d, N %d)", opt.Rank, opt.Window, n)
		}
	}
	samples := opt.MAESamples
	if samples <= 0 {
		samples = DefaultMAESamples
	}
	w := plan.Window
	res := &Result{Plan: plan, N: n, Windows: make([]Window, 0, plan.Count())}
	buf := make([]float32, n*w)
	var sub []float32 // rows non-constant in the window, when some are constant
	noted := map[string]bool{}
	rep.Start("dynamic connectivity", int64(plan.Count()))
	if incremental(opt) {
		ok, err := runIncremental(ctx, b, x, n, t, plan, opt, samples, res, rep, each)
		if err != nil {
			return nil, err
		}
		if ok {
			return finish(res, n, plan, w, opt)
		}
	}
	for k, start := range plan.Starts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The window's columns of x: [start, start+w) itself, or with censoring the kept
		// volumes whose positions fall in it.
		c0, wk := start, w
		if opt.Axis > 0 {
			c0, _ = slices.BinarySearch(opt.Kept, start)
			c1, _ := slices.BinarySearch(opt.Kept, start+w)
			wk = c1 - c0
			if cens := w - wk; float64(cens) > opt.MaxCensored*float64(w) || wk < MinWindow || wk < opt.Rank {
				res.Skipped = append(res.Skipped, Skipped{Index: k, Start: start, Censored: cens})
				rep.Add(1)
				continue
			}
		}
		for i := 0; i < n; i++ {
			copy(buf[i*wk:(i+1)*wk], x[i*t+c0:i*t+c0+wk])
		}
		keep := nonConstantRows(buf[:n*wk], n, wk)
		series, nv := buf[:n*wk], n
		if keep != nil {
			if len(keep) < 2 {
				return nil, fmt.Errorf("dfc: window %d (volumes %d–%d): only %d of %d series vary within it", k, start, start+w-1, len(keep), n)
			}
			sub = gather(sub, buf[:n*wk], keep, wk)
			series, nv = sub, len(keep)
		}
		nw, fr, err := fc.Build(ctx, b, series, nv, wk, opt.FC, progress.Discard)
		if err != nil {
			return nil, fmt.Errorf("dfc: window %d (volumes %d–%d): %w", k, start, start+w-1, err)
		}
		for _, note := range fr.Notes {
			if !noted[note] {
				noted[note] = true
				res.Notes = append(res.Notes, note)
			}
		}
		if keep != nil {
			nw = expand(nw, keep, n)
		}
		win := Window{Index: k, Start: start, Network: nw}
		if win.Measures, win.Degree, err = measure(ctx, nw, fr, n-nv, opt); err != nil {
			return nil, fmt.Errorf("dfc: window %d: %w", k, err)
		}
		if opt.Rank > 0 {
			u, err := NormalizedWindow(buf[:n*wk], n, wk, opt.FC.Measure)
			if err != nil {
				return nil, err
			}
			f, lr, err := LowRankWindow(ctx, u, opt.Rank, samples, opt.Seed+uint64(k))
			if err != nil {
				return nil, fmt.Errorf("dfc: window %d: %w", k, err)
			}
			win.Factor, win.LowRank = f, &lr
		}
		if each != nil {
			if err := each(&win); err != nil {
				return nil, err
			}
		}
		win.Network, win.Factor = nil, nil
		res.Windows = append(res.Windows, win)
		rep.Add(1)
	}
	return finish(res, n, plan, w, opt)
}

// finish checks that some window was kept and adds the notes and the nodal variability.
func finish(res *Result, n int, plan Plan, w int, opt Options) (*Result, error) {
	if len(res.Windows) == 0 {
		return nil, fmt.Errorf("dfc: every one of the %d windows has more than %.0f %% of its %d volumes censored (or fewer than %d left): shorten the censoring or widen the largest censored share", plan.Count(), 100*opt.MaxCensored, w, MinWindow)
	}
	if c := countConstant(res.Windows); c > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d window(s) held series constant within the window; those nodes were left out of those windows' networks (degree 0)", c))
	}
	res.DegreeMean, res.DegreeSD, res.DegreeCV = variability(res.Windows, n)
	return res, nil
}

// measure computes a window's degrees and global measures. constant nodes were left out of
// the network and count as isolated.
func measure(ctx context.Context, nw *network.Network, fr *fc.Report, constant int, opt Options) (Measures, []int32, error) {
	return measureWith(ctx, nil, nw, nil, nil, fr, constant, opt)
}

// measureWith is measure with, when sc is not nil, C_p from the network's own rows on one
// goroutine with sc's arrays (windowScratch.meanClustering) instead of graph.MeanClustering
// on the symmetric graph, which is then built only for Leiden. deg: the degrees when the
// caller has them (nil: counted here). fr.Isolated < 0: counted here from the degrees
// (constant nodes included).
func measureWith(ctx context.Context, sc *windowScratch, nw *network.Network, deg []int32, tri []uint32, fr *fc.Report, constant int, opt Options) (Measures, []int32, error) {
	n := nw.N
	direct := sc != nil
	if deg == nil {
		deg = Degrees(nw)
	}
	if fr.Isolated < 0 {
		fr.Isolated = -constant
		for _, d := range deg {
			if d == 0 {
				fr.Isolated++
			}
		}
	}
	e := nw.Edges()
	m := Measures{Threshold: fr.Threshold, Edges: e, Density: nw.Density(),
		MeanDegree: 2 * float64(e) / float64(n), Isolated: fr.Isolated + constant, Constant: constant,
		LargestComponentShare: float64(fr.LargestComponent) / float64(n)}
	if e == 0 {
		return m, deg, nil
	}
	if direct && tri != nil {
		m.Clustering = meanClusteringOf(tri, deg)
	} else if direct {
		m.Clustering = sc.meanClustering(nw, deg)
	}
	if !direct || opt.Modularity {
		g := graph.FromNetwork(nw)
		if !direct {
			c, err := graph.MeanClustering(ctx, g)
			if err != nil {
				return m, nil, err
			}
			m.Clustering = c
		}
		if !opt.Modularity {
			return m, deg, nil
		}
		mod, err := community.LeidenModules(ctx, g, opt.Leiden, nil)
		if err != nil {
			return m, nil, err
		}
		q := mod.Q
		m.Modularity = &q
	}
	return m, deg, nil
}

// Degrees counts every node's edges in a strict-upper-triangle CSR network.
func Degrees(nw *network.Network) []int32 {
	deg := make([]int32, nw.N)
	for i := 0; i < nw.N; i++ {
		cols, _ := nw.Row(i)
		deg[i] += int32(len(cols))
		for _, j := range cols {
			deg[j]++
		}
	}
	return deg
}

// nonConstantRows returns the rows of the N×w window that vary, or nil when all do. Constancy
// is exact equality, as fc.CheckSeries tests it.
func nonConstantRows(x []float32, n, w int) []int32 {
	var keep []int32
	for i := 0; i < n; i++ {
		row := x[i*w : (i+1)*w]
		constant := true
		for _, v := range row[1:] {
			if v != row[0] {
				constant = false
				break
			}
		}
		if constant && keep == nil {
			keep = make([]int32, 0, n)
			for r := 0; r < i; r++ {
				keep = append(keep, int32(r))
			}
		}
		if !constant && keep != nil {
			keep = append(keep, int32(i))
		}
	}
	return keep
}

func gather(dst, x []float32, keep []int32, w int) []float32 {
	dst = slices.Grow(dst[:0], len(keep)*w)[:len(keep)*w]
	for r, i := range keep {
		copy(dst[r*w:(r+1)*w], x[int(i)*w:(int(i)+1)*w])
	}
	return dst
}

// expand renumbers a network over the kept rows to all n nodes; keep is increasing, so rows
// stay sorted and j > i still holds.
func expand(nw *network.Network, keep []int32, n int) *network.Network {
	out := &network.Network{N: n, Indptr: make([]uint64, n+1), Indices: nw.Indices, Weights: nw.Weights}
	for r, i := range keep {
		out.Indptr[i+1] = nw.Indptr[r+1] - nw.Indptr[r]
	}
	for i := 0; i < n; i++ {
		out.Indptr[i+1] += out.Indptr[i]
	}
	for p, j := range nw.Indices {
		out.Indices[p] = uint32(keep[j]) // in place: the old numbering is not used again
	}
	return out
}

func countConstant(ws []Window) int {
	c := 0
	for _, w := range ws {
		if w.Measures.Constant > 0 {
			c++
		}
	}
	return c
}

// variability returns every node's mean degree over the windows, its population SD and the
// coefficient of variation SD/mean (NaN where the mean is 0). Sums in float64 of integer
// degrees are exact, so the two-pass formula has no cancellation to fear.
func variability(ws []Window, n int) (mean, sd, cv []float64) {
	mean, sd, cv = make([]float64, n), make([]float64, n), make([]float64, n)
	k := float64(len(ws))
	for _, w := range ws {
		for v, d := range w.Degree {
			mean[v] += float64(d)
		}
	}
	for v := range mean {
		mean[v] /= k
	}
	for _, w := range ws {
		for v, d := range w.Degree {
			c := float64(d) - mean[v]
			sd[v] += c * c
		}
	}
	for v := range sd {
		sd[v] = math.Sqrt(sd[v] / k)
		if mean[v] > 0 {
			cv[v] = sd[v] / mean[v]
		} else {
			cv[v] = math.NaN()
		}
	}
	return mean, sd, cv
}
