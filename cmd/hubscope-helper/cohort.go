package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/hubscope/hubscope/helper/cohort"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/progress"
)

// analysisFlags registers the per-run analysis flags of cohort and norm on fs; the returned
// function applies the threshold choice after parsing.
func analysisFlags(fs *flag.FlagSet, cfg *pipeline.Config, cmd string, stderr io.Writer) func() error {
	fs.StringVar(&cfg.Backend, "backend", cfg.Backend, "auto, cuda or cpu")
	fs.StringVar(&cfg.Measure, "measure", cfg.Measure, "pearson, spearman or kendall")
	fs.BoolVar(&cfg.Abs, "abs", false, "use |r| as the connection value")
	density := fs.Float64("density", 0, "keep exactly this fraction of all pairs, the strongest (default 0.01)")
	r := fs.Float64("r", 0, "keep pairs with r > T")
	knn := fs.Int("knn", 0, "keep each node's K strongest links (union)")
	fs.StringVar(&cfg.Sweep, "sweep", "", "threshold sweep: r=LO:HI:STEP, density=LO:HI:STEP or a list")
	fs.StringVar(&cfg.Metrics, "metrics", cfg.Metrics, "none, basic or full")
	fs.IntVar(&cfg.Random, "random", cfg.Random, "degree-preserving random networks (full metrics)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed for random networks and module search")
	fs.Float64Var(&cfg.HubSD, "hub-sd", cfg.HubSD, "hubs: degree > mean + this many SD")
	fs.StringVar(&cfg.Mask, "mask", "", "brain mask for every run (default: each run's automatic EPI mask)")
	fs.StringVar(&cfg.Atlas, "atlas", "", "label image naming the hubs' regions")
	return func() error {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		modes := 0
		for _, name := range []string{"density", "r", "knn", "sweep"} {
			if set[name] {
				modes++
			}
		}
		if modes > 1 {
			fmt.Fprintf(stderr, "%s: give at most one of --density, --r, --knn, --sweep\n", cmd)
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
		return nil
	}
}

func cmdCohort(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opt := cohort.Options{Config: pipeline.Defaults()}
	fs := newFlags("cohort", "cohort BIDS_DIR --out DERIV [flags]", stderr)
	fs.StringVar(&opt.Out, "out", "", "derivatives folder (BIDS derivatives dataset; re-running resumes)")
	fs.StringVar(&opt.Task, "task", "", "only runs of this task")
	fs.StringVar(&opt.Subject, "subject", "", "only this subject's runs, without the table (the per-subject step, e.g. one array task)")
	tableOnly := fs.Bool("table-only", false, "only the group step: the subjects × measures table from the finished bundles")
	fs.IntVar(&opt.Jobs, "jobs", 0, "runs analysed at once (default: half the CPU cores)")
	apply := analysisFlags(fs, &opt.Config, "cohort", stderr)
	pos, err := parse(fs, args)
	if err != nil {
		return err
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
	opt.BIDS = pos[0]
	check := opt.Config
	check.Scan, check.Out = "check", "check"
	if err := check.Validate(); err != nil {
		return err
	}
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
		if err := cohort.Failed(st); err != nil {
			return err
		}
		if opt.Subject != "" {
			return nil
		}
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
	return nil
}
