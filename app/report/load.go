package report

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// maxReportFile bounds what is read of one bundle file for the report (metrics.json,
// provenance.json, qc/denoise.json, norm.json are kilobytes; a larger one is not the helper's).
const maxReportFile = 16 << 20

// FromService gathers what the report says about a finished job, from the helper: its
// metrics, the cleaning and motion assessment (qc/denoise.json), the comparison with a
// normative cohort (norm.json) and the command line that repeats it (provenance.json). The
// figures are the caller's: the app's views as shown, or BundleFigures.
func FromService(ctx context.Context, svc ipc.Service, s ipc.Summary) (Report, error) {
	r := Report{Summary: s}
	m, err := ParseMetrics(s.Metrics)
	if err != nil {
		return r, fmt.Errorf("report for %s: %w", s.Job.Name, err)
	}
	r.Metrics = m
	if b, err := readListed(ctx, svc, s, "provenance.json"); err != nil {
		return r, err
	} else if b != nil {
		in, err := ParseInvocation(b)
		switch {
		case errors.Is(err, ErrNotARun):
			// A group or cohort bundle: the report has no run command to print.
		case err != nil:
			return r, fmt.Errorf("report for %s: %w", s.Job.Name, err)
		default:
			if s.Bundle != "" {
				// Where the bundle is now (a helper writes it under a temporary name first).
				in.Out = s.Bundle
			}
			r.Command, r.Mask = in.Command(), in.Mask
		}
	}
	if b, err := readListed(ctx, svc, s, QCFile); err != nil {
		return r, err
	} else if b != nil {
		if r.QC, err = Assess(b, m.Scan.TR); err != nil {
			return r, fmt.Errorf("report for %s: %w", s.Job.Name, err)
		}
	}
	names := make([]string, len(s.Files))
	for i, f := range s.Files {
		names[i] = f.Name
	}
	if b, err := readListed(ctx, svc, s, schema.NormFileIn(names)); err != nil {
		return r, err
	} else if b != nil {
		if r.Norm, err = ParseNorm(b); err != nil {
			return r, fmt.Errorf("report for %s: %w", s.Job.Name, err)
		}
	}
	return r, nil
}

// readListed reads one bundle file the summary lists (nil, nil when it does not list it).
func readListed(ctx context.Context, svc ipc.Service, s ipc.Summary, name string) ([]byte, error) {
	listed := false
	for _, f := range s.Files {
		listed = listed || f.Name == name
	}
	if !listed {
		return nil, nil
	}
	rc, _, err := svc.OpenFile(ctx, s.Job.ID, name)
	if err != nil {
		return nil, fmt.Errorf("report for %s: %s: %w", s.Job.Name, name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxReportFile+1))
	if err != nil {
		return nil, fmt.Errorf("report for %s: %s: %w", s.Job.Name, name, err)
	}
	if len(b) > maxReportFile {
		return nil, fmt.Errorf("report for %s: %s is larger than %d MiB", s.Job.Name, name, maxReportFile>>20)
	}
	return b, nil
}
