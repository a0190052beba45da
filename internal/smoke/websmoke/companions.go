package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/hubscope/hubscope/ipc/schema"
)

// checkCompanions checks that the job named name ran with the mask and the confounds table
// uploaded beside its scan: its metrics name a mask file as the mask's rule, its settings name
// the table in the job's input folder, and its cleaning report says the table was used.
func (s *smoke) checkCompanions(ctx context.Context, name string, mask, confounds bool) error {
	jobs, err := s.client.Jobs(ctx)
	if err != nil {
		return err
	}
	read := func(id, file string) (string, error) {
		rc, _, err := s.client.OpenFile(ctx, id, file)
		if err != nil {
			return "", fmt.Errorf("job %s: %s: %w", id, file, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		return string(b), err
	}
	for _, j := range jobs {
		if j.Name != name {
			continue
		}
		if mask {
			m, err := read(j.ID, "metrics.json")
			if err != nil {
				return err
			}
			var metrics schema.Metrics
			if err := json.Unmarshal([]byte(m), &metrics); err != nil {
				return fmt.Errorf("job %s: metrics.json: %w", j.ID, err)
			}
			if metrics.Scan.MaskRule != "mask file" {
				return fmt.Errorf("job %s did not use the uploaded mask: metrics.json's mask rule is %q", j.ID, metrics.Scan.MaskRule)
			}
			s.logf("job %s ran with the uploaded mask", j.ID)
		}
		if confounds {
			if filepath.Base(j.Settings.Confounds) != "confounds.tsv" || filepath.Base(filepath.Dir(j.Settings.Confounds)) != "input" {
				return fmt.Errorf("job %s ran with confounds %q, want the uploaded table (input/confounds.tsv)", j.ID, j.Settings.Confounds)
			}
			b, err := read(j.ID, "qc/denoise.json")
			if err != nil {
				return err
			}
			if !strings.Contains(b, "confounds") {
				return fmt.Errorf("job %s: the cleaning report does not mention the confounds table:\n%.400s", j.ID, b)
			}
			s.logf("job %s ran with the uploaded confounds table", j.ID)
		}
		return nil
	}
	return fmt.Errorf("no job named %s", name)
}

// checkLimits checks that the page says what the browser app cannot do.
func (s *smoke) checkLimits(page context.Context) error {
	text, err := chromedp.Run(page, chromedp.Evaluate[string](`(document.getElementById("`+browserLimits+`") || {}).textContent || ""`))
	if err != nil {
		return err
	}
	if !strings.Contains(text, "cannot") {
		return fmt.Errorf("the page has no line saying what the browser app cannot do (#%s: %q)", browserLimits, text)
	}
	return nil
}
