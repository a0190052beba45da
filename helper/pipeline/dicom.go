package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	n, why := minVolumes(cfg)
	return dicom.Prepare(ctx, cfg.Scan, dicom.Options{Series: cfg.DICOMSeries, MinVolumes: n, MinWhy: why, Note: rep.Note})
}

// minVolumes is the shortest series this configuration can build a network from, said before
// anything else is done with a DICOM input: 3 for a correlation (scan.MinTimePoints), and,
// when the series are cleaned, 2 more than the confounds regressed out (denoise needs a
// constant and a trend beside them) plus the volumes dropped — for auto on a converted scan,
// which has no confounds table, its 5 tCompCor components (clean.go) and the global signal
// when asked for. A confounds table named with --confounds is counted when it is read.
func minVolumes(cfg Config) (int, string) {
	c := cfg.clean()
	if !c.active() {
		return scan.MinTimePoints, ""
	}
	k := 0
	if c.Confounds == "" && (c.Denoise == CleanAuto || c.Denoise == "") && c.Denoise != CleanNone {
		k = rawCompCor
	}
	if c.GlobalSignal {
		k++
	}
	need := scan.MinTimePoints
	if k > 0 {
		need = max(need, k+2)
	}
	if need+c.DropVolumes == scan.MinTimePoints {
		return scan.MinTimePoints, ""
	}
	why := fmt.Sprintf(" (the cleaning regresses out %s beside a constant and a trend", Count(k, "confound"))
	if c.DropVolumes > 0 {
		why += fmt.Sprintf(", and %s dropped", Count(c.DropVolumes, "volume"))
	}
	return need + c.DropVolumes, why + fmt.Sprintf("; %d with --denoise none)", scan.MinTimePoints)
}

// dicomError names the DICOM input and its series where an error names the converted NIfTI,
// which lives in a temporary folder the user never sees.
func dicomError(err error, p *dicom.Prepared) error {
	if err == nil || !strings.Contains(err.Error(), p.NIfTI) {
		return err
	}
	return &renamedError{msg: strings.ReplaceAll(err.Error(), p.NIfTI, dicomName(p)), err: err}
}

func dicomName(p *dicom.Prepared) string { return p.Redact(p.Source) + " (" + p.Series.Name() + ")" }

type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// dicomNotes passes notes on with the converted NIfTI's temporary path replaced likewise.
type dicomNotes struct {
	progress.Reporter
	p *dicom.Prepared
}

func (d dicomNotes) Note(msg string) {
	d.Reporter.Note(strings.ReplaceAll(msg, d.p.NIfTI, dicomName(d.p)))
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
