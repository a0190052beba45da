package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/synth"
)

func cmdSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p := synth.DefaultParams()
	fs := newFlags("synth", "synth --out scan.nii.gz [--mask M] [--voxel-mm 3] [--modules 7] [--hubs 40] ...   (or: synth --subjects S [--lesion] --out DIR)", stdout, stderr)
	out := fs.String("out", "", "output scan `FILE` (.nii.gz or .nii); the ground truth is written beside it")
	mask := fs.String("mask", "", "brain mask `FILE`, NIfTI (non-zero = brain); default: the embedded MNI152 2 mm brain mask")
	gm := fs.Bool("grey-matter", false, "the mask is a grey-matter probability map: keep voxels above 0.2 of its maximum, then close (as nilearn does)")
	voxel := fs.Float64("voxel-mm", 0, "resample the mask to voxels of `MM` mm first (e.g. 3 or 4; 0 = keep)")
	fs.IntVar(&p.Modules, "modules", p.Modules, "`N` planted modules")
	fs.IntVar(&p.Hubs, "hubs", p.Hubs, "`N` planted hub voxels")
	fs.Float64Var(&p.TR, "tr", p.TR, "repetition time in `SECONDS`")
	fs.IntVar(&p.Length, "length", p.Length, "`N` volumes")
	fs.Int64Var(&p.Seed, "seed", p.Seed, "random seed `N` (same seed, same phantom)")
	dtype := fs.String("dtype", "int16", "stored datatype `NAME`: int16 or float32")
	subjects := fs.Int("subjects", 0, "write a phantom cohort of `S` subjects (individual signals and noise on one layout) as a BIDS folder at --out")
	lesion := fs.Bool("lesion", false, "with --subjects: also write a patient (sub-patient01) whose planted hubs in one module are removed (truth/lesion.tsv)")
	patients := fs.Int("patients", 1, "with --lesion: how many patients `N` (sub-patient01 …), e.g. for a two-group comparison")
	lesionModule := fs.Int("lesion-module", 0, "with --lesion: the `MODULE` whose hubs are removed (default: the one with the most planted hubs)")
	motion := fs.Float64("motion", 0, "write a moving head: every volume moved rigidly by up to `MM` mm and degrees (e.g. 3), soft-edged head on a padded grid; the true motion goes to <base>_truth_motion.tsv")
	core := fs.Float64("core-correlation", -1, "grade each module from a core sharing `R` of its variance with the module signal down to the within-module correlation at its border (0 = uniform modules; default: 0.95 with --subjects, 0 for one scan or with --lesion)")
	fs.Float64Var(&p.CoreExponent, "core-exponent", 16, "with --core-correlation: how fast the coupling falls from the core, `K` in ρ + (R − ρ)·(1 − u)^K")
	nuisance := fs.Float64("nuisance", 0, "add scanner drifts, head-motion effects and a global physiological signal of `SD` relative to the fluctuation (e.g. 2) and write them as an fMRIPrep confounds table beside the scan")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		fmt.Fprintln(stderr, "synth: --out is required")
		fs.Usage()
		return errUsage
	}
	switch strings.ToLower(*dtype) {
	case "int16":
		p.DataType = nifti.Int16
	case "float32":
		p.DataType = nifti.Float32
	default:
		return fmt.Errorf("--dtype %q: want int16 or float32", *dtype)
	}
	switch {
	case *core >= 0:
		p.CoreCorrelation = *core
	case *subjects > 0 && !*lesion:
		// A cohort's group mean needs cores to hold edges at r̄ ≥ 0.45 (graded.go). A lesion
		// cohort keeps uniform modules: its truth is the planted connector hubs, and the cores
		// would add provincial hubs the lesion leaves alone (docs/algorithms.md).
		p.CoreCorrelation = synth.DefaultCohortParams().CoreCorrelation
	}
	m, affine, err := loadSynthMask(*mask, *gm)
	if err != nil {
		return err
	}
	if *voxel > 0 {
		m, affine = synth.ResampleMask(m, affine, *voxel)
	}
	if err := p.Validate(m.Count()); err != nil {
		return err
	}
	if *subjects > 0 {
		disp := progress.NewDisplay(stderr)
		ct, err := synth.WriteCohort(ctx, m, affine, p, synth.CohortOptions{Subjects: *subjects, Lesion: *lesion, LesionModule: *lesionModule, Patients: *patients}, *out, disp)
		disp.Close(err == nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "phantom cohort: %s (%d subjects, %d brain voxels, %d volumes, TR %g s, %d modules, %d hubs)\n",
			*out, len(ct.Subjects), m.Count(), p.Length, p.TR, p.Modules, len(ct.Layout.Hubs))
		if ct.Patient != "" {
			fmt.Fprintf(stdout, "patients: %d (sub-patient01 …), each without the %d planted hubs of one module (truth/lesion.tsv)\n", max(1, *patients), len(ct.Lesioned))
		}
		return nil
	}
	if *motion != 0 {
		disp := progress.NewDisplay(stderr)
		_, traj, err := synth.WriteMoving(ctx, m, affine, p, synth.Motion{MaxShiftMM: *motion, MaxRotDeg: *motion}, *out, disp)
		disp.Close(err == nil)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "moving phantom: %s (%d brain voxels, %d volumes, motion within %g mm / %g°; truth motion %s)\n",
			*out, m.Count(), len(traj), *motion, *motion, synth.MotionTruthPath(*out))
		return nil
	}
	if *lesion || *lesionModule != 0 {
		fmt.Fprintln(stderr, "synth: --lesion needs --subjects")
		return errUsage
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	disp := progress.NewDisplay(stderr)
	var truth *synth.Truth
	if *nuisance > 0 {
		truth, err = synth.WriteNuisance(ctx, m, affine, p, synth.Nuisance{Scale: *nuisance}, *out, disp)
	} else {
		truth, err = synth.Write(ctx, m, affine, p, *out, disp)
	}
	disp.Close(err == nil)
	if err != nil {
		return err
	}
	if *nuisance > 0 {
		fmt.Fprintf(stdout, "confounds: %s\n", synth.ConfoundsPath(*out))
	}
	modPath, hubPath := synth.TruthPaths(*out)
	fmt.Fprintf(stdout, "phantom: %s (%d×%d×%d grid, %d brain voxels, %d volumes, TR %g s, %d modules, %d hubs)\n",
		*out, m.Dims[0], m.Dims[1], m.Dims[2], m.Count(), p.Length, p.TR, p.Modules, len(truth.Hubs))
	fmt.Fprintf(stdout, "ground truth: %s, %s\n", modPath, hubPath)
	return nil
}

// loadSynthMask reads the user's mask, or the embedded MNI152 2 mm brain mask.
func loadSynthMask(path string, greyMatter bool) (scan.Mask, [4][4]float64, error) {
	switch {
	case path == "":
		return synth.DefaultMask()
	case greyMatter:
		return synth.GreyMatterMask(path, 0.2)
	default:
		return synth.ReadMask(path, 0)
	}
}
