package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hubscope/hubscope/helper/cohort"
)

// slurmCLI holds cohort's Slurm flags.
type slurmCLI struct {
	slurm, dryRun, status *bool
	opt                   cohort.SlurmOptions
	sbatchArgs            multiFlag
}

// multiFlag collects a repeatable flag's values.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// slurmOnly are cohort's flags that are not analysis settings: they are not passed on to the
// array tasks and the group step.
var slurmOnly = map[string]bool{"out": true, "task": true, "subject": true, "table-only": true, "jobs": true,
	"slurm": true, "dry-run": true, "status": true, "partition": true, "account": true, "mem": true, "time": true,
	"gpus-per-task": true, "cpus-per-task": true, "array-max": true, "subjects-per-task": true, "sbatch-arg": true, "norm-out": true, "norm-group": true}

func slurmFlags(fs *flagSet) *slurmCLI {
	s := &slurmCLI{}
	s.slurm = fs.Bool("slurm", false, "submit the cohort to Slurm: one job-array task per subject (or --subjects-per-task), then the group step with --dependency=afterok; re-running submits only subjects neither complete nor queued")
	s.dryRun = fs.Bool("dry-run", false, "with --slurm: print the job-array and group-step scripts and submit nothing")
	s.status = fs.Bool("status", false, "cohort DERIV --status: each subject's state in the Slurm submissions (done, running, pending, failed with the reason and log)")
	fs.StringVar(&s.opt.Partition, "partition", "", "with --slurm: Slurm `PARTITION`")
	fs.StringVar(&s.opt.Account, "account", "", "with --slurm: Slurm `ACCOUNT` charged")
	fs.StringVar(&s.opt.Mem, "mem", "", "with --slurm: memory per task `SIZE` as sbatch takes it, e.g. 4G")
	fs.StringVar(&s.opt.Time, "time", "", "with --slurm: time limit per task `TIME` as sbatch takes it, e.g. 1:00:00")
	fs.IntVar(&s.opt.GPUsPerTask, "gpus-per-task", 0, "with --slurm: `N` GPUs per task (--gres=gpu:N); a task given none runs on the CPU and says so in its log")
	fs.IntVar(&s.opt.CPUsPerTask, "cpus-per-task", 0, "with --slurm: `N` CPU cores per task")
	fs.IntVar(&s.opt.ArrayMax, "array-max", 0, "with --slurm: at most `K` tasks running at once (default: Slurm's limit)")
	fs.IntVar(&s.opt.PerTask, "subjects-per-task", 1, "with --slurm: `N` subjects analysed one after the other by each array task")
	fs.StringVar(&s.opt.NormOut, "norm-out", "", "with --slurm: the group step also builds a normative folder `NORM` from the cohort (as norm build)")
	fs.StringVar(&s.opt.NormGroup, "norm-group", "", "with --norm-out: only runs whose participants.tsv diagnosis is `GROUP` (e.g. control)")
	fs.Var(&s.sbatchArgs, "sbatch-arg", "with --slurm: one more sbatch `OPTION` for the array, e.g. --qos=long (repeatable)")
	return s
}

// cohortSlurm plans (and unless --dry-run submits) the cohort as a Slurm job array and group step.
func cohortSlurm(opt cohort.Options, fs *flagSet, sl *slurmCLI, stdout io.Writer) error {
	so := sl.opt
	so.SbatchArgs, so.DryRun = sl.sbatchArgs, *sl.dryRun
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return err
	}
	so.Helper = exe
	if so.WorkDir, err = os.Getwd(); err != nil {
		return err
	}
	// The analysis flags as given, in name order, as --name=value: every task and the group
	// step run with exactly these settings (the bundles' markers record them).
	var names []string
	fs.Visit(func(f *flag.Flag) {
		if !slurmOnly[f.Name] {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	for _, n := range names {
		so.Args = append(so.Args, "--"+n+"="+fs.Lookup(n).Value.String())
	}
	if !so.DryRun { // one submission into a folder at a time: plan and submit under the lock
		unlock, err := cohort.LockSlurm(opt.Out)
		if err != nil {
			return err
		}
		defer unlock()
	}
	p, err := cohort.PlanSlurm(opt, so)
	if err != nil {
		return err
	}
	if so.DryRun {
		if p.ArrayScript != "" {
			fmt.Fprintf(stdout, "# %s\n%s\n", filepath.Join(p.Dir, "array.sh"), p.ArrayScript)
		}
		fmt.Fprintf(stdout, "# %s\n%s\n", filepath.Join(p.Dir, "group.sh"), p.GroupScript)
		fmt.Fprintf(stdout, "# dry run: %d subjects, %d complete, %d queued or running, %d to submit in %d array tasks; nothing submitted\n",
			len(p.Subjects), len(p.Complete), len(p.Active), len(p.Submit), len(p.Tasks))
		return nil
	}
	res, err := cohort.SubmitSlurm(opt, p)
	if err != nil {
		return err
	}
	for _, s := range p.Submit {
		fmt.Fprintf(stdout, "submit      sub-%s (%s)\n", s, p.Reasons[s])
	}
	for _, g := range res.Cancelled {
		fmt.Fprintf(stdout, "cancelled   earlier group step %s (replaced)\n", g)
	}
	if res.ArrayJob != "" {
		fmt.Fprintf(stdout, "array       job %s: %d subjects in %d tasks (%s)\n", res.ArrayJob, len(p.Submit), len(p.Tasks), filepath.Join(p.Dir, "array.sh"))
	}
	fmt.Fprintf(stdout, "group       job %s after the array (%s)\n", res.GroupJob, filepath.Join(p.Dir, "group.sh"))
	fmt.Fprintf(stdout, "slurm       %d subjects: %d complete, %d still queued or running, %d submitted; follow with: hubscope-helper cohort %s --status\n",
		len(p.Subjects), len(p.Complete), len(p.Active), len(p.Submit), opt.Out)
	return nil
}

// cohortStatus prints each subject's state and the totals.
func cohortStatus(deriv string, stdout io.Writer) error {
	rep, err := cohort.SlurmStatus(deriv)
	if err != nil {
		return err
	}
	for _, s := range rep.Subjects {
		line := fmt.Sprintf("%-8s %s", s.State, s.Subject)
		if s.Task != "" {
			line += " (task " + s.Task + ")"
		}
		if s.Reason != "" {
			line += ": " + s.Reason
		}
		if s.State == "failed" && s.Log != "" {
			line += " [" + s.Log + "]"
		}
		fmt.Fprintln(stdout, line)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(stdout, "note     %s\n", n)
	}
	if rep.Group != "" {
		fmt.Fprintf(stdout, "group    job %s\n", rep.Group)
	}
	c, n := rep.Counts, len(rep.Subjects)
	pct := 0.0
	if n > 0 {
		pct = 100 * float64(c["done"]) / float64(n)
	}
	fmt.Fprintf(stdout, "status   %d subjects: %d done (%.0f%%), %d running, %d pending, %d failed, %d not submitted\n",
		n, c["done"], pct, c["running"], c["pending"], c["failed"], c["missing"])
	return nil
}
