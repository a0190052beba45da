package pipeline

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/hubscope/hubscope/helper/group"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/schema"
)

// GroupConfig asks for the group-mean network of several subjects on one grid (Wang et al.
// 2009 averaged 197 subjects' correlation matrices, then thresholded): the mean over subjects
// of Fisher z (default) or of r, then the threshold (any mode but significance, sweeps
// included), then the metrics, as for one scan.
type GroupConfig struct {
	Subjects []group.Subject `json:"subjects"`
	Mean     string          `json:"mean"`      // fisher-z | r
	MaskRule string          `json:"mask_rule"` // intersect | union | mask (Config.Mask)
	// Truncate lets subjects of different lengths in, each cut to the shortest's length
	// (--truncate); without it they are refused, named with their lengths.
	Truncate bool `json:"truncate,omitempty"`
}

func (c *Config) checkGroup() error {
	g := c.Group
	if len(g.Subjects) < 2 {
		return fmt.Errorf("group: %d subject(s): a group network needs at least 2", len(g.Subjects))
	}
	switch g.Mean {
	case group.MeanFisherZ, group.MeanR:
	default:
		return fmt.Errorf("group: unknown mean %q (want fisher-z or r)", g.Mean)
	}
	switch g.MaskRule {
	case group.MaskIntersect, group.MaskUnion:
		if c.Mask != "" {
			return fmt.Errorf("group: --mask FILE is the mask rule \"mask\", not %q", g.MaskRule)
		}
	case group.MaskFile:
		if c.Mask == "" {
			return fmt.Errorf("group: mask rule \"mask\" needs a mask file")
		}
	default:
		return fmt.Errorf("group: unknown mask rule %q (want intersect, union or mask FILE)", g.MaskRule)
	}
	switch {
	case c.Measure == "kendall":
		return fmt.Errorf("group: the mean over subjects is for pearson or spearman, not kendall")
	case c.Mode == "alpha" && c.Sweep == "":
		return fmt.Errorf("group: a group mean has no significance test; use --r, --density or --knn")
	case c.DFCWindow > 0:
		return fmt.Errorf("group: dynamic connectivity (--window) is for one scan")
	case c.KeepSeries:
		return fmt.Errorf("group: --keep-series is for one scan")
	}
	return nil
}

// loadGroup reads the subjects, each cleaned as a single run would be (Config.clean), and
// says the cleaning in the cohort's notes.
func loadGroup(ctx context.Context, cfg Config, rep progress.Reporter) (*group.Cohort, error) {
	var mu sync.Mutex
	strategies := map[string]bool{}
	opt := group.Options{MaskRule: cfg.Group.MaskRule, MaskPath: cfg.Mask, Truncate: cfg.Group.Truncate}
	if cl := cfg.clean(); cl.active() {
		opt.Clean = func(sub group.Subject, s *scan.Scan) error {
			crep, err := clean(cl, sub.Path, s)
			if err != nil {
				return err
			}
			if crep != nil {
				mu.Lock()
				strategies[fmt.Sprintf("%s (%d of %d volumes kept)", crep.Strategy, crep.VolumesKept, crep.VolumesIn)] = true
				mu.Unlock()
			}
			return nil
		}
	}
	c, err := group.Load(ctx, cfg.Group.Subjects, opt, rep)
	if err != nil {
		return nil, err
	}
	var notes []string
	for st := range strategies {
		notes = append(notes, "cleaning in every subject: "+st)
	}
	sort.Strings(notes)
	c.Notes = append(c.Notes, notes...)
	return c, nil
}

// groupInfo is group.json.
func groupInfo(cfg Config, c *group.Cohort) schema.Group {
	g := schema.Group{Mean: cfg.Group.Mean, MaskRule: cfg.Group.MaskRule, Nodes: c.Scan.N, Volumes: c.L, MaskNotes: c.Notes}
	for _, s := range c.Subjects {
		js := schema.GroupSubject{Label: s.Label, Path: s.Path}
		for _, d := range c.Inputs {
			if d.Path == s.Path {
				js.Bytes, js.SHA256 = d.Bytes, d.SHA256
			}
		}
		g.Subjects = append(g.Subjects, js)
	}
	return g
}
