package cohort

// The cohort's group-mean network (Wang et al. 2009's workflow in one command, as `group`
// builds it: docs/algorithms.md, "Group-mean networks"): after the subjects' bundles, the mean
// over the runs of each task whose bundles are complete of Fisher z (or r), thresholded and
// measured with the cohort's own settings, written by the pipeline's group run as a results
// bundle in DERIV/group/ with a BIDS sidecar beside it, and resumable as the runs' bundles are:
// a completion marker records the runs averaged (their scans' SHA-256, from the runs' own
// markers) and the settings, and a rerun with the same runs and settings skips it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/group"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/ipc/schema"
)

// GroupDir is the derivatives folder's group-level folder.
const GroupDir = "group"

// GroupMeanNone turns the group-mean network off (cohort --group-mean none).
const GroupMeanNone = "none"

// GroupStatus is the group-mean network of one task.
type GroupStatus struct {
	Task   string
	Bundle string
	State  string   // "done", "skipped" (complete, same runs and settings), "not built", "failed"
	Reason string   // why it was built again, or why it was not built
	Runs   []string // the runs averaged (their IDs)
	Left   []string // runs left out: "ID (why)"
	Notes  []string // the group run's notes (mask rule, cleaning)
	Err    error
}

// GroupStem is the BIDS stem of a task's group-mean bundle and its sidecar:
// task-<label>_desc-groupmean (desc-groupmean alone for runs without a task entity).
func GroupStem(task string) string {
	if task == "" {
		return "desc-groupmean"
	}
	return "task-" + task + "_desc-groupmean"
}

// GroupBundleDir is a task's group-mean bundle, DERIV/group/<stem>_hubscope.
func GroupBundleDir(out, task string) string {
	return filepath.Join(out, GroupDir, GroupStem(task)+"_hubscope")
}

// groupConfig is the pipeline configuration of the group-mean network over subs: the cohort's
// settings, the mean, and the mask rule "mask" with the cohort's --mask (else intersect).
func groupConfig(opt Options, subs []group.Subject, dir string) pipeline.Config {
	cfg := opt.Config
	cfg.Scan, cfg.Out, cfg.Overwrite = "", dir, true
	cfg.BIDSNames, cfg.Norm = false, "" // single-scan outputs: the sidecar beside the bundle names the group
	mean := opt.GroupMean
	if mean == "" {
		mean = group.MeanFisherZ
	}
	rule := group.MaskIntersect
	if cfg.Mask != "" {
		rule = group.MaskFile
	}
	cfg.Group = &pipeline.GroupConfig{Subjects: subs, Mean: mean, MaskRule: rule}
	return cfg
}

// groupSettings are the settings that decide a group bundle's content: the cohort's, the mean
// and the mask rule (the subjects are compared apart, by their scans' SHA-256).
func groupSettings(cfg pipeline.Config) map[string]any {
	g := *cfg.Group
	g.Subjects = nil
	cfg.Group = &g
	return Settings(cfg)
}

// GroupMeans builds every task's group-mean network over the runs whose bundles are complete
// (the others are left out and named), skipping one that is complete and was made from the
// same runs with the same settings. A task with fewer than two complete runs, or settings a
// group mean cannot take (Kendall's τ, a significance threshold), is "not built", with why.
func GroupMeans(ctx context.Context, opt Options, rep progress.Reporter) ([]GroupStatus, error) {
	if opt.GroupMean == GroupMeanNone {
		return nil, nil
	}
	opt.Subject = ""
	runs, err := Runs(opt)
	if err != nil {
		return nil, err
	}
	byTask := map[string][]derivatives.Run{}
	var tasks []string
	for _, r := range runs {
		if _, ok := byTask[r.Task]; !ok {
			tasks = append(tasks, r.Task)
		}
		byTask[r.Task] = append(byTask[r.Task], r)
	}
	sort.Strings(tasks)
	var out []GroupStatus
	for _, task := range tasks {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		out = append(out, groupMean(ctx, opt, task, byTask[task], rep))
	}
	return out, ctx.Err()
}

func groupMean(ctx context.Context, opt Options, task string, runs []derivatives.Run, rep progress.Reporter) GroupStatus {
	gs := GroupStatus{Task: task, Bundle: GroupBundleDir(opt.Out, task)}
	var subs []group.Subject
	var who []schema.GroupSubject
	var sources []string
	for _, r := range runs {
		if why, ok := VerifyBundle(opt.Out, r); !ok {
			gs.Left = append(gs.Left, r.ID()+" ("+why+")")
			continue
		}
		var m Marker
		b, err := os.ReadFile(filepath.Join(BundleDir(opt.Out, r), MarkerFile))
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			gs.Left = append(gs.Left, r.ID()+" (completion marker unreadable)")
			continue
		}
		subs = append(subs, group.Subject{Label: r.ID(), Path: r.Path})
		who = append(who, schema.GroupSubject{Label: r.ID(), Path: r.Path, Bytes: m.Input.Bytes, SHA256: m.Input.SHA256})
		sources = append(sources, "bids::"+filepath.ToSlash(filepath.Join(r.Dir(), filepath.Base(r.Path))))
		gs.Runs = append(gs.Runs, r.ID())
	}
	if len(subs) < 2 {
		gs.State, gs.Reason = "not built", fmt.Sprintf("%d complete run(s) of task %s; a group mean needs at least 2", len(subs), task)
		return gs
	}
	cfg := groupConfig(opt, subs, gs.Bundle)
	if err := cfg.Validate(); err != nil {
		gs.State, gs.Reason = "not built", err.Error()
		return gs
	}
	settings := groupSettings(cfg)
	groupRoot := filepath.Join(opt.Out, GroupDir)
	reason, ok := checkGroupMarker(groupRoot, gs.Bundle, who, settings)
	if ok {
		gs.State = "skipped"
		return gs
	}
	gs.Reason = reason
	fail := func(err error) GroupStatus {
		gs.State, gs.Err = "failed", err
		return gs
	}
	if err := os.MkdirAll(groupRoot, 0o755); err != nil {
		return fail(err)
	}
	side := filepath.Join(groupRoot, GroupStem(task)+"_hubscope.json")
	os.Remove(filepath.Join(gs.Bundle, MarkerFile))
	os.Remove(side)
	res, err := pipeline.Run(ctx, cfg, rep)
	if err != nil {
		return fail(err)
	}
	gs.Notes = res.Notes
	sj, _ := json.MarshalIndent(schema.CohortGroupSidecar{
		Description: fmt.Sprintf("HubScope group-mean network of %d runs of task %s: the mean over the runs of %s, thresholded and measured as one scan (results bundle %s/)",
			len(subs), task, map[string]string{group.MeanFisherZ: "Fisher z (tanh of the mean atanh r)", group.MeanR: "r"}[cfg.Group.Mean], filepath.Base(gs.Bundle)),
		Bundle:   filepath.Base(gs.Bundle),
		Mean:     cfg.Group.Mean,
		MaskRule: cfg.Group.MaskRule,
		Settings: settings,
		Sources:  sources,
	}, "", "  ")
	if err := os.WriteFile(side, append(sj, '\n'), 0o644); err != nil {
		return fail(err)
	}
	m := Marker{Software: schema.AppName, Version: schema.Version, Input: schema.Input{Path: who[0].Path, Bytes: who[0].Bytes, SHA256: who[0].SHA256},
		Settings: settings, Subjects: who, Files: map[string]Digest{}}
	files := []string{side}
	filepath.Walk(gs.Bundle, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err := writeMarker(&m, gs.Bundle, groupRoot, files); err != nil {
		return fail(err)
	}
	gs.State = "done"
	return gs
}

// checkGroupMarker says whether the group bundle is complete and was made from the runs who
// (labels and scans' SHA-256; their order does not change a mean) with settings; if not, why.
func checkGroupMarker(groupRoot, dir string, who []schema.GroupSubject, settings map[string]any) (string, bool) {
	b, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil {
		if _, e := os.Stat(dir); e == nil {
			return "bundle incomplete: no completion marker", false
		}
		return "", false
	}
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil {
		return "completion marker unreadable", false
	}
	if d := subjectsDiff(m.Subjects, who); d != "" {
		return d, false
	}
	if d := Diff(m.Settings, settings); len(d) > 0 {
		return "settings changed: " + strings.Join(d, "; "), false
	}
	return checkFiles(groupRoot, m)
}

// subjectsDiff names how the runs averaged differ from those recorded ("" when the same).
func subjectsDiff(was, now []schema.GroupSubject) string {
	old := map[string]schema.GroupSubject{}
	for _, s := range was {
		old[s.Label] = s
	}
	var added, changed []string
	for _, s := range now {
		o, ok := old[s.Label]
		switch {
		case !ok:
			added = append(added, s.Label)
		case o.SHA256 != s.SHA256 || o.Bytes != s.Bytes:
			changed = append(changed, s.Label)
		}
		delete(old, s.Label)
	}
	var gone []string
	for l := range old {
		gone = append(gone, l)
	}
	sort.Strings(gone)
	var d []string
	if len(added) > 0 {
		d = append(d, "runs added: "+strings.Join(added, ", "))
	}
	if len(gone) > 0 {
		d = append(d, "runs left out: "+strings.Join(gone, ", "))
	}
	if len(changed) > 0 {
		d = append(d, "scans changed: "+strings.Join(changed, ", "))
	}
	return strings.Join(d, "; ")
}

// GroupFailed returns an error naming the group-mean networks that failed, or nil.
func GroupFailed(gs []GroupStatus) error {
	var bad []string
	for _, g := range gs {
		if g.State == "failed" {
			bad = append(bad, fmt.Sprintf("task %s (%v)", g.Task, g.Err))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return errors.New("group-mean network failed: " + strings.Join(bad, "; "))
}
