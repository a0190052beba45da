package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/group"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/progress"
)

func cmdGroup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := pipeline.Defaults()
	g := &pipeline.GroupConfig{Mean: group.MeanFisherZ, MaskRule: group.MaskIntersect}
	fs := newFlags("group", "group SCAN SCAN… --out DIR [flags]   (or: group --bids DIR --out DIR)", stderr)
	bidsDir := fs.String("bids", "", "take every sub-*/func/*_bold.nii[.gz] run of this BIDS dataset as a subject")
	task := fs.String("task", "", "with --bids: only runs of this task")
	fs.StringVar(&g.Mean, "mean", g.Mean, "mean over subjects: fisher-z (tanh of the mean atanh r) or r")
	maskRule := fs.String("mask-rule", g.MaskRule, "subjects whose masks differ: intersect, union, or \"mask FILE\" (or give --mask FILE)")
	fs.StringVar(&cfg.Out, "out", "", "results bundle directory (written complete or not at all)")
	fs.BoolVar(&cfg.Overwrite, "overwrite", false, "replace an existing results bundle at --out")
	fs.StringVar(&cfg.Mask, "mask", "", "one brain mask for every subject (mask rule \"mask\")")
	fs.StringVar(&cfg.Measure, "measure", cfg.Measure, "each subject's measure: pearson or spearman")
	fs.StringVar(&cfg.Backend, "backend", cfg.Backend, "auto, cuda or cpu: the mean of r is one product on it; the mean Fisher z runs on the CPU group engine")
	fs.BoolVar(&cfg.Abs, "abs", false, "use |r̄| as the connection value")
	density := fs.Float64("density", 0, "keep exactly this fraction of all pairs, the strongest (default 0.01)")
	r := fs.Float64("r", 0, "keep pairs with r̄ > T (Wang et al.: 0.45 … 0.70)")
	knn := fs.Int("knn", 0, "keep each node's K strongest links (union)")
	fs.StringVar(&cfg.Sweep, "sweep", "", "threshold sweep: r=LO:HI:STEP, density=LO:HI:STEP or a list, from one pass over the subjects")
	fs.StringVar(&cfg.Metrics, "metrics", cfg.Metrics, "none, basic or full")
	fs.IntVar(&cfg.Random, "random", cfg.Random, "degree-preserving random networks for small-world and modularity baselines (full metrics)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed for random networks and module search")
	fs.Float64Var(&cfg.HubSD, "hub-sd", cfg.HubSD, "hubs: degree > mean + this many SD")
	fs.StringVar(&cfg.Atlas, "atlas", "", "label image naming the hubs' regions in hubs.tsv")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	modes := 0
	for _, name := range []string{"density", "r", "knn", "sweep"} {
		if set[name] {
			modes++
		}
	}
	if modes > 1 {
		fmt.Fprintln(stderr, "group: give at most one of --density, --r, --knn, --sweep")
		return errUsage
	}
	switch {
	case set["density"]:
		cfg.Mode, cfg.Density = "density", *density
	case set["r"]:
		cfg.Mode, cfg.R = "r", *r
	case set["knn"]:
		cfg.Mode, cfg.K = "knn", *knn
	}
	cfg.Correction = ""
	rule, file, _ := strings.Cut(*maskRule, " ")
	g.MaskRule = rule
	if file != "" {
		cfg.Mask = file
	}
	if cfg.Mask != "" && !set["mask-rule"] {
		g.MaskRule = group.MaskFile
	}
	switch {
	case *bidsDir != "" && len(pos) > 0:
		fmt.Fprintln(stderr, "group: give scans or --bids DIR, not both")
		return errUsage
	case *bidsDir != "":
		runs, err := derivatives.Find(*bidsDir, *task)
		if err != nil {
			return err
		}
		for _, run := range runs {
			g.Subjects = append(g.Subjects, group.Subject{Label: run.ID(), Path: run.Path})
		}
	default:
		for _, p := range pos {
			g.Subjects = append(g.Subjects, group.Subject{Label: filepath.Base(p), Path: p})
		}
	}
	if len(g.Subjects) < 2 {
		fmt.Fprintf(stderr, "group: %d subject(s) given; a group network needs at least 2 scans\n", len(g.Subjects))
		return errUsage
	}
	if cfg.Out == "" {
		fmt.Fprintln(stderr, "group: --out DIR is required")
		return errUsage
	}
	cfg.Group = g
	disp := progress.NewDisplay(stderr)
	res, err := pipeline.Run(ctx, cfg, disp)
	disp.Close(err == nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "group       %d subjects, mean of %s, mask rule %s\n", len(g.Subjects), map[string]string{group.MeanFisherZ: "Fisher z", group.MeanR: "r"}[g.Mean], g.MaskRule)
	for _, n := range res.Notes {
		fmt.Fprintf(stdout, "            %s\n", n)
	}
	printSummary(stdout, res)
	return nil
}
