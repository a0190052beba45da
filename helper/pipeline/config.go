// Package pipeline runs one analysis: scan → masked series → functional network → graph
// metrics → results bundle, with progress, cancellation and provenance. It orchestrates the
// engine packages and holds no math of its own beyond choosing what to run.
package pipeline

import (
	"fmt"
	"strings"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/norm"
	"github.com/hubscope/hubscope/helper/sweep"
)

// Metrics levels.
const (
	MetricsNone  = "none"  // network, degree, strength and hubs only
	MetricsBasic = "basic" // + clustering, components, assortativity, Leiden modules, roles
	MetricsFull  = "full"  // + exact path length, efficiency, local efficiency, eigenvector
	// centrality, leading-eigenvector modules, degree-distribution fits, random baselines
)

// Config is everything one analysis needs. The zero value is not valid; start from Defaults.
type Config struct {
	Scan string `json:"scan"`
	Mask string `json:"mask,omitempty"` // "" = automatic mask (scan.AutoMask)
	// TimeAxis is the NIfTI axis (4 to 7) holding the time series; 0 = axis 4. Images with
	// more than one non-spatial axis longer than 1 are refused unless it is named.
	TimeAxis int `json:"time_axis,omitempty"`
	// Demo analyses the built-in phantom instead of Scan: Run writes it, its mask and its
	// ground truth into the bundle's demo/ folder and sets Scan and Mask to them (demo.go).
	Demo      bool   `json:"demo,omitempty"`
	Out       string `json:"out"`
	Overwrite bool   `json:"overwrite"`

	// Backend is "auto" (CUDA when a GPU works, else CPU), "cpu" or "cuda".
	Backend string `json:"backend"`

	// Network: measure and threshold (fc.Config's fields, written out for provenance).
	Measure    string  `json:"measure"` // pearson | spearman | kendall
	Abs        bool    `json:"abs"`
	Mode       string  `json:"threshold_mode"` // density | r | alpha | knn
	Density    float64 `json:"density,omitempty"`
	R          float64 `json:"r,omitempty"`
	Alpha      float64 `json:"alpha,omitempty"`
	Correction string  `json:"correction,omitempty"` // bonferroni | fdr
	K          int     `json:"knn,omitempty"`

	Metrics     string `json:"metrics"`     // none | basic | full
	Random      int    `json:"random"`      // Maslov–Sneppen random networks for γ, λ, σ and Q's z
	Betweenness bool   `json:"betweenness"` // Brandes betweenness (costly: O(N·E))
	Seed        uint64 `json:"seed"`        // random networks and module search
	// ExactBaselines searches every node of every random network for its L_p instead of a
	// sample of graph.DefaultPathSources sources (estimates with standard errors).
	ExactBaselines bool `json:"exact_baselines,omitempty"`

	// Atlas, when set, names the region of each hub in hubs.tsv (a 3D label image on any grid,
	// with an "index name" text file: AtlasNames, or MRIcron's aal.nii.txt beside aal.nii.gz).
	Atlas      string `json:"atlas,omitempty"`
	AtlasNames string `json:"atlas_names,omitempty"`

	// HubSD is the hub rule: degree > mean + HubSD·SD (Wang et al. use 1).
	HubSD float64 `json:"hub_sd"`

	// KeepSeries adds the scan itself to the bundle for interactive views: series.npy (the
	// cleaned N×L series, for seed maps and time-series plots) and mean.nii.gz (the temporal
	// mean on the full grid, the slice views' background). The helper daemon sets it.
	KeepSeries bool `json:"keep_series,omitempty"`

	// Dynamic connectivity (ALGORITHMS.md §5, dfc.go): after the static network, one network
	// per window of DFCWindow volumes every DFCStep volumes, thresholded like the static one
	// (DFCWindow 0: none). DFCNetworks writes every window's network (large); DFCRank > 0
	// writes every window matrix's rank-l factor with its error (Pearson and Spearman).
	DFCWindow   int  `json:"dfc_window,omitempty"`
	DFCStep     int  `json:"dfc_step,omitempty"`
	DFCRank     int  `json:"dfc_rank,omitempty"`
	DFCNetworks bool `json:"dfc_networks,omitempty"`

	// Sweep, when set ("r=0.45:0.70:0.05", "density=0.01,0.05,0.1"), builds the network at the
	// sweep's loosest threshold (which replaces Mode and its value) and measures every tighter
	// network of the sweep as a filter of its edges (package sweep): sweep.tsv, sweep.json,
	// sweep.png/.svg and hub_stability.nii.gz in the bundle.
	Sweep string `json:"sweep,omitempty"`

	// DICOMSeries chooses the series of a DICOM input (a folder, .zip or DICOMDIR given as
	// Scan; dicom.go); 0 picks the BOLD time series by the rule of docs/dicom.md.
	DICOMSeries int `json:"dicom_series,omitempty"`

	// Clean is the cleaning of the series before correlation (clean.go): --denoise and its
	// explicit options. The cleaned series feed the static network, DFC and series.npy.
	Clean CleanConfig `json:"clean"`

	// Group, when set, builds the group-mean network of several subjects instead of one
	// scan's network (group.go); Scan is then unused and Mask is the mask rule's file.
	Group *GroupConfig `json:"group,omitempty"`

	// Norm, when set, compares this run with the normative folder built by "norm build"
	// (package norm): z-maps, hubs lost and gained, clusters of abnormal voxels. The folder
	// must have been built with the same Settings.
	Norm string `json:"norm,omitempty"`
}

// Settings is the part of the configuration that decides a bundle's content, as a flat map
// of JSON keys: the paths of the scan, the output and the normative folder left out. Cohort
// markers and normative folders record it; a run is compared with them through it.
func (c Config) Settings() map[string]any {
	c.Scan, c.Out, c.Overwrite, c.Norm = "", "", false, ""
	return norm.Flatten(c)
}

// nodalIrrelevant are the settings that leave a run's degree, strength and clustering maps
// unchanged (the backends agree by the conformance suite; the others choose extra outputs or
// labels), so a patient's run may differ from its normative cohort in them.
var nodalIrrelevant = map[string]bool{"backend": true, "atlas": true, "atlas_names": true, "keep_series": true,
	"metrics": true, "random": true, "betweenness": true, "seed": true,
	"dfc_window": true, "dfc_step": true, "dfc_rank": true, "dfc_networks": true}

// NodalSettings is Settings without the keys that leave the nodal maps unchanged: what a
// normative comparison holds a run to.
func NodalSettings(settings map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range settings {
		if !nodalIrrelevant[k] {
			out[k] = v
		}
	}
	return out
}

// Defaults are what a clinician gets without choosing: Pearson, exact density 1 %, automatic
// mask, full metrics against 15 random networks, CUDA when present.
func Defaults() Config {
	return Config{
		Backend: "auto",
		Measure: "pearson",
		Mode:    "density",
		Density: 0.01,
		Metrics: MetricsFull,
		Random:  15,
		Seed:    1,
		HubSD:   1,
		Clean:   CleanConfig{Denoise: CleanNone},
	}
}

// FC translates the network part of the configuration for the fc driver. With a sweep the
// threshold is the sweep's loosest.
func (c *Config) FC() (fc.Config, error) {
	var fcc fc.Config
	if c.Sweep != "" {
		sp, err := sweep.Parse(c.Sweep)
		if err != nil {
			return fcc, err
		}
		if c.Mode == "alpha" || c.Mode == "knn" {
			return fcc, fmt.Errorf("--sweep replaces the threshold; it cannot be combined with --%s", c.Mode)
		}
		cc := *c
		cc.Sweep = ""
		if sp.Kind == sweep.KindR {
			cc.Mode, cc.R, cc.Density = "r", sp.Loosest(), 0
		} else {
			cc.Mode, cc.Density, cc.R = "density", sp.Loosest(), 0
		}
		return cc.FC()
	}
	switch strings.ToLower(c.Measure) {
	case "pearson":
		fcc.Measure = fc.Pearson
	case "spearman":
		fcc.Measure = fc.Spearman
	case "kendall":
		fcc.Measure = fc.Kendall
	default:
		return fcc, fmt.Errorf("unknown measure %q (want pearson, spearman or kendall)", c.Measure)
	}
	fcc.Abs = c.Abs
	switch c.Mode {
	case "density":
		if !(c.Density > 0 && c.Density <= 1) {
			return fcc, fmt.Errorf("density %g: want a fraction in (0, 1], e.g. 0.01 for 1 %%", c.Density)
		}
		fcc.Mode, fcc.Density = fc.Density, c.Density
	case "r":
		if !(c.R > -1 && c.R < 1) {
			return fcc, fmt.Errorf("threshold r = %g: want a value in (-1, 1)", c.R)
		}
		fcc.Mode, fcc.Threshold = fc.Strength, c.R
	case "alpha":
		if !(c.Alpha > 0 && c.Alpha < 1) {
			return fcc, fmt.Errorf("alpha %g: want a level in (0, 1), e.g. 0.05", c.Alpha)
		}
		fcc.Mode, fcc.Alpha = fc.Significance, c.Alpha
		switch c.Correction {
		case "", "bonferroni":
			fcc.Correction = fc.Bonferroni
		case "fdr":
			fcc.Correction = fc.FDR
		default:
			return fcc, fmt.Errorf("unknown correction %q (want bonferroni or fdr)", c.Correction)
		}
	case "knn":
		if c.K < 1 {
			return fcc, fmt.Errorf("knn %d: want at least 1 link per node", c.K)
		}
		fcc.Mode, fcc.K = fc.NearestNeighbours, c.K
	default:
		return fcc, fmt.Errorf("unknown threshold mode %q (want density, r, alpha or knn)", c.Mode)
	}
	return fcc, nil
}

// Validate reports the first problem with the configuration.
func (c *Config) Validate() error {
	if c.Group != nil {
		if err := c.checkGroup(); err != nil {
			return err
		}
	} else if c.Scan == "" && !c.Demo {
		return fmt.Errorf("no scan given")
	}
	if c.Demo && (c.Scan != "" || c.Mask != "") {
		return fmt.Errorf("the demo analyses its own phantom and mask: give no scan or mask with it")
	}
	if c.Out == "" {
		return fmt.Errorf("no output directory given (--out DIR)")
	}
	if c.TimeAxis != 0 && (c.TimeAxis < 4 || c.TimeAxis > 7) {
		return fmt.Errorf("time axis (--time-axis) %d: want one of 4 to 7, the NIfTI dimensions after x, y, z", c.TimeAxis)
	}
	if _, err := c.FC(); err != nil {
		return err
	}
	if err := c.Clean.validate(); err != nil {
		return err
	}
	if c.Group != nil && c.Clean.active() {
		return fmt.Errorf("group networks take each subject's series as they are: clean them per subject (--denoise none here)")
	}
	switch c.Backend {
	case "auto", "cpu", "cuda":
	default:
		return fmt.Errorf("unknown backend %q (want auto, cpu or cuda)", c.Backend)
	}
	switch c.Metrics {
	case MetricsNone, MetricsBasic, MetricsFull:
	default:
		return fmt.Errorf("unknown metrics level %q (want none, basic or full)", c.Metrics)
	}
	if c.Random < 0 {
		return fmt.Errorf("random networks %d: want 0 or more", c.Random)
	}
	if !(c.HubSD >= 0) {
		return fmt.Errorf("hub rule: mean + %g SD: want a non-negative multiple", c.HubSD)
	}
	return c.checkDFC()
}
