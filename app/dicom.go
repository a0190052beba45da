package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/ipc"
)

// IsDICOM reports whether a dropped or chosen path is DICOM input the helper converts with
// dcm2niix (the repository's docs/dicom.md): a folder, a .zip, a DICOMDIR or a .dcm/.ima file.
func IsDICOM(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".zip", ".dcm", ".ima":
		return true
	}
	if strings.EqualFold(filepath.Base(path), "DICOMDIR") {
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// scanFilter is the file dialog's filter: NIfTI scans and DICOM (.zip, .dcm, DICOMDIR).
type scanFilter struct{}

func (scanFilter) Matches(u fyne.URI) bool {
	n := strings.ToLower(u.Name())
	return IsScan(n) || strings.HasSuffix(n, ".gz") || strings.HasSuffix(n, ".zip") || strings.HasSuffix(n, ".dcm") ||
		strings.HasSuffix(n, ".ima") || n == "dicomdir"
}

var _ storage.FileFilter = scanFilter{}

// listSeries asks the helper for a DICOM input's series, off the UI goroutine, and keeps the
// answer with the pending scan for its chooser; a problem (mixed series, no time series) is
// said in the status line.
func (u *UI) listSeries(path string) {
	sl, ok := u.svc.(ipc.SeriesLister)
	if !ok {
		return
	}
	u.listing.Add(1)
	go func() {
		defer u.listing.Done()
		lst, err := sl.ListSeries(u.ctx, ipc.SeriesRequest{Path: path})
		fyne.DoAndWait(func() {
			if err != nil {
				u.Status.SetText(fmt.Sprintf("%s: %v", filepath.Base(path), err))
				return
			}
			u.Scans.SetListing(path, &lst)
			if lst.Problem != "" {
				u.Status.SetText(fmt.Sprintf("%s: %s — choose a series.", filepath.Base(path), lst.Problem))
			}
		})
	}()
}

// SetListing keeps the helper's series listing of a DICOM scan and its chosen series.
func (s *Scans) SetListing(path string, lst *ipc.DICOMListing) {
	s.mu.Lock()
	for i := range s.items {
		if s.items[i].Path == path {
			s.items[i].Listing = lst
			if s.items[i].Series == 0 {
				s.items[i].Series = lst.Chosen
			}
		}
	}
	s.mu.Unlock()
	s.changed()
}

// SetSeries chooses the series of a DICOM scan (0: the helper's rule).
func (s *Scans) SetSeries(path string, n int) {
	s.mu.Lock()
	for i := range s.items {
		if s.items[i].Path == path {
			s.items[i].Series = n
		}
	}
	s.mu.Unlock()
	s.changed()
}

// seriesOption is one series in the chooser: number, description, volumes, TR and matrix.
func seriesOption(s ipc.DICOMSeries) string {
	tr := ""
	if s.TR > 0 {
		tr = fmt.Sprintf(", TR %g s", s.TR)
	}
	return fmt.Sprintf("%d %s — %d volume(s)%s, %d×%d×%d", s.Number, s.Description, s.Volumes, tr, s.Matrix[0], s.Matrix[1], s.Matrix[2])
}

// showSeries fills a pending row's series chooser (hidden for NIfTI scans).
func (r *pendingRow) showSeries(p Pending) {
	if p.Listing == nil || len(p.Listing.Series) == 0 {
		r.series.Hide()
		return
	}
	var opts []string
	selected := ""
	for _, s := range p.Listing.Series {
		o := seriesOption(s)
		opts = append(opts, o)
		if s.Number == p.Series {
			selected = o
		}
	}
	r.series.OnChanged = nil
	r.series.Options = opts
	if selected != "" {
		r.series.SetSelected(selected)
	} else {
		r.series.ClearSelected()
	}
	path := p.Path
	r.series.OnChanged = func(o string) {
		var n int
		if _, err := fmt.Sscanf(o, "%d", &n); err == nil {
			r.u.Scans.SetSeries(path, n)
		}
	}
	r.series.Show()
}

func newSeriesSelect() *widget.Select {
	s := widget.NewSelect(nil, nil)
	s.PlaceHolder = "Choose the series to analyse"
	s.Hide()
	return s
}

// sizeRows gives the pending list's DICOM rows room for their series chooser.
func (u *UI) sizeRows() {
	r := newPendingRow(u)
	base := r.MinSize().Height
	extra := r.series.MinSize().Height + 4
	for i, p := range u.Scans.Items() {
		h := base
		if p.Listing != nil && len(p.Listing.Series) > 0 {
			h += extra
		}
		u.pending.SetItemHeight(i, h)
	}
}
