package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/dicom"
	"github.com/hubscope/hubscope/helper/scratch"
	"github.com/hubscope/hubscope/ipc"
)

// checkScanPath accepts an absolute path to a regular file, or to DICOM input that is a
// folder (docs/dicom.md).
func checkScanPath(p string) (string, error) {
	if filepath.IsAbs(p) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return filepath.Clean(p), nil
		}
	}
	return checkPath("scan", p)
}

// listDICOM lists DICOM input and picks its series (a .zip is extracted into a temporary
// folder removed before it returns). Messages name the input as name.
func listDICOM(ctx context.Context, path, name string, series int) (*dicom.Listing, *dicom.Series, string, error) {
	tmp, err := scratch.MkdirTemp("", "dicom-list")
	if err != nil {
		return nil, nil, "", err
	}
	defer os.RemoveAll(tmp)
	rename := func(err error) error {
		var ie *ipc.Error
		if errors.As(err, &ie) {
			return err
		}
		return ipc.Errorf(ipc.CodeBadRequest, "%s", strings.ReplaceAll(err.Error(), path, name))
	}
	src, err := dicom.Open(path, tmp)
	if err != nil {
		return nil, nil, "", rename(err)
	}
	defer src.Close()
	lst, err := dicom.List(ctx, src)
	if err != nil {
		return nil, nil, "", rename(err)
	}
	s, reason, err := lst.Pick(series)
	if err != nil {
		return lst, nil, "", ipc.Errorf(ipc.CodeBadRequest, "%s", lst.Redact(rename(err).Error()))
	}
	return lst, s, reason, nil
}

// checkDICOM lists a DICOM scan at submission (a folder, .zip or DICOMDIR), so that a folder
// without a time series, mixed series, missing volumes or a missing dcm2niix fail at once, by
// name; the job's name loses any identity the files hold (a folder named after the patient),
// and so does the path it returns for job.json.
func checkDICOM(ctx context.Context, r *record, series int, name *string) (string, error) {
	if _, err := dicom.FindTool(ctx); err != nil {
		return "", ipc.Errorf(ipc.CodeUnavailable, "scan %s: %v", *name, err)
	}
	_, s, _, err := listDICOM(ctx, r.Scan, *name, series)
	if err != nil {
		return "", err
	}
	*name = s.Redact(*name)
	if s.Problem != "" {
		return "", ipc.Errorf(ipc.CodeBadRequest, "scan %s: %s: %s", *name, s.Name(), s.Problem)
	}
	return s.Redact(r.Scan), nil
}

// ListSeries implements ipc.SeriesLister: the series of DICOM input on this machine, for the
// app's chooser (paths only: the wiring refuses the request over the web transport).
func (d *Daemon) ListSeries(ctx context.Context, req ipc.SeriesRequest) (ipc.DICOMListing, error) {
	if ipc.TransportFrom(ctx) == ipc.TransportWeb {
		return ipc.DICOMListing{}, ipc.Errorf(ipc.CodeForbidden, "requests over the web transport cannot name files on the helper's disk")
	}
	p, err := checkScanPath(req.Path)
	if err != nil {
		return ipc.DICOMListing{}, err
	}
	if !dicom.IsInput(p) {
		return ipc.DICOMListing{}, ipc.Errorf(ipc.CodeBadRequest, "%s: not DICOM input (a folder, .zip, DICOMDIR or .dcm file)", p)
	}
	lst, s, reason, err := listDICOM(ctx, p, p, req.Series)
	if lst == nil {
		return ipc.DICOMListing{}, err
	}
	out := ipc.DICOMListing{Skipped: lst.Skipped}
	for _, c := range lst.Series {
		out.Series = append(out.Series, ipc.DICOMSeries{Number: c.Number, Description: c.Description, Modality: c.Modality,
			ImageType: c.ImageType, Volumes: c.Volumes, Slices: c.Slices, Matrix: c.Matrix, TR: c.TR, EPI: c.EPI,
			TimeSeries: c.TimeSeries(), Problem: c.Problem})
	}
	switch {
	case err != nil:
		out.Problem = err.Error()
	case s.Problem != "":
		out.Problem = s.Name() + ": " + s.Problem
	default:
		out.Chosen, out.Reason = s.Number, reason
	}
	return out, nil
}

var _ ipc.SeriesLister = (*Daemon)(nil)

// dropDICOMUpload removes an uploaded DICOM .zip once its job has run: it holds the patient's
// identity, and the bundle's input/ keeps the converted, anonymised series (docs/dicom.md).
func dropDICOMUpload(j *job) {
	in := filepath.Join(j.dir, "input") + string(filepath.Separator)
	if strings.EqualFold(filepath.Ext(j.cfg.Scan), ".zip") && strings.HasPrefix(j.cfg.Scan, in) {
		os.Remove(j.cfg.Scan)
	}
}
