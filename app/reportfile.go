package app

import (
	"io"

	"github.com/hubscope/hubscope/app/report"
)

// reportData is what the report says about the result: report.FromService's reading of the
// bundle (metrics, cleaning and motion, norm comparison, the command that repeats the run)
// with the figures of the views as shown.
func (r *Result) reportData() (report.Report, error) {
	rep, err := report.FromService(r.ctx, r.svc, r.Summary)
	if err != nil {
		return rep, err
	}
	if r.Network.Metrics != nil {
		rep.Metrics = r.Network.Metrics
	}
	rep.Figures = r.Figures()
	return rep, nil
}

// WriteReport writes the one-page HTML report of the result.
func (r *Result) WriteReport(w io.Writer) error {
	rep, err := r.reportData()
	if err != nil {
		return err
	}
	return report.Write(w, rep)
}

// WritePDFReport writes the report as a PDF of one to three pages (report.WritePDF: the same
// reading as the HTML page), for attaching to a record.
func (r *Result) WritePDFReport(w io.Writer) error {
	rep, err := r.reportData()
	if err != nil {
		return err
	}
	return report.WritePDF(w, rep)
}
