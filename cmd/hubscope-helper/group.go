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
	fs := newFlags("group", "group SCAN SCAN… --out DIR [flags]   (or: group --bids DIR --out DIR)", stdout, stderr)
	bidsDir := fs.String("bids", "", "take every sub-*/func/*_bold.nii[.gz] run of this BIDS dataset `DIR` as a subject")
	task := fs.String("task", "", "with --bids: only runs of this `TASK`")
	fs.StringVar(&g.Mean, "mean", g.Mean, "`MEAN` over subjects: fisher-z (tanh of the mean atanh r) or r")
	maskRule := fs.String("mask-rule", g.MaskRule, "`RULE` for subjects whose masks differ: intersect, union, or \"mask FILE\" (or give --mask FILE)")
	fs.BoolVar(&g.Truncate, "truncate", false, "subjects of different lengths: use every subject's first volumes, as many as the shortest has (else they are refused); subjects of different TRs are resampled to the longest TR first")
	fs.StringVar(&cfg.Out, "out", "", "results bundle `DIR` (written complete or not at all)")
	fs.BoolVar(&cfg.Overwrite, "overwrite", false, "replace an existing results bundle at --out")
	fs.StringVar(&cfg.Mask, "mask", "", "one brain mask `FILE` for every subject (mask rule \"mask\")")
	// The analysis settings, as for run (each subject's measure: pearson or spearman; the
	// thresholds apply to the mean r̄; the mean of r is one product on the backend, the mean
	// Fisher z runs on the CPU group engine).
	cfg.Settings.AddFlags(fs.FlagSet)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := cfg.Settings.Resolve(cfg.Settings.Given(fs.FlagSet)); err != nil {
		return settingUsage(stderr, "group", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
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
