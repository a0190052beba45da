package group

import (
	"context"
	"fmt"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/progress"
)

// Means over subjects.
const (
	MeanFisherZ = "fisher-z" // tanh of the mean atanh r (default)
	MeanR       = "r"        // the plain mean of r (Wang et al. 2009)
)

// Network builds the group-mean network of c with fc.Build's threshold cfg (cfg.Measure is
// each subject's measure: Pearson or Spearman). The mean of r consumes c.X (normalised in
// place). The returned backend name and device are for provenance.
func Network(ctx context.Context, c *Cohort, mean string, cfg fc.Config, rep progress.Reporter) (*network.Network, *fc.Report, error) {
	if cfg.Mode == fc.Significance {
		return nil, nil, fmt.Errorf("group: significance thresholds test one subject's r with L−2 degrees of freedom; a group mean has no such test: use --r, --density or --knn")
	}
	n, S, L := c.Scan.N, c.S, c.L
	switch mean {
	case MeanFisherZ, "":
		be := NewFisherZ(S)
		defer be.Close()
		nw, rpt, err := fc.Build(ctx, be, c.X, n, S*L, cfg, rep)
		if rpt != nil {
			rpt.L, rpt.Measure = L, cfg.Measure
		}
		return nw, rpt, err
	case MeanR:
		if err := Concatenate(c.X, n, S, L, cfg.Measure); err != nil {
			return nil, nil, err
		}
		be := cpu.New(cpu.Options{})
		defer be.Close()
		m := cfg.Measure
		cfg.Measure = fc.Pearson // ranks, if any, were taken per subject
		nw, rpt, err := fc.Build(ctx, be, c.X, n, S*L, cfg, rep)
		if rpt != nil {
			rpt.L, rpt.Measure = L, m
		}
		return nw, rpt, err
	}
	return nil, nil, fmt.Errorf("group: unknown mean %q (want fisher-z or r)", mean)
}
