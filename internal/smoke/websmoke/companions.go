package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/chromedp/chromedp"
)

// checkConfounds checks that the job named name ran with the confounds table uploaded beside
// its scan: its settings name the table in the job's input folder, and its cleaning report
// says the table's columns were regressed.
func (s *smoke) checkConfounds(ctx context.Context, name string) error {
	jobs, err := s.client.Jobs(ctx)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Name != name {
			continue
		}
		if filepath.Base(j.Settings.Confounds) != "confounds.tsv" || filepath.Base(filepath.Dir(j.Settings.Confounds)) != "input" {
			return fmt.Errorf("job %s ran with confounds %q, want the uploaded table (input/confounds.tsv)", j.ID, j.Settings.Confounds)
		}
		rc, _, err := s.client.OpenFile(ctx, j.ID, "qc/denoise.json")
		if err != nil {
			return fmt.Errorf("job %s: its cleaning report: %w", j.ID, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), "confounds") {
			return fmt.Errorf("job %s: the cleaning report does not mention the confounds table:\n%.400s", j.ID, b)
		}
		s.logf("job %s ran with the uploaded confounds table", j.ID)
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
