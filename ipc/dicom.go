package ipc

import (
	"context"
	"net/http"
)

// SeriesRequest asks the helper to list the series of DICOM input on its disk (a folder, a
// .zip or a DICOMDIR; a path, so over the Unix socket only) and to say which one a job on it
// would analyse: the series numbered Series, or (0) the BOLD series by the rule of the
// repository's docs/dicom.md.
type SeriesRequest struct {
	Path   string `json:"path"`
	Series int    `json:"series,omitempty"`
}

// DICOMListing is what DICOM input holds, for the app's series chooser.
type DICOMListing struct {
	Series  []DICOMSeries `json:"series"`
	Skipped int           `json:"skipped"` // files holding no DICOM image (notes, DICOMDIR)
	// Chosen is the series number a job would analyse and Reason why; 0 with Problem saying
	// why none can be taken without choosing (mixed series, no time series, missing volumes).
	Chosen  int    `json:"chosen"`
	Reason  string `json:"reason,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// DICOMSeries is one series as listed (no patient identity: description and numbers only).
type DICOMSeries struct {
	Number      int      `json:"number"`
	Description string   `json:"description"`
	Modality    string   `json:"modality"`
	ImageType   []string `json:"image_type"`
	Volumes     int      `json:"volumes"`
	Slices      int      `json:"slices"`
	Matrix      [3]int   `json:"matrix"`
	TR          float64  `json:"tr"` // seconds; 0 when unknown
	EPI         bool     `json:"epi"`
	TimeSeries  bool     `json:"time_series"` // a candidate of the BOLD rule
	Problem     string   `json:"problem,omitempty"`
}

// SeriesLister is implemented by services that read DICOM (the helper daemon, *Client);
// POST /v1/dicom/series answers 501 on a service that does not.
type SeriesLister interface {
	ListSeries(ctx context.Context, req SeriesRequest) (DICOMListing, error)
}

// ListSeries asks the helper for a DICOM input's series (Unix socket only).
func (c *Client) ListSeries(ctx context.Context, req SeriesRequest) (DICOMListing, error) {
	var v DICOMListing
	return v, c.postJSON(ctx, c.endpoint(nil, "dicom", "series"), req, &v)
}

func (h *handler) dicomSeries(w http.ResponseWriter, r *http.Request, _ input) (any, error) {
	var req SeriesRequest
	if err := h.decode(w, r, &req); err != nil {
		return nil, err
	}
	sl, ok := h.svc.(SeriesLister)
	if !ok {
		return nil, &Error{Status: http.StatusNotImplemented, Code: CodeUnavailable, Message: "this helper does not read DICOM"}
	}
	v, err := sl.ListSeries(r.Context(), req)
	if err != nil {
		return nil, err
	}
	if v.Series == nil {
		v.Series = []DICOMSeries{}
	}
	return v, nil
}
