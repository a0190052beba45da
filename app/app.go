// Package app is HubScope's Fyne user interface. It talks to the helper only through
// ipc.Client (from the IPC issue on) and never computes networks itself. Screens are small
// functions returning fyne.CanvasObject, as in Fyne's demo application.
package app

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/ipc"
)

// IsScan reports whether a dropped or chosen file looks like a NIfTI scan by its name.
func IsScan(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".nii") || strings.HasSuffix(n, ".nii.gz")
}

// Scans is the list of scans the user has brought in (dropped or opened), in order, without
// duplicates. Safe for use from the UI goroutine and from drop callbacks.
type Scans struct {
	mu      sync.Mutex
	paths   []string
	Changed func() // called after every change
}

// Add records the scans among paths and returns the ones it rejected as not NIfTI.
func (s *Scans) Add(paths ...string) (rejected []string) {
	s.mu.Lock()
	added := false
outer:
	for _, p := range paths {
		if !IsScan(p) {
			rejected = append(rejected, p)
			continue
		}
		for _, q := range s.paths {
			if q == p {
				continue outer
			}
		}
		s.paths = append(s.paths, p)
		added = true
	}
	cb := s.Changed
	s.mu.Unlock()
	if added && cb != nil {
		cb()
	}
	return rejected
}

// Paths returns a copy of the list.
func (s *Scans) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// UI is the main window's state.
type UI struct {
	Scans  Scans
	status *widget.Label
	list   *widget.List
}

// New builds the main screen's state.
func New() *UI {
	u := &UI{status: widget.NewLabel("Drop a resting-state scan (.nii or .nii.gz) here.")}
	u.list = widget.NewList(
		func() int { return len(u.Scans.Paths()) },
		func() fyne.CanvasObject { return widget.NewLabel("scan") },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			p := u.Scans.Paths()
			if id < len(p) {
				o.(*widget.Label).SetText(filepath.Base(p[id]))
			}
		})
	u.Scans.Changed = func() { fyne.Do(u.list.Refresh) }
	return u
}

// Dropped handles files dropped on the window (Window.SetOnDropped).
func (u *UI) Dropped(_ fyne.Position, uris []fyne.URI) {
	var paths []string
	for _, uri := range uris {
		paths = append(paths, uri.Path())
	}
	rejected := u.Scans.Add(paths...)
	msg := fmt.Sprintf("%d scan(s) ready.", len(u.Scans.Paths()))
	if len(rejected) > 0 {
		names := make([]string, len(rejected))
		for i, r := range rejected {
			names[i] = filepath.Base(r)
		}
		msg += " Not a NIfTI scan (.nii, .nii.gz): " + strings.Join(names, ", ")
	}
	fyne.Do(func() { u.status.SetText(msg) })
}

// Content is the main screen: title with version, the drop target and the scans list.
func (u *UI) Content() fyne.CanvasObject {
	title := widget.NewLabelWithStyle(ipc.AppName+" "+ipc.Version, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	sub := widget.NewLabel("Voxel-wise functional brain networks: hubs and modules from resting-state fMRI.")
	drop := container.NewBorder(nil, nil, widget.NewIcon(theme.UploadIcon()), nil, u.status)
	return container.NewBorder(container.NewVBox(title, sub, widget.NewSeparator(), drop), nil, nil, nil, u.list)
}
