package settings

import (
	"fmt"
	"strconv"
)

// The vocabulary of the named choices, shared by the command line, the wire and the engine.
const (
	Pearson  = "pearson"
	Spearman = "spearman"
	Kendall  = "kendall"

	// Threshold modes: which pairs become links (docs/algorithms.md, "Thresholds").
	ModeDensity = "density" // the strongest fraction of all pairs, exactly
	ModeR       = "r"       // value > R (|value| > R with Abs)
	ModeAlpha   = "alpha"   // significant at Alpha after Correction
	ModeKNN     = "knn"     // each node's K strongest links (union)

	Bonferroni = "bonferroni"
	FDR        = "fdr"

	MetricsNone  = "none"  // network, degree, strength and hubs only
	MetricsBasic = "basic" // + clustering, components, assortativity, Leiden modules, roles
	MetricsFull  = "full"  // + exact path length, efficiency, local efficiency, eigenvector
	// centrality, leading-eigenvector modules, degree-distribution fits, random baselines

	BackendAuto = "auto" // CUDA when a GPU works, else the CPU
	BackendCPU  = "cpu"
	BackendCUDA = "cuda"
)

// The choices, in the order help texts list them.
var (
	Measures    = []string{Pearson, Spearman, Kendall}
	Modes       = []string{ModeDensity, ModeR, ModeAlpha, ModeKNN}
	Corrections = []string{Bonferroni, FDR}
	Levels      = []string{MetricsNone, MetricsBasic, MetricsFull}
	Backends    = []string{BackendAuto, BackendCPU, BackendCUDA}
)

// JSON keys that code outside the table refers to.
const (
	KeyMode       = "threshold_mode"
	KeyDensity    = "density"
	KeyR          = "r"
	KeyAlpha      = "alpha"
	KeyKNN        = "knn"
	KeyCorrection = "correction"
	KeyBackend    = "backend"
	KeySweep      = "sweep"
	KeyDFCWindow  = "dfc_window"
	KeyDFCStep    = "dfc_step"
)

// Input is how the scan is read.
type Input struct {
	// DICOMSeries chooses the series of a DICOM input (a folder, .zip or DICOMDIR); 0 picks
	// the BOLD time series by the rule of docs/dicom.md.
	DICOMSeries int `json:"dicom_series,omitempty"`
}

func (g *Input) fields() []Field {
	return []Field{{"dicom_series", "series", "N", "DICOM input: the series number to analyse (default: the BOLD time series; see \"hubscope-helper series\")", &g.DICOMSeries}}
}

func (g *Input) defaults() {}

func (g *Input) validate(s *Settings) error {
	return s.inRange(rule{"dicom_series", float64(g.DICOMSeries), g.DICOMSeries >= 0, "%g: want a series number (0: the BOLD series by the rule)"})
}

// Network is how pairs of nodes become links: the association measure and the threshold.
type Network struct {
	Measure string `json:"measure"`
	// Abs makes |v| the connection value (negative correlations count too).
	Abs        bool    `json:"abs"`
	Mode       string  `json:"threshold_mode"`
	Density    float64 `json:"density,omitempty"`    // ModeDensity: fraction of all N(N−1)/2 pairs
	R          float64 `json:"r,omitempty"`          // ModeR
	Alpha      float64 `json:"alpha,omitempty"`      // ModeAlpha: two-sided level
	Correction string  `json:"correction,omitempty"` // ModeAlpha: Bonferroni ("" too) or FDR
	K          int     `json:"knn,omitempty"`        // ModeKNN: links per node
}

func (g *Network) fields() []Field {
	return []Field{
		{"measure", "measure", "NAME", "pearson, spearman or kendall", &g.Measure},
		{"abs", "abs", "", "use |r| as the connection value (negative correlations count too)", &g.Abs},
		{KeyMode, "", "", "density, r, alpha or knn (on the command line: the threshold flag given)", &g.Mode},
		{KeyDensity, "density", "FRACTION", "keep exactly this fraction of all pairs, the strongest (the default threshold mode)", &g.Density},
		{KeyR, "r", "T", "keep pairs with r > T (|r| > T with --abs)", &g.R},
		{KeyAlpha, "alpha", "LEVEL", "keep pairs significant at this level (two-sided; see --correction)", &g.Alpha},
		{KeyCorrection, "correction", "NAME", "with --alpha: bonferroni (default) or fdr", &g.Correction},
		{KeyKNN, "knn", "K", "keep each node's K strongest links (union)", &g.K},
	}
}

func (g *Network) defaults() { g.Measure, g.Mode, g.Density = Pearson, ModeDensity, 0.01 }

// thresholdKeys maps each threshold's JSON key to its mode.
var thresholdKeys = map[string]string{KeyDensity: ModeDensity, KeyR: ModeR, KeyAlpha: ModeAlpha, KeyKNN: ModeKNN}

func (g *Network) resolve(s *Settings, given map[string]bool) error {
	if !given[KeyMode] {
		var named []string
		for _, key := range []string{KeyDensity, KeyR, KeyAlpha, KeyKNN} {
			if given[key] {
				named = append(named, key)
			}
		}
		if len(named) > 1 {
			return s.Errorf(KeyMode, "several thresholds given (%s): give one", orList(named))
		}
		if len(named) == 1 {
			g.Mode = thresholdKeys[named[0]]
		}
	}
	for key, mode := range thresholdKeys {
		if mode == g.Mode {
			continue
		}
		if given[key] {
			return s.Errorf(key, "given with threshold mode %s, which does not use it", g.Mode)
		}
	}
	if given[KeyCorrection] && g.Mode != ModeAlpha {
		return s.Errorf(KeyCorrection, "only applies to threshold mode alpha")
	}
	// Only the mode's own threshold is kept, so that provenance.json lists what was used.
	if g.Mode != ModeDensity {
		g.Density = 0
	}
	if g.Mode != ModeR {
		g.R = 0
	}
	if g.Mode != ModeAlpha {
		g.Alpha, g.Correction = 0, ""
	} else if g.Correction == "" {
		g.Correction = Bonferroni
	}
	if g.Mode != ModeKNN {
		g.K = 0
	}
	return nil
}

func (g *Network) validate(s *Settings) error {
	if err := s.oneOf("measure", "measure", g.Measure, Measures); err != nil {
		return err
	}
	// the threshold of the mode
	var r rule
	switch g.Mode {
	case ModeDensity:
		// With a sweep the density is the sweep's (Resolve clears the default's).
		r = rule{KeyDensity, g.Density, g.Density > 0 && g.Density <= 1 || s.Sweep != "" && g.Density == 0, "%g: want a fraction in (0, 1], e.g. 0.01 for 1 %%"}
	case ModeR:
		r = rule{KeyR, g.R, g.R > -1 && g.R < 1, "threshold r = %g: want a value in (-1, 1)"}
	case ModeAlpha:
		r = rule{KeyAlpha, g.Alpha, g.Alpha > 0 && g.Alpha < 1, "%g: want a level in (0, 1), e.g. 0.05"}
	case ModeKNN:
		r = rule{KeyKNN, float64(g.K), g.K >= 1, "%g: want at least 1 link per node"}
	default:
		return s.oneOf(KeyMode, "threshold mode", g.Mode, Modes)
	}
	if err := s.inRange(r); err != nil {
		return err
	}
	if g.Correction != "" {
		if g.Mode != ModeAlpha {
			return s.Errorf(KeyCorrection, "only applies to threshold mode alpha")
		}
		return s.oneOf(KeyCorrection, "correction", g.Correction, Corrections)
	}
	return nil
}

// ThresholdSweep is a threshold sweep: the network is built once at the sweep's loosest threshold
// (which replaces Mode and its value) and every tighter network of the sweep is measured as a
// filter of its edges (package sweep checks the syntax).
type ThresholdSweep struct {
	Sweep string `json:"sweep,omitempty"` // "r=0.45:0.70:0.05", "density=0.01,0.05,0.1"
}

func (g *ThresholdSweep) fields() []Field {
	return []Field{{KeySweep, "sweep", "SPEC", "threshold sweep: r=LO:HI:STEP, density=LO:HI:STEP or a list (r=0.45,0.5,0.6); one correlation pass at the loosest, measures at every threshold (sweep.tsv, hub_stability.nii.gz)", &g.Sweep}}
}

func (g *ThresholdSweep) defaults() {}

func (g *ThresholdSweep) validate(s *Settings) error {
	if g.Sweep != "" && (s.Mode == ModeAlpha || s.Mode == ModeKNN) {
		return s.Errorf(KeySweep, "replaces the threshold; it cannot be combined with threshold mode %s", s.Mode)
	}
	return nil
}

// Graph is what is measured on the network, and the hub rule.
type Graph struct {
	Metrics     string `json:"metrics"`     // MetricsNone, MetricsBasic or MetricsFull
	Random      int    `json:"random"`      // Maslov–Sneppen random networks for γ, λ, σ and Q's z
	Betweenness bool   `json:"betweenness"` // Brandes betweenness (costly: O(N·E))
	Seed        uint64 `json:"seed"`        // random networks and module search
	// ExactBaselines searches every node of every random network for its L_p instead of a
	// sample of sources (estimates with standard errors).
	ExactBaselines bool `json:"exact_baselines,omitempty"`
	// SwapsPerEdge is the accepted Maslov–Sneppen double-edge swaps per edge in each random
	// network (default 5: every edge takes part in 10 swaps on average; 10 was the default
	// before, the Brain Connectivity Toolbox's randmio_und with ITER = 10). docs/algorithms.md,
	// "Random networks", shows the baselines unchanged within their spread.
	SwapsPerEdge float64 `json:"swaps_per_edge"`
	// HubSD is the hub rule: degree > mean + HubSD·SD (Wang et al. use 1).
	HubSD float64 `json:"hub_sd"`
}

func (g *Graph) fields() []Field {
	return []Field{
		{"metrics", "metrics", "LEVEL", "none, basic or full", &g.Metrics},
		{"random", "random", "N", "degree-preserving random networks for small-world and modularity baselines (full metrics)", &g.Random},
		{"betweenness", "betweenness", "", "also compute betweenness centrality (costly)", &g.Betweenness},
		{"seed", "seed", "N", "seed for random networks and module search", &g.Seed},
		{"exact_baselines", "exact-baselines", "", "random networks' L_p from every node (default: from a sample of sources, with standard errors)", &g.ExactBaselines},
		{"swaps_per_edge", "swaps-per-edge", "S", "accepted Maslov–Sneppen swaps per edge in each random network (10: the default up to 0.1.0)", &g.SwapsPerEdge},
		{"hub_sd", "hub-sd", "SD", "hubs: degree > mean + this many SD", &g.HubSD},
	}
}

func (g *Graph) defaults() {
	g.Metrics, g.Random, g.Seed, g.HubSD, g.SwapsPerEdge = MetricsFull, 15, 1, 1, DefaultSwapsPerEdge
}

// DefaultSwapsPerEdge is the rewiring length of the random networks (Graph.SwapsPerEdge).
const DefaultSwapsPerEdge = 5

func (g *Graph) validate(s *Settings) error {
	if err := s.oneOf("metrics", "metrics level", g.Metrics, Levels); err != nil {
		return err
	}
	return s.inRange(
		rule{"random", float64(g.Random), g.Random >= 0, "%g random networks: want 0 or more"},
		rule{"swaps_per_edge", g.SwapsPerEdge, g.SwapsPerEdge > 0, "%g swaps per edge: want a positive number"},
		rule{"hub_sd", g.HubSD, g.HubSD >= 0, "hub rule mean + %g SD: want a non-negative multiple"},
	)
}

// Compute is where the network is built.
type Compute struct {
	Backend string `json:"backend"` // BackendAuto, BackendCPU or BackendCUDA
}

func (g *Compute) fields() []Field {
	return []Field{{KeyBackend, "backend", "NAME", "auto, cuda or cpu", &g.Backend}}
}

func (g *Compute) defaults() { g.Backend = BackendAuto }

func (g *Compute) validate(s *Settings) error {
	return s.oneOf(KeyBackend, "backend", g.Backend, Backends)
}

// MinWindow is the shortest dynamic-connectivity window: a correlation of fewer than 3
// points is ±1 or undefined.
const MinWindow = 3

// Dynamic is the sliding-window analysis (docs/algorithms.md, "Dynamic connectivity"): one
// network per window of DFCWindow volumes every DFCStep volumes, thresholded like the static
// one (DFCWindow 0: none).
type Dynamic struct {
	DFCWindow int `json:"dfc_window,omitempty"`
	DFCStep   int `json:"dfc_step,omitempty"`
	// DFCRank > 0 writes each window matrix's rank-DFCRank factor with its error (Pearson
	// and Spearman).
	DFCRank int `json:"dfc_rank,omitempty"`
	// DFCNetworks writes every window's network (large).
	DFCNetworks bool `json:"dfc_networks,omitempty"`
	// DFCMaxCensored is the largest share of a window's volumes that may be censored
	// (scrubbing); a window with more is left out and listed in dfc/summary.json.
	DFCMaxCensored float64 `json:"dfc_max_censored"`
}

func (g *Dynamic) fields() []Field {
	return []Field{
		{KeyDFCWindow, "window", "W", "dynamic connectivity: also build one network per sliding window of W volumes (same measure and threshold; dfc/ in the bundle)", &g.DFCWindow},
		{KeyDFCStep, "step", "S", "with --window: volumes between window starts (default 1)", &g.DFCStep},
		{"dfc_networks", "dfc-networks", "", "with --window: write every window's network as dfc/network_WWW.npz (large)", &g.DFCNetworks},
		{"dfc_max_censored", "dfc-max-censored", "SHARE", "with --window and censored volumes: leave out windows with more than this share of their volumes censored (default 0.2)", &g.DFCMaxCensored},
		{"dfc_rank", "dfc-rank", "L", "with --window: write each window matrix's rank-L factor (dfc/lowrank_WWW.npy, S ≈ F·Fᵀ) and its error against GPU-DFC's randomized one", &g.DFCRank},
	}
}

func (g *Dynamic) defaults() { g.DFCMaxCensored = 0.2 }

func (g *Dynamic) validate(s *Settings) error {
	if err := s.inRange(rule{"dfc_max_censored", g.DFCMaxCensored, g.DFCMaxCensored >= 0 && g.DFCMaxCensored < 1, "%g: want a share 0 ≤ s < 1 of a window's volumes"}); err != nil {
		return err
	}
	if g.DFCWindow == 0 {
		for _, key := range []string{KeyDFCStep, "dfc_rank", "dfc_networks"} {
			f, _ := s.Field(key)
			if !isZero(f.Value) {
				return s.Errorf(key, "needs a window (dfc_window, --window W)")
			}
		}
		return nil
	}
	if err := s.inRange(
		rule{KeyDFCWindow, float64(g.DFCWindow), g.DFCWindow >= MinWindow, "%g volumes: want at least " + strconv.Itoa(MinWindow)},
		rule{KeyDFCStep, float64(g.DFCStep), g.DFCStep >= 1, "%g volumes: want at least 1"},
		rule{"dfc_rank", float64(g.DFCRank), g.DFCRank >= 0 && g.DFCRank <= g.DFCWindow, "%g: want 0 (none) to the window length " + strconv.Itoa(g.DFCWindow)},
	); err != nil {
		return err
	}
	if g.DFCRank > 0 && s.Measure != Pearson && s.Measure != Spearman {
		return s.Errorf("dfc_rank", "%d: low-rank factors need pearson or spearman, not %s", g.DFCRank, s.Measure)
	}
	return nil
}

// isZero reports whether a table value is its type's zero.
func isZero(v any) bool {
	switch p := v.(type) {
	case *string:
		return *p == ""
	case *bool:
		return !*p
	case *int:
		return *p == 0
	case *uint64:
		return *p == 0
	case *float64:
		return *p == 0
	}
	panic(fmt.Sprintf("settings: unsupported field type %T", v))
}
