// Package pipeline runs one analysis: scan → masked series → functional network → graph
// metrics → results bundle, with progress, cancellation and provenance. It orchestrates the
// engine packages and holds no math of its own beyond choosing what to run.
package pipeline

import (
	"errors"
	"fmt"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/norm"
	"github.com/hubscope/hubscope/helper/sweep"
	"github.com/hubscope/hubscope/ipc/settings"
)

// Config is everything one analysis needs: the files, and the analysis settings shared with
// the command line and the app (settings.Settings). The zero value is not valid; start from
// Defaults.
type Config struct {
	Scan string `json:"scan"`
	Mask string `json:"mask,omitempty"` // "" = automatic mask (scan.AutoMask)
	// TimeAxis is the NIfTI axis (4 to 7) holding the time series; 0 = axis 4. Images with
	// more than one non-spatial axis longer than 1 are refused unless it is named.
	TimeAxis int `json:"time_axis,omitempty"`
	// Index chooses the entry (from 0) of each other non-spatial axis longer than 1: with
	// TimeAxis 5, {4: 1} reads an x×y×z×2×60 image's second 60-volume series (--index 4=1).
	Index map[int]int `json:"index,omitempty"`
	// Demo analyses the built-in phantom instead of Scan: Run writes it, its mask and its
	// ground truth into the bundle's demo/ folder and sets Scan and Mask to them (demo.go).
	Demo      bool   `json:"demo,omitempty"`
	Out       string `json:"out"`
	Overwrite bool   `json:"overwrite"`

	settings.Settings

	// The atlas (Settings.Regions.Atlas, AtlasNames), when set, names the region of each hub in
	// hubs.tsv (a 3D label image on any grid, with an "index name" text file: AtlasNames, or
	// MRIcron's aal.nii.txt beside aal.nii.gz). Settings.Regions.Nodes is what the network's
	// nodes are: "" or "voxels" (the masked voxels), or "regions": the regions of the atlas,
	// each the mean of its voxels' cleaned series (roi.go), as nilearn's NiftiLabelsMasker
	// extracts them.

	// KeepSeries adds the scan itself to the bundle for interactive views: series.npy (the
	// cleaned N×L series, for seed maps and time-series plots) and mean.nii.gz (the temporal
	// mean on the full grid, the slice views' background). The helper daemon sets it.
	KeepSeries bool `json:"keep_series,omitempty"`

	// Export chooses the files other tools open directly (export.go): "" or "auto" =
	// network.graphml and network.gexf up to ExportXMLMaxEdges edges and BrainNet Viewer's
	// hubs.node always (network.node/.edge up to BrainNetEdgeMax nodes); "none"; or a comma
	// list of graphml, gexf, brainnet, written whatever the size.
	Export string `json:"export,omitempty"`

	// SymmetricNPZ writes network.npz as the whole symmetric matrix instead of its strict upper
	// triangle (network.json says which).
	SymmetricNPZ bool `json:"symmetric_npz,omitempty"`

	// The cleaning of the series before correlation is Settings.Cleaning (--denoise and its
	// explicit options; clean.go turns it into a CleanConfig). The cleaned series feed the
	// static network, DFC and series.npy.

	// motionTable is the realignment's qc/motion.tsv when the run realigned the scan: auto's
	// raw recipe then regresses the 24 motion parameters too, and --fd can censor.
	motionTable string

	// Group, when set, builds the group-mean network of several subjects instead of one
	// scan's network (group.go); Scan is then unused and Mask is the mask rule's file.
	Group *GroupConfig `json:"group,omitempty"`

	// Norm, when set, compares this run with the normative folder built by "norm build"
	// (package norm): z-maps, hubs lost and gained, clusters of abnormal voxels. The folder
	// must have been built with the same Settings.
	Norm string `json:"norm,omitempty"`
}

// BundleSettings is the part of the configuration that decides a bundle's content, as a flat
// map of JSON keys: the paths of the scan, the output and the normative folder left out.
// Cohort markers and normative folders record it; a run is compared with them through it.
func (c Config) BundleSettings() map[string]any {
	c.Scan, c.Out, c.Overwrite, c.Norm = "", "", false, ""
	return norm.Flatten(c)
}

// nodalIrrelevant are the settings that leave a run's degree, strength and clustering maps
// unchanged (the backends agree by the conformance suite; the others choose extra outputs or
// labels), so a patient's run may differ from its normative cohort in them.
var nodalIrrelevant = map[string]bool{"backend": true, "atlas": true, "atlas_names": true, "keep_series": true, "export": true, "symmetric_npz": true, "bids_names": true,
	"metrics": true, "random": true, "betweenness": true, "seed": true,
	"dfc_window": true, "dfc_step": true, "dfc_rank": true, "dfc_networks": true, "dfc_max_censored": true}

// NodalSettings is BundleSettings without the keys that leave the nodal maps unchanged: what a
// normative comparison holds a run to. Realignment and registration left unset are off (their
// default), so a cohort analysed from the command line (unset) and a patient from the app
// (off) agree.
func NodalSettings(set map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range set {
		if !nodalIrrelevant[k] {
			out[k] = v
		}
	}
	for _, k := range []string{"realign", "register"} {
		if v, ok := out[k]; !ok || v == nil || v == "" {
			out[k] = settings.RealignOff
		}
	}
	return out
}

// Defaults are the settings' defaults (settings.Defaults) with no files named: the cleaning
// is auto, so every network (run, cohort, group, norm, the daemon's jobs) is built from
// cleaned series, and a normative folder and a run compared with it agree by default.
func Defaults() Config {
	c := Config{Settings: settings.Defaults()}
	return c
}

// fcConfig translates the network settings for the fc driver; set must be valid. With a
// sweep the threshold is the sweep's loosest.
func fcConfig(set settings.Settings) fc.Config {
	s := set.Network
	if set.Sweep != "" {
		sp, _ := sweep.Parse(set.Sweep) // Validate parsed it
		if sp.Kind == sweep.KindR {
			s.Mode, s.R = settings.ModeR, sp.Loosest()
		} else {
			s.Mode, s.Density = settings.ModeDensity, sp.Loosest()
		}
	}
	c := fc.Config{
		Measure: map[string]fc.Measure{settings.Pearson: fc.Pearson, settings.Spearman: fc.Spearman, settings.Kendall: fc.Kendall}[s.Measure],
		Abs:     s.Abs,
	}
	switch s.Mode {
	case settings.ModeDensity:
		c.Mode, c.Density = fc.Density, s.Density
	case settings.ModeR:
		c.Mode, c.Threshold = fc.Strength, s.R
	case settings.ModeAlpha:
		c.Mode, c.Alpha, c.Correction = fc.Significance, s.Alpha, fc.Bonferroni
		if s.Correction == settings.FDR {
			c.Correction = fc.FDR
		}
	case settings.ModeKNN:
		c.Mode, c.K = fc.NearestNeighbours, s.K
	}
	return c
}

// Validate reports the first problem with the configuration; a problem with a setting is a
// *settings.SettingError.
func (c *Config) Validate() error {
	if c.Group != nil {
		if err := c.checkGroup(); err != nil {
			return err
		}
	} else if c.Scan == "" && !c.Demo {
		return errors.New("no scan given")
	}
	if c.Demo && (c.Scan != "" || c.Mask != "") {
		return fmt.Errorf("the demo analyses its own phantom and mask: give no scan or mask with it")
	}
	if c.Out == "" {
		return errors.New("no output directory given (--out DIR)")
	}
	if c.TimeAxis != 0 && (c.TimeAxis < 4 || c.TimeAxis > 7) {
		return &settings.SettingError{Key: "time_axis", Flag: "time-axis", Problem: fmt.Sprintf("%d: want one of 4 to 7, the NIfTI dimensions after x, y, z", c.TimeAxis)}
	}
	for k, i := range c.Index {
		if k < 4 || k > 7 || i < 0 {
			return &settings.SettingError{Key: "index", Flag: "index", Problem: fmt.Sprintf("%d=%d: want AXIS=I with AXIS one of 4 to 7 and I an entry from 0", k, i)}
		}
	}
	if err := c.Settings.Validate(); err != nil {
		return err
	}
	if err := c.clean().validate(); err != nil {
		return err
	}
	if c.Group != nil && c.Confounds != "" {
		// Each subject is cleaned on its own (group.go); its table is found beside its image.
		return fmt.Errorf("group: --confounds names one scan's table; each subject's confounds table is found beside its fMRIPrep image")
	}
	// The nodes' kind and the atlas were checked by Settings.Validate.
	if c.Nodes == NodesRegions && c.Group != nil {
		return c.Settings.Errorf("nodes", "regions: group networks are built from voxels; run each subject with --nodes regions instead")
	}
	if _, _, err := parseExports(c.Export); err != nil {
		return err
	}
	if c.Sweep != "" {
		if _, err := sweep.Parse(c.Sweep); err != nil {
			return c.Settings.Errorf(settings.KeySweep, "%v", err)
		}
	}
	return nil
}
