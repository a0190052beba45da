package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hubscope/hubscope/app/report"
	"github.com/hubscope/hubscope/helper/daemon"
	"github.com/hubscope/hubscope/helper/scratch"
	"github.com/hubscope/hubscope/ipc"
)

// cmdReport writes the clinician's report of a finished results bundle: a PDF of one to three
// pages and/or the HTML page, the same reading of the bundle as the app's "Save report"
// (app/report, which has no Fyne import), with figures rendered from the bundle's maps.
func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "report BUNDLE [--pdf FILE] [--html FILE]", stdout, stderr)
	pdfOut := fs.String("pdf", "", "write the PDF report to `FILE` (default: BUNDLE/report.pdf when --html is not given)")
	htmlOut := fs.String("html", "", "write the HTML report to `FILE`")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "report: give exactly one results bundle (the folder run --out wrote)")
		fs.Usage()
		return errUsage
	}
	if *pdfOut == "" && *htmlOut == "" {
		*pdfOut = filepath.Join(pos[0], "report.pdf")
	}
	// The bundle is served by a daemon of this process over a throw-away results directory,
	// so that the report reads it as the app does (summary, volumes, files).
	tmp, err := scratch.MkdirTemp("", "report")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	d, err := daemon.New(daemon.Options{ResultsDir: tmp, Backend: "cpu", NoSeedPrefetch: true})
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	job, err := d.OpenBundle(ctx, pos[0])
	if err != nil {
		return err
	}
	r, err := readReport(ctx, d, job.ID)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	for _, out := range []struct {
		path  string
		write func(io.Writer, report.Report) error
	}{{*pdfOut, report.WritePDF}, {*htmlOut, report.Write}} {
		if out.path == "" {
			continue
		}
		var b bytes.Buffer
		if err := out.write(&b, r); err != nil {
			return err
		}
		if err := writeFileAtomic(out.path, b.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "report      %s\n", out.path)
	}
	return nil
}

// readReport reads finished job id's report from svc, figures rendered from its maps.
func readReport(ctx context.Context, svc ipc.Service, id string) (report.Report, error) {
	sum, err := svc.Summary(ctx, id)
	if err != nil {
		return report.Report{}, err
	}
	r, err := report.FromService(ctx, svc, sum)
	if err != nil {
		return r, err
	}
	r.Figures, err = report.BundleFigures(ctx, svc, sum, r.Metrics)
	return r, err
}

// reportPDF is the served PDF report of a finished job (GET /v1/jobs/{id}/report.pdf, the
// browser app's download): the same pages as "report BUNDLE --pdf" and the app's "Save report".
func reportPDF(ctx context.Context, svc ipc.Service, id string) ([]byte, error) {
	r, err := readReport(ctx, svc, id)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := report.WritePDF(&b, r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeFileAtomic writes through a temporary file beside path, so a failed write never leaves
// half a report.
func writeFileAtomic(path string, b []byte) error {
	f, err := scratch.CreateBeside(path)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
