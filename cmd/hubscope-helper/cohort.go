package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hubscope/hubscope/helper/cohort"
	"github.com/hubscope/hubscope/helper/group"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/progress"
)

// analysisFlags registers the per-run analysis flags of cohort and norm on fs (the settings
// table's, as for run, with the mask and atlas); the returned function resolves the settings
// after parsing.
func analysisFlags(fs *flagSet, cfg *pipeline.Config, cmd string, stderr io.Writer) func() error {
	cfg.Settings.AddFlags(fs.FlagSet)
	fs.StringVar(&cfg.Mask, "mask", "", "brain mask `FILE` for every run (default: each run's automatic EPI mask)")
	return func() error {
		given := cfg.Settings.Given(fs.FlagSet)
		if given["confounds"] {
			// Each run's confounds table is found beside its fMRIPrep image.
			return settingUsage(stderr, cmd, cfg.Settings.Errorf("confounds", "names one scan's table; each run's is found beside its fMRIPrep image"))
		}
		if err := cfg.Settings.Resolve(given); err != nil {
			return settingUsage(stderr, cmd, err)
		}
		return nil
	}
}

func cmdCohort(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opt := cohort.Options{Config: pipeline.Defaults()}
	fs := newFlags("cohort", "cohort BIDS_DIR --out DERIV [flags]", stdout, stderr)
	fs.StringVar(&opt.Out, "out", "", "derivatives folder `DERIV` (BIDS derivatives dataset; re-running resumes)")
	fs.StringVar(&opt.Task, "task", "", "only runs of this `TASK`")
	fs.StringVar(&opt.Subject, "subject", "", "only this `SUBJECT`'s runs, without the table (the per-subject step, e.g. one array task)")
	tableOnly := fs.Bool("table-only", false, "only the group step: the group-mean network and the subjects × measures table from the finished bundles")
	fs.StringVar(&opt.GroupMean, "group-mean", group.MeanFisherZ, "`MEAN` of the group-mean network built after the runs' bundles, per task in DERIV/group/ (as the group command builds it, with these settings): fisher-z, r, or none")
	fs.IntVar(&opt.Jobs, "jobs", 0, "`N` runs analysed at once (default: half the CPU cores)")
	sl := slurmFlags(fs)
	apply := analysisFlags(fs, &opt.Config, "cohort", stderr)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *sl.status {
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "cohort: --status takes one derivatives folder: cohort DERIV --status")
			return errUsage
		}
		return cohortStatus(pos[0], stdout)
	}
	if err := apply(); err != nil {
		return err
	}
	if len(pos) != 1 || opt.Out == "" {
		fmt.Fprintln(stderr, "cohort: give one BIDS dataset and --out DERIV")
		fs.Usage()
		return errUsage
	}
	if *tableOnly && opt.Subject != "" {
		fmt.Fprintln(stderr, "cohort: --subject and --table-only are separate steps")
		return errUsage
	}
	switch opt.GroupMean {
	case group.MeanFisherZ, group.MeanR, cohort.GroupMeanNone:
	default:
		fmt.Fprintf(stderr, "cohort: --group-mean %q: want fisher-z, r or none\n", opt.GroupMean)
		return errUsage
	}
	opt.BIDS = pos[0]
	check := opt.Config
	check.Scan, check.Out = "check", "check"
	if err := check.Validate(); err != nil {
		return err
	}
	if *sl.slurm {
		if *tableOnly || opt.Subject != "" {
			fmt.Fprintln(stderr, "cohort: --slurm submits both steps; leave out --subject and --table-only")
			return errUsage
		}
		return cohortSlurm(opt, fs, sl, stdout)
	}
	var failed error // failed runs: the group mean is built over the others, the table refuses
	if !*tableOnly {
		disp := progress.NewDisplay(stderr)
		st, err := cohort.Run(ctx, opt, disp)
		disp.Close(err == nil && cohort.Failed(st) == nil)
		if err != nil {
			return err
		}
		counts := map[string]int{}
		for _, s := range st {
			counts[s.State]++
			if s.State == "failed" {
				fmt.Fprintf(stdout, "failed      %s: %v\n", s.Run.ID(), s.Err)
			}
		}
		fmt.Fprintf(stdout, "cohort      %d runs: %d analysed, %d skipped (complete, same settings), %d failed\n",
			len(st), counts["done"], counts["skipped"], counts["failed"])
		failed = cohort.Failed(st)
		if opt.Subject != "" {
			return failed
		}
	}
	groupErr, err := cohortGroupMeans(ctx, opt, stdout, stderr)
	if err != nil {
		return err
	}
	if failed != nil {
		return failed
	}
	rows, parts, err := cohort.Collect(opt)
	if err != nil {
		return err
	}
	path, err := cohort.WriteTable(opt, rows, parts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "table       %s (%d runs joined with %s)\n", path, len(rows), parts.Path)
	return groupErr
}

// cohortGroupMeans builds the cohort's group-mean networks (one per task, over the runs whose
// bundles are complete) and prints a line for each; failed names the networks that failed
// (the table is still written), err is an error that stops the command.
func cohortGroupMeans(ctx context.Context, opt cohort.Options, stdout, stderr io.Writer) (failed, err error) {
	if opt.GroupMean == cohort.GroupMeanNone {
		return nil, nil
	}
	disp := progress.NewDisplay(stderr)
	gs, err := cohort.GroupMeans(ctx, opt, disp)
	disp.Close(err == nil && cohort.GroupFailed(gs) == nil)
	if err != nil {
		return nil, err
	}
	for _, g := range gs {
		for _, l := range g.Left {
			fmt.Fprintf(stdout, "group mean  task %s: left out %s\n", g.Task, l)
		}
		switch g.State {
		case "done":
			fmt.Fprintf(stdout, "group mean  task %s: %d runs, mean of %s, in %s\n", g.Task, len(g.Runs), opt.GroupMean, g.Bundle)
			for _, n := range g.Notes {
				fmt.Fprintf(stdout, "            %s\n", n)
			}
		case "skipped":
			fmt.Fprintf(stdout, "group mean  task %s: %d runs, complete with the same runs and settings, skipped (%s)\n", g.Task, len(g.Runs), g.Bundle)
		case "not built":
			fmt.Fprintf(stdout, "group mean  task %s: not built: %s\n", g.Task, g.Reason)
		case "failed":
			fmt.Fprintf(stdout, "group mean  task %s: failed: %v\n", g.Task, g.Err)
		}
	}
	return cohort.GroupFailed(gs), nil
}

func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var opt cohort.CompareOptions
	fs := newFlags("compare", "compare DERIV --group-column COLUMN [--groups A,B] [--covariates age,sex] [flags]", stdout, stderr)
	fs.StringVar(&opt.GroupColumn, "group-column", "", "participants.tsv `COLUMN` holding the groups (e.g. diagnosis)")
	groups := fs.String("groups", "", "the two values `A,B` of the group column to compare (t > 0: A above B); default: its two values")
	covs := fs.String("covariates", "", "comma-separated `COLUMNS` regressed out first (numeric, or categorical as indicators)")
	fs.IntVar(&opt.Permutations, "permutations", 1000, "`N` label permutations for permutation p-values (0: none)")
	fs.Uint64Var(&opt.Seed, "seed", 1, "seed `N` of the permutations")
	fs.Float64Var(&opt.Alpha, "alpha", 0.05, "false discovery rate `Q` for the nodes listed in compare_nodes.tsv")
	mapsFlag := fs.String("maps", "degree", "nodal `MAPS` to compare, comma-separated (degree, strength, clustering, hub_z, …)")
	fs.StringVar(&opt.Out, "out", "", "output folder `DIR` (default DERIV/compare)")
	fs.StringVar(&opt.Atlas, "atlas", "", "label image `FILE`: also the network-based statistic (Zalesky 2010) on the runs' region networks (nbs.tsv)")
	fs.StringVar(&opt.AtlasNames, "atlas-names", "", "region names `FILE` for --atlas, one \"index name\" per line")
	fs.Float64Var(&opt.NBSThreshold, "nbs-t", 3, "network-based statistic: primary threshold `T` on |t|")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || opt.GroupColumn == "" {
		fmt.Fprintln(stderr, "compare: give one derivatives folder and --group-column COLUMN")
		fs.Usage()
		return errUsage
	}
	opt.Deriv = pos[0]
	opt.Groups, opt.Covariates, opt.Maps = commaList(*groups), commaList(*covs), commaList(*mapsFlag)
	res, err := cohort.Compare(ctx, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "groups      %s: %s (%d runs) vs %s (%d runs); Welch t, %d permutations, FDR (Benjamini–Hochberg) %g\n",
		opt.GroupColumn, res.Groups[0], res.N[0], res.Groups[1], res.N[1], opt.Permutations, opt.Alpha)
	for _, n := range res.Notes {
		fmt.Fprintf(stdout, "            %s\n", n)
	}
	for _, g := range res.Global {
		if g.Q <= opt.Alpha {
			fmt.Fprintf(stdout, "global      %s: %.4g vs %.4g, t %.2f, p %.2g, q %.2g\n", g.Measure, g.MeanA, g.MeanB, g.T, g.P, g.Q)
		}
	}
	for _, n := range res.Nodal {
		fmt.Fprintf(stdout, "nodes       %s: %d of %d nodes differ at FDR %g (t/p/q maps in %s)\n", n.Map, n.Significant, n.Nodes, opt.Alpha, res.Out)
	}
	for c, comp := range res.NBS {
		if c < 5 {
			fmt.Fprintf(stdout, "NBS         component %d: %d edges among %d regions, p (FWE) %.3g\n", c+1, len(comp.Edges), len(comp.Regions), comp.P)
		}
	}
	return nil
}

func cmdNorm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const normUsage = "usage: hubscope-helper norm build DERIV --out NORM [--group-column diagnosis --group control]\n\nthen: hubscope-helper run PATIENT --norm NORM (with the cohort's settings)\nRun \"hubscope-helper norm build -h\" for its flags."
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stdout, normUsage)
		return nil
	}
	if len(args) == 0 || args[0] != "build" {
		fmt.Fprintln(stderr, normUsage)
		return errUsage
	}
	var opt cohort.NormOptions
	fs := newFlags("norm build", "norm build DERIV --out NORM [--group-column C --group VALUE] [--maps degree,strength]", stdout, stderr)
	fs.StringVar(&opt.Out, "out", "", "normative folder `NORM` to write")
	fs.StringVar(&opt.GroupColumn, "group-column", "diagnosis", "with --group: the participants.tsv `COLUMN` selecting the normative runs")
	fs.StringVar(&opt.Group, "group", "", "only runs whose participant has this `VALUE` in --group-column (e.g. control)")
	mapsFlag := fs.String("maps", "", "nodal `MAPS` to model (default degree, strength and clustering where present)")
	pos, err := parse(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 || opt.Out == "" {
		fmt.Fprintln(stderr, "norm build: give one derivatives folder and --out NORM")
		fs.Usage()
		return errUsage
	}
	opt.Deriv = pos[0]
	opt.Maps = commaList(*mapsFlag)
	info, err := cohort.BuildNorm(opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "norm        %s: %d runs, %d nodes on a %d×%d×%d grid, maps %s, %d cohort hubs (%s)\n",
		opt.Out, len(info.Subjects), info.Nodes, info.Dims[0], info.Dims[1], info.Dims[2], strings.Join(info.Maps, ", "), info.Hubs, info.HubRule)
	return nil
}

// commaList splits a comma-separated flag value into its non-empty, trimmed items (nil for "").
func commaList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
