package pipeline

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/bids"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/scratch"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// Realignment modes (Config.Realign, --realign; ipc/settings' Motion group).
const (
	RealignOff  = settings.RealignOff
	RealignOn   = settings.RealignOn
	RealignAuto = settings.RealignAuto
)

// MotionReport is what realignment found and did (qc/motion.json, schema.Motion).
type MotionReport = schema.Motion

// autoRealignVoxelFraction: --realign auto realigns a raw scan when some volume lies further
// from the first than this fraction of the smallest voxel edge (FD's measure: translations plus
// rotations on a 50 mm sphere, Power et al. 2012): 0.3 mm for 3 mm voxels. Below it the
// intensity change from motion is under a tenth of an edge's contrast, less than the B-spline
// reslicing would smooth away; above it SPM's and FSL's pipelines would realign anyway.
const autoRealignVoxelFraction = 0.1

// realignWanted decides whether the scan is realigned and says why in words.
func realignWanted(cfg Config) (bool, string) {
	mode := cfg.Realign
	if mode == "" || mode == RealignOff || cfg.Group != nil {
		return false, ""
	}
	ext := strings.ToLower(cfg.Scan)
	if !strings.HasSuffix(ext, ".nii") && !strings.HasSuffix(ext, ".nii.gz") && !strings.HasSuffix(ext, ".hdr") && !strings.HasSuffix(ext, ".img") {
		return false, "not an image: a time-series matrix has no head to realign"
	}
	if mode == RealignOn {
		return true, "--realign on"
	}
	if bids.IsPreprocBold(cfg.Scan) {
		return false, "fMRIPrep's output is realigned already"
	}
	if cfg.Confounds != "" {
		return false, "a confounds table was given: the scan is taken as preprocessed"
	}
	if f, err := bids.Confounds(cfg.Scan); err == nil && f != "" {
		return false, "a confounds table lies beside the scan: the scan is taken as preprocessed"
	}
	return true, "a raw scan (no confounds table)"
}

// realignScan realigns the scan (package realign: rigid, two passes, trilinear estimation,
// cubic B-spline reslicing), writes qc/motion.tsv (fMRIPrep's columns), qc/motion.png and
// qc/motion.json into the bundle, and returns the path of the realigned series (a float32
// NIfTI in a private temporary folder that cleanup removes) for the loader, with a copy of the
// motion table there (motion.tsv) for the cleaning step. The header keeps the scan's geometry
// and transform codes. Under --realign auto a coarse first pass (realign.Screen) comes first:
// when the scan moved less than autoRealignVoxelFraction of a voxel, nothing is resampled and
// the report (Realigned false, path "") says so.
func realignScan(ctx context.Context, cfg Config, w *bundle.Writer, rep progress.Reporter) (path string, mr *MotionReport, cleanup func(), err error) {
	cleanup = func() {}
	h, data, err := nifti.ReadImage(cfg.Scan)
	if err != nil {
		return "", nil, cleanup, err
	}
	// The time series of a 5D+ image (--time-axis, --index), as the loader would read it;
	// the realigned file is then a plain 4D series of those volumes.
	sel, err := scan.SelectVolumes(&h, cfg.TimeAxis, cfg.Index)
	if err != nil {
		return "", nil, cleanup, fmt.Errorf("%s: %w", cfg.Scan, err)
	}
	if sel != nil || h.Dim[0] > 4 {
		nv := h.VoxelsPerVolume()
		if sel == nil {
			sel = make([]int, h.Volumes())
			for t := range sel {
				sel[t] = t
			}
		}
		picked := make([]float32, 0, len(sel)*nv)
		for _, v := range sel {
			picked = append(picked, data[v*nv:(v+1)*nv]...)
		}
		data = picked
		rep.Note(scan.SelectionNote(&h, cfg.TimeAxis, cfg.Index, len(sel)))
		step := h.PixDim[max(cfg.TimeAxis, 4)]
		h.Dim[0], h.Dim[4], h.Dim[5], h.Dim[6], h.Dim[7], h.PixDim[4] = 4, int64(len(sel)), 1, 1, 1, step
	}
	g := realign.Grid{Dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, Affine: h.Affine()}
	l := h.Volumes()
	if l < 3 {
		return "", nil, cleanup, fmt.Errorf("%s: %d volume(s): realignment needs a 4D series", cfg.Scan, l)
	}
	vols := make([][]float32, l)
	for t := range vols {
		vols[t] = data[t*g.Len() : (t+1)*g.Len()]
	}
	var screen *MotionReport
	if cfg.Realign == RealignAuto {
		// A cheap first look decides whether the scan moved enough to be worth resampling.
		sr, err := realign.Screen(ctx, g, vols, realign.DefaultOptions(), rep)
		if err != nil {
			return "", nil, cleanup, fmt.Errorf("%s: %w", cfg.Scan, err)
		}
		vs := math.Inf(1)
		for j := 0; j < 3; j++ {
			a := g.Affine
			vs = math.Min(vs, math.Sqrt(a[0][j]*a[0][j]+a[1][j]*a[1][j]+a[2][j]*a[2][j]))
		}
		screen = &MotionReport{Volumes: l, ScreenMaxDisplacementMM: sr.MaxDisplacement(), ScreenThresholdMM: autoRealignVoxelFraction * vs}
		if screen.ScreenMaxDisplacementMM <= screen.ScreenThresholdMM {
			screen.Reason = fmt.Sprintf("--realign auto: a coarse first pass found at most %.2f mm of motion from the first volume, within %.2f mm (a tenth of the %.2f mm voxel): not realigned",
				screen.ScreenMaxDisplacementMM, screen.ScreenThresholdMM, vs)
			return "", screen, cleanup, nil
		}
		screen.Reason = fmt.Sprintf("--realign auto: a coarse first pass found up to %.2f mm of motion from the first volume, over %.2f mm (a tenth of the %.2f mm voxel)",
			screen.ScreenMaxDisplacementMM, screen.ScreenThresholdMM, vs)
	}
	res, err := realign.Estimate(ctx, g, vols, realign.DefaultOptions(), rep)
	if err != nil {
		return "", nil, cleanup, fmt.Errorf("%s: %w", cfg.Scan, err)
	}
	ropt := realign.DefaultOptions()
	ropt.Interp = realign.BSpline
	unc, err := realign.Reslice(ctx, g, vols, res, ropt, rep)
	if err != nil {
		return "", nil, cleanup, fmt.Errorf("%s: %w", cfg.Scan, err)
	}
	dir, err := scratch.MkdirTemp("", "realign")
	if err != nil {
		return "", nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	out := filepath.Join(dir, "realigned.nii")
	hdr := h
	hdr.DataType, hdr.SclSlope, hdr.SclInter = nifti.Float32, 0, 0
	if err := nifti.WriteImage(out, hdr, data); err != nil {
		cleanup()
		return "", nil, func() {}, err
	}
	mr = &MotionReport{Realigned: true, Volumes: l, Passes: res.Passes, Interpolation: ropt.Interp.String(), UncoveredVoxels: unc}
	if screen != nil {
		mr.Reason, mr.ScreenMaxDisplacementMM, mr.ScreenThresholdMM = screen.Reason, screen.ScreenMaxDisplacementMM, screen.ScreenThresholdMM
	}
	for t, p := range res.Params {
		fd := res.FD[t]
		mr.MeanFD += fd / float64(max(l-1, 1))
		mr.MaxFD = math.Max(mr.MaxFD, fd)
		if fd > 0.5 {
			mr.VolumesOverFD05++
		}
		for k := 0; k < 3; k++ {
			mr.MaxTranslationMM = math.Max(mr.MaxTranslationMM, math.Abs(p[k]))
			mr.MaxRotationDeg = math.Max(mr.MaxRotationDeg, math.Abs(p[k+3])*180/math.Pi)
		}
	}
	if err := w.WriteFile("qc/motion.tsv", res.WriteTSV); err != nil {
		cleanup()
		return "", nil, func() {}, err
	}
	if f, err := os.Create(filepath.Join(dir, "motion.tsv")); err == nil {
		err = res.WriteTSV(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			cleanup()
			return "", nil, func() {}, err
		}
	} else {
		cleanup()
		return "", nil, func() {}, err
	}
	if err := w.WriteFile("qc/motion.png", func(o io.Writer) error { return res.Plot(o) }); err != nil {
		cleanup()
		return "", nil, func() {}, err
	}
	return out, mr, cleanup, nil
}
