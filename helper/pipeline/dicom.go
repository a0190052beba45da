package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/dicom"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
)

// prepareDICOM converts a DICOM input (a folder, .zip or DICOMDIR given as the scan) with
// dcm2niix into a private temporary folder (docs/dicom.md); the caller analyses its NIfTI
// and calls Remove. nil, nil when the scan is not DICOM.
func prepareDICOM(ctx context.Context, cfg Config, rep progress.Reporter) (*dicom.Prepared, error) {
	if cfg.Group != nil || cfg.Demo || !dicom.IsInput(cfg.Scan) {
		if cfg.DICOMSeries != 0 {
			return nil, fmt.Errorf("%s: --series chooses a series of DICOM input (a folder, .zip or DICOMDIR), not of a NIfTI scan", cfg.Scan)
		}
		return nil, nil
	}
	rep.Start("convert DICOM", 0)
	return dicom.Prepare(ctx, cfg.Scan, dicom.Options{Series: cfg.DICOMSeries, MinVolumes: scan.MinTimePoints, Note: rep.Note})
}

// dicomTR applies the rule of docs/dicom.md to the loaded scan: the NIfTI header's TR unless
// it is missing or implausible, then the sidecar's RepetitionTime.
func dicomTR(s *scan.Scan, p *dicom.Prepared, rep progress.Reporter) {
	tr, used := p.UseTR()
	if used == "NIfTI header" || tr == 0 {
		return
	}
	s.TR = tr
	s.TRSource = "TR " + strconv.FormatFloat(tr, 'g', 6, 64) + " s from the " + used
	rep.Note(s.TRSource)
}

// writeDICOMInput copies the converted NIfTI and its sidecar into the bundle's input/ and
// returns the conversion's provenance record.
func writeDICOMInput(w *bundle.Writer, p *dicom.Prepared) (*bundle.Conversion, error) {
	rec := &bundle.Conversion{
		Source: p.Redact(p.Source), Kind: p.Kind, Files: p.Files, Series: p.Series.Number,
		Description: p.Series.Description, Reason: p.Reason, Volumes: p.Volumes,
		Tool: dicom.ToolName, ToolVersion: p.Tool.Version, Warnings: append([]string{}, p.Warnings...),
		Removed: append([]string{}, p.Removed...),
		NIfTI:   "input/" + filepath.Base(p.NIfTI), Sidecar: "input/" + filepath.Base(p.Sidecar),
	}
	for _, f := range [][2]string{{rec.NIfTI, p.NIfTI}, {rec.Sidecar, p.Sidecar}} {
		src := f[1]
		if err := w.WriteFile(f[0], func(out io.Writer) error {
			in, err := os.Open(src)
			if err != nil {
				return err
			}
			defer in.Close()
			_, err = io.Copy(out, in)
			return err
		}); err != nil {
			return nil, err
		}
	}
	return rec, nil
}
