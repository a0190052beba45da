package pipeline

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/dfc"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/npy"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// The dynamic-connectivity stage (docs/algorithms.md, "Dynamic connectivity"): sliding-window networks with the static
// network's measure and threshold, written into the bundle's dfc/ folder:
//
//	dfc/summary.json        schema.DFCSummary: window, step, TR, each window's start, edges, measures
//	dfc/windows.tsv         the same measures, one row per window
//	dfc/degree.nii.gz       4D: window k's degree map is volume k (pixdim[4] = step·TR)
//	dfc/degree_sd.nii.gz    population SD of each node's degree over the windows
//	dfc/degree_cv.nii.gz    its coefficient of variation SD/mean (NaN: never connected)
//	dfc/network_WWW.npz     window WWW's network, scipy CSR (DFCNetworks)
//	dfc/lowrank_WWW.npy     N×l float32 F with the window matrix S ≈ F Fᵀ (DFCRank)
//	dfc/lowrank.tsv         per window: rank, compression ratio N/(2l), MAE of the SVD and of
//	                        GPU-DFC's randomized factor over sampled pairs (DFCRank)

// checkDFCLength refuses a window longer than the scan (volumes time points). Before loading
// it is called with the NIfTI header's volume count (volumes < 0: not known yet).
func checkDFCLength(c Config, volumes int) error {
	if c.DFCWindow == 0 {
		return nil
	}
	if volumes < 0 {
		switch strings.ToLower(filepath.Ext(c.Scan)) {
		case ".npy", ".csv", ".tsv", ".txt": // matrices load fast; checked after loading
			return nil
		}
		r, err := nifti.Open(c.Scan)
		if err != nil {
			return nil // scan.Load reports an unreadable scan with its own words
		}
		volumes = r.Header.Volumes()
		r.Close()
	}
	if c.DFCWindow > volumes {
		return fmt.Errorf("window (--window, dfc_window) %d volumes is longer than %s's %d time points", c.DFCWindow, c.Scan, volumes)
	}
	return nil
}

// dfcAxis is the length of the time axis the windows are laid out on: the cleaned series'
// volumes l, or with censoring every volume after the dropped ones.
func dfcAxis(crep *CleanReport, l int) int {
	if crep != nil && len(crep.Censored) > 0 {
		return crep.VolumesIn - crep.Dropped
	}
	return l
}

// runDFC runs the sliding windows on the loaded series and writes dfc/ into the bundle. It
// returns notes for provenance, leaving out those already in known (the static network's).
func runDFC(ctx context.Context, cfg Config, be fc.Backend, s *scan.Scan, crep *CleanReport, fcc fc.Config, w *bundle.Writer, known []string, rep progress.Reporter) ([]string, error) {
	opt := dfc.Options{Window: cfg.DFCWindow, Step: cfg.DFCStep, FC: fcc, Rank: cfg.DFCRank, Seed: cfg.Seed,
		// Leiden per window is the costly measure; it runs wherever the static metrics run it.
		Modularity: cfg.Metrics != settings.MetricsNone, Leiden: leidenOptions(cfg)}
	if crep != nil && len(crep.Censored) > 0 {
		// Windows on the original axis (after the dropped volumes); each uses its uncensored
		// volumes, and one with more than dfc_max_censored of them censored is left out.
		opt.Axis, opt.MaxCensored = dfcAxis(crep, s.L), cfg.DFCMaxCensored
		opt.Kept = make([]int, len(crep.kept))
		for j, v := range crep.kept {
			opt.Kept[j] = v - crep.Dropped
		}
	}
	res, err := dfc.Run(ctx, be, s.Data, s.N, s.L, opt, rep, func(win *dfc.Window) error {
		if cfg.DFCNetworks {
			if err := w.WriteFile(fmt.Sprintf("dfc/network_%03d.npz", win.Index), func(out io.Writer) error {
				return bundle.EncodeNetworkNPZ(out, win.Network)
			}); err != nil {
				return err
			}
		}
		if win.Factor != nil {
			return w.WriteFile(fmt.Sprintf("dfc/lowrank_%03d.npy", win.Index), func(out io.Writer) error {
				// S ≈ F·Fᵀ: numpy.load gives F as float32 (N, l).
				r, c := win.Factor.Dims()
				return npy.WriteMatrix(out, r, c, func(i int, dst []float32) {
					for k := range dst {
						dst[k] = float32(win.Factor.At(i, k))
					}
				})
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	k := len(res.Windows)
	rep.Start("write dynamic connectivity", 4)
	sum := dfcSummary(cfg, s.TR, res)
	if opt.Axis > 0 {
		sum.MaxCensored = cfg.DFCMaxCensored
		sum.Skipped = []schema.DFCSkipped{}
		for _, sk := range res.Skipped {
			sum.Skipped = append(sum.Skipped, schema.DFCSkipped{Index: sk.Index, Start: sk.Start, Censored: sk.Censored})
		}
	}
	if err := w.WriteJSON("dfc/summary.json", sum); err != nil {
		return nil, err
	}
	if err := writeWindowTable(w, sum); err != nil {
		return nil, err
	}
	rep.Add(1)
	if cfg.DFCRank > 0 {
		if err := writeLowRankTable(w, res); err != nil {
			return nil, err
		}
	}
	if s.IJK != nil {
		frames := make([][]float32, k)
		for i, win := range res.Windows {
			frames[i] = make([]float32, s.N)
			for v, d := range win.Degree {
				frames[i][v] = float32(d)
			}
		}
		if err := w.WriteNodeSeries("dfc/degree.nii.gz", s, frames, float64(cfg.DFCStep)*s.TR); err != nil {
			return nil, err
		}
		rep.Add(1)
		if err := w.WriteNodeMap("dfc/degree_sd.nii.gz", s, f64to32(res.DegreeSD), nifti.Float32); err != nil {
			return nil, err
		}
		rep.Add(1)
		if err := w.WriteNodeMap("dfc/degree_cv.nii.gz", s, f64to32(res.DegreeCV), nifti.Float32); err != nil {
			return nil, err
		}
		rep.Add(1)
	}
	notes := []string{fmt.Sprintf("dynamic connectivity: %d windows of %d volumes every %d volumes (window starts %d…%d)",
		k, cfg.DFCWindow, cfg.DFCStep, res.Windows[0].Start, res.Windows[k-1].Start)}
	if opt.Axis > 0 {
		notes = append(notes, fmt.Sprintf("dynamic connectivity with censoring: windows on the original axis of %d volumes, each using its uncensored volumes; %d window(s) with more than %.0f %% censored left out (dfc/summary.json \"skipped\"); dfc/degree.nii.gz holds the others in order",
			opt.Axis, len(res.Skipped), 100*cfg.DFCMaxCensored))
	}
	for _, n := range res.Notes {
		if !slices.Contains(known, n) {
			notes = append(notes, n)
		}
	}
	if !opt.Modularity {
		notes = append(notes, "dynamic connectivity: no per-window modularity with --metrics none")
	}
	if s.IJK == nil {
		notes = append(notes, "dynamic connectivity: no degree maps for a matrix input (no voxel grid); see dfc/windows.tsv")
	}
	for _, n := range notes {
		rep.Note(n)
	}
	return notes, nil
}

// dfcSummary is dfc/summary.json, the form the daemon serves to the app's Dynamics tab.
// Non-finite values (the +Inf threshold of a window that keeps nothing) are left out, as JSON
// has no such numbers, and the window's Undefined says why; so does a modularity a window
// without edges cannot have.
func dfcSummary(cfg Config, tr float64, res *dfc.Result) *schema.DFCSummary {
	sum := &schema.DFCSummary{Window: cfg.DFCWindow, Step: cfg.DFCStep, TR: tr, Windows: make([]schema.DFCWindow, len(res.Windows))}
	for i, win := range res.Windows {
		m := win.Measures.Map()
		if lr := win.LowRank; lr != nil {
			m["lowrank_mae_svd"], m["lowrank_mae_randomized"] = lr.MAESVD, lr.MAERandomized
		}
		und := map[string]string{}
		for key, v := range m {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				delete(m, key)
				und[key] = dfcReason(key, v)
			}
		}
		if _, ok := m["modularity"]; !ok && cfg.Metrics != settings.MetricsNone && win.Measures.Edges == 0 {
			und["modularity"] = dfcReason("modularity", math.NaN())
		}
		sum.Windows[i] = schema.DFCWindow{Index: win.Index, Start: win.Start, Edges: win.Measures.Edges, Measures: m}
		if len(und) > 0 {
			sum.Windows[i].Undefined = und
		}
	}
	return sum
}

// windowColumns are dfc/windows.tsv's measure columns, in this order; a measure a window lacks
// is written NA (as pandas and R read it).
var windowColumns = []string{"threshold", "density", "mean_degree", "isolated_nodes", "clustering_coefficient",
	"largest_component_share", "modularity", "lowrank_mae_svd", "lowrank_mae_randomized"}

func writeWindowTable(w *bundle.Writer, sum *schema.DFCSummary) error {
	var cols []string
	for _, c := range windowColumns {
		for _, win := range sum.Windows {
			if _, ok := win.Measures[c]; ok {
				cols = append(cols, c)
				break
			}
		}
	}
	header := append([]string{"window", "start", "edges"}, cols...)
	return w.WriteTSV("dfc/windows.tsv", header, func(emit func(...string) error) error {
		for _, win := range sum.Windows {
			row := []string{strconv.Itoa(win.Index), strconv.Itoa(win.Start), strconv.FormatInt(win.Edges, 10)}
			for _, c := range cols {
				if v, ok := win.Measures[c]; ok {
					row = append(row, strconv.FormatFloat(v, 'g', -1, 64))
				} else {
					row = append(row, "NA")
				}
			}
			if err := emit(row...); err != nil {
				return err
			}
		}
		return nil
	})
}

func writeLowRankTable(w *bundle.Writer, res *dfc.Result) error {
	header := []string{"window", "rank", "compression_ratio", "energy", "mae_svd", "mae_randomized", "mae_samples"}
	return w.WriteTSV("dfc/lowrank.tsv", header, func(emit func(...string) error) error {
		for _, win := range res.Windows {
			lr := win.LowRank
			if err := emit(strconv.Itoa(win.Index), strconv.Itoa(lr.Rank), strconv.FormatFloat(lr.Compression, 'g', -1, 64),
				strconv.FormatFloat(lr.Energy, 'g', 6, 64), strconv.FormatFloat(lr.MAESVD, 'g', 6, 64),
				strconv.FormatFloat(lr.MAERandomized, 'g', 6, 64), strconv.Itoa(lr.Samples)); err != nil {
				return err
			}
		}
		return nil
	})
}

// dfcReason is why a window's measure has no value (the same words as metrics.json's).
func dfcReason(key string, v float64) string {
	switch key {
	case "threshold":
		return reasonFor("network.threshold", "")
	case "modularity":
		return "the window's network has no edges: modularity divides by twice the number of edges"
	}
	return fmt.Sprintf("not a finite number (%v)", v)
}
