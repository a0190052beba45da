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

// NewFisherZBackend makes the backend of the mean Fisher z for s subjects. Its contract is
// fc.Backend's with one addition: Prepare receives the subjects' series concatenated along
// time (N × S·L) and every pair value is tanh((1/S) Σ_s atanh r_s). The CPU engine (FisherZ)
// is the default; a device engine with the same blocking (row panel outer, subjects inner,
// one product per subject per panel) can be put here.
var NewFisherZBackend = func(s int) fc.Backend { return NewFisherZ(s) }

// FisherZEngine is a backend with a device engine for the mean Fisher z (the CUDA backend:
// subjects resident on the device, their atanh r summed inside each tile). Network uses it
// instead of NewFisherZBackend when the run's backend offers one.
type FisherZEngine interface {
	// GroupFisherZ opens the engine for s subjects on the backend's device.
	GroupFisherZ(s int) (fc.Backend, error)
}

// Network builds the group-mean network of c with fc.Build's threshold cfg (cfg.Measure is
// each subject's measure: Pearson or Spearman). The mean of r is one Pearson build over the
// concatenated normalised series on plain (any backend, the CUDA one included; nil: the CPU
// backend) and consumes c.X (normalised in place); the mean Fisher z runs on
// NewFisherZBackend, or on plain's device engine when plain is a FisherZEngine (if that
// engine cannot be opened, a note says why and the CPU engine runs).
func Network(ctx context.Context, c *Cohort, mean string, cfg fc.Config, plain fc.Backend, rep progress.Reporter) (*network.Network, *fc.Report, error) {
	if cfg.Mode == fc.Significance {
		return nil, nil, fmt.Errorf("group: significance thresholds test one subject's r with L−2 degrees of freedom; a group mean has no such test: use --r, --density or --knn")
	}
	n, S, L := c.Scan.N, c.S, c.L
	switch mean {
	case MeanFisherZ, "":
		var be fc.Backend
		if eng, ok := plain.(FisherZEngine); ok {
			var err error
			if be, err = eng.GroupFisherZ(S); err != nil {
				progress.OrDiscard(rep).Note(fmt.Sprintf("group mean Fisher z on the CPU (%v)", err))
				be = nil
			}
		}
		if be == nil {
			be = NewFisherZBackend(S)
		}
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
		be := plain
		if be == nil {
			cb := cpu.New(cpu.Options{})
			defer cb.Close()
			be = cb
		}
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
