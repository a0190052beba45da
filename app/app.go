// Package app is HubScope's Fyne user interface. It talks to the helper only through
// ipc.Service (an *ipc.Client in the program, a scripted service in tests) and never computes
// networks itself. Screens are small functions returning fyne.CanvasObject, as in Fyne's demo
// application; long work runs off the UI goroutine and its results are applied with fyne.Do.
// The package does not import fyne.io/fyne/v2/app, so its tests run headless on Fyne's test
// driver; only cmd/hubscope creates the Fyne application.
package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/cohortview"
	"github.com/hubscope/hubscope/app/compareview"
	"github.com/hubscope/hubscope/app/jobs"
	"github.com/hubscope/hubscope/app/slices"
	"github.com/hubscope/hubscope/app/watch"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// IsScan reports whether a dropped or chosen file looks like a NIfTI scan by its name.
func IsScan(name string) bool { return watch.Classify(name) == watch.Scan }

// Pending is a scan waiting to be analysed, with the user's mask ("" = automatic mask).
type Pending struct {
	Path, Mask string
	// DICOM input (IsDICOM): the series to analyse (0: the helper's BOLD rule) and the
	// helper's listing of the series, once it answered (nil before).
	Series  int
	Listing *ipc.DICOMListing
}

// Scans is the list of scans the user has brought in (dropped or opened) and not yet sent to
// the helper, in order, without duplicates. Safe for use from the UI goroutine and from drop
// callbacks.
type Scans struct {
	mu      sync.Mutex
	items   []Pending
	Changed func() // called after every change
}

// Add records the scans among paths and returns the ones it rejected as not NIfTI.
func (s *Scans) Add(paths ...string) (rejected []string) {
	s.mu.Lock()
	added := false
outer:
	for _, p := range paths {
		if !IsScan(p) && !IsDICOM(p) {
			rejected = append(rejected, p)
			continue
		}
		for _, q := range s.items {
			if q.Path == p {
				continue outer
			}
		}
		s.items = append(s.items, Pending{Path: p})
		added = true
	}
	s.mu.Unlock()
	if added {
		s.changed()
	}
	return rejected
}

func (s *Scans) changed() {
	s.mu.Lock()
	cb := s.Changed
	s.mu.Unlock()
	if cb != nil {
		cb()
	}
}

// put keeps p (again) in the list, mask included.
func (s *Scans) put(p Pending) {
	s.Add(p.Path)
	if p.Mask != "" {
		s.SetMask(p.Path, p.Mask)
	}
	if p.Listing != nil {
		s.SetListing(p.Path, p.Listing)
	}
	if p.Series != 0 {
		s.SetSeries(p.Path, p.Series)
	}
}

// SetMask gives the scan at path a mask ("" = automatic).
func (s *Scans) SetMask(path, mask string) {
	s.mu.Lock()
	for i := range s.items {
		if s.items[i].Path == path {
			s.items[i].Mask = mask
		}
	}
	s.mu.Unlock()
	s.changed()
}

// Remove drops the scan at path from the list.
func (s *Scans) Remove(path string) {
	s.mu.Lock()
	for i := range s.items {
		if s.items[i].Path == path {
			s.items = append(s.items[:i], s.items[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	s.changed()
}

// Take empties the list and returns what it held.
func (s *Scans) Take() []Pending {
	s.mu.Lock()
	out := s.items
	s.items = nil
	s.mu.Unlock()
	s.changed()
	return out
}

// Items returns a copy of the list.
func (s *Scans) Items() []Pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Pending(nil), s.items...)
}

// Paths returns the scans' paths.
func (s *Scans) Paths() []string {
	var out []string
	for _, p := range s.Items() {
		out = append(out, p.Path)
	}
	return out
}

// Options configure the main window.
type Options struct {
	// Connect reaches (or starts) the helper. It is called off the UI goroutine at Start and
	// when the user presses Retry.
	Connect func(ctx context.Context) (ipc.Service, error)
	// Window parents the dialogs and is what a smoke dump captures.
	Window fyne.Window
	// OnResult is called on the UI goroutine once a result is shown.
	OnResult func(*Result)
	// OnConnect is called on the UI goroutine after each attempt to reach the helper.
	OnConnect func(ipc.Info, error)
	// OnComparison is called on the UI goroutine each time a comparison's t-maps are shown
	// (or failed to load: err).
	OnComparison func(*compareview.View, error)
}

// UI is the main window's state.
type UI struct {
	Scans    Scans
	Settings *SettingsForm
	// Jobs is the job list; nil until the helper answered.
	Jobs *jobs.List
	// Result is the result on show (nil before one is opened).
	Result *Result

	// Header parts: the helper and its compute backend, or why it cannot be reached.
	Backend *widget.Label
	Retry   *widget.Button
	// Status answers the last drop, open or submission, in words.
	Status  *widget.Label
	Analyse *widget.Button
	// ListToggle folds the left column (scans, settings, analyses) away and back, giving a
	// result the window's width; opening the Slices or Dynamics tab folds it by itself.
	ListToggle *widget.Button

	opts      Options
	ctx       context.Context
	svc       ipc.Service
	volumes   *slices.VolumeCache // one per helper connection, shared by every result's views
	info      ipc.Info
	pending   *widget.List
	jobsBox   *fyne.Container
	resultBox *fyne.Container
	left      fyne.CanvasObject // the left column, built by Content
	split     *container.Split
	watchUI   *folderWatch
	toOpen    []string // scans to analyse as soon as the helper answers (--open)
	// toOpenResults are results folders to show as soon as the helper answers (--open-results).
	toOpenResults []string
	listing       sync.WaitGroup // DICOM series listings in flight (tests wait for them)
	submitting    sync.WaitGroup // submissions in flight (tests wait for them)
	// openScan is what "Open scan…" does: Fyne's file dialog on the desktop; in the browser,
	// where that dialog cannot read files, the page's own file chooser (EnableBrowserUpload).
	openScan func()
	cohort   *cohortview.View // a cohort's results on show instead of a result (ShowCohort)
	// comparison is a comparison's t-maps on show (in the cohort view, or alone).
	comparison *compareview.View
	// openFolders is what "Open results folder…" does in the browser: list the folders the
	// helper may open (EnableBrowserUpload); nil on the desktop, whose folder dialog reads paths.
	openFolders func()
	// cohortGroups open the group-mean networks of the cohort on show (ShowCohort).
	cohortGroups []*widget.Button
}

// New builds the main window's state; Start connects it to the helper.
func New(ctx context.Context, opts Options) *UI {
	u := &UI{opts: opts, ctx: ctx, Settings: NewSettingsForm()}
	u.Settings.Norm.Window = opts.Window
	u.Settings.Atlas.Window = opts.Window
	u.openScan = u.OpenDialog
	u.Status = widget.NewLabel("Drop resting-state scans (.nii or .nii.gz) on this window, or open one.")
	u.Status.Wrapping = fyne.TextWrapWord
	u.Backend = widget.NewLabel("Connecting to the helper…")
	u.Backend.Wrapping = fyne.TextWrapWord
	u.Retry = widget.NewButtonWithIcon("Retry", theme.ViewRefreshIcon(), func() { u.Start() })
	u.Retry.Hide()
	u.ListToggle = widget.NewButtonWithIcon("Hide the scan list", theme.NavigateBackIcon(), func() {
		u.SetListShown(u.left != nil && !u.left.Visible())
	})
	u.Analyse = widget.NewButtonWithIcon("Analyse", theme.MediaPlayIcon(), u.analysePending)
	u.Analyse.Importance = widget.HighImportance
	u.pending = widget.NewList(
		func() int { return len(u.Scans.Items()) },
		func() fyne.CanvasObject { return newPendingRow(u) },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if it := u.Scans.Items(); i < len(it) {
				o.(*pendingRow).show(it[i])
			}
		})
	u.Scans.Changed = func() { fyne.Do(u.scansChanged) }
	u.Settings.OnChanged = func(bool) { u.updateAnalyse() }
	u.jobsBox = container.NewStack(widget.NewLabel("Analyses appear here once the helper answers."))
	u.resultBox = container.NewStack(widget.NewLabelWithStyle("Open a finished analysis to see its hubs and modules.", fyne.TextAlignCenter, fyne.TextStyle{Italic: true}))
	u.watchUI = newFolderWatch(u)
	u.scansChanged()
	return u
}

func (u *UI) scansChanged() {
	u.sizeRows()
	u.pending.Refresh()
	u.updateAnalyse()
}

func (u *UI) updateAnalyse() {
	n := len(u.Scans.Items())
	_, err := u.Settings.Settings()
	switch {
	case n == 0:
		u.Analyse.SetText("Analyse")
		u.Analyse.Disable()
	default:
		u.Analyse.SetText(fmt.Sprintf("Analyse %d scan(s)", n))
		if err != nil || u.svc == nil {
			u.Analyse.Disable()
		} else {
			u.Analyse.Enable()
		}
	}
}

// Start connects to the helper in the background; the header then names its backend or says
// what is wrong and what to do.
func (u *UI) Start() {
	u.Retry.Hide()
	u.Backend.SetText("Connecting to the helper…")
	go func() {
		svc, err := u.opts.Connect(u.ctx)
		var info ipc.Info
		var listed []ipc.Job
		if err == nil {
			info, err = svc.Info(u.ctx)
		}
		if err == nil {
			// Jobs of this and earlier sessions, so the list is complete when it first shows.
			listed, err = svc.Jobs(u.ctx)
		}
		fyne.Do(func() {
			if err != nil {
				u.Backend.SetText(Unreachable(err))
				u.Backend.Importance = widget.DangerImportance
				u.Backend.Refresh()
				u.Retry.Show()
			} else {
				u.connected(svc, info, listed)
			}
			if u.opts.OnConnect != nil {
				u.opts.OnConnect(info, err)
			}
		})
	}()
}

// Unreachable says that the helper cannot be reached, why, and what to do.
func Unreachable(err error) string {
	return "HubScope cannot reach its helper program (hubscope-helper), which does the analysis: " + err.Error() +
		". Check that hubscope-helper is installed next to HubScope or on the PATH, or start it yourself with " +
		"\"hubscope-helper serve\", then press Retry."
}

// BackendText names the helper's compute device in the header.
func BackendText(info ipc.Info) string {
	dev := "CPU"
	if info.GPU != nil && info.GPU.Name != "" {
		dev = "GPU " + info.GPU.Name
	}
	out := fmt.Sprintf("Helper %s · computing on %s", info.Version, dev)
	if info.GPU == nil && info.CPU != "" {
		out += fmt.Sprintf(" (%s, %d cores)", info.CPU, info.Cores)
	}
	if info.Version != "" && info.Version != schema.Version {
		out += fmt.Sprintf(" · note: the helper is version %s, this app %s", info.Version, schema.Version)
	}
	return out
}

func (u *UI) connected(svc ipc.Service, info ipc.Info, listed []ipc.Job) {
	u.svc, u.info = svc, info
	u.volumes = slices.NewVolumeCache(svc, 0)
	u.Backend.Importance = widget.MediumImportance
	u.Backend.SetText(BackendText(info))
	u.Jobs = jobs.New(u.ctx, svc)
	u.Jobs.OnOpen = u.open
	u.Jobs.OnFinished = func(j ipc.Job) {
		if u.Result == nil {
			u.open(j) // the first result of the session opens by itself
		}
	}
	u.Jobs.OnDetails = func(r jobs.Row) {
		msg := jobs.Problem(r.Job)
		if msg == "" {
			msg = r.Note
		}
		if msg != "" && u.opts.Window != nil {
			dialog.ShowInformation(r.Job.Name, msg, u.opts.Window)
		}
	}
	u.jobsBox.Objects = []fyne.CanvasObject{u.Jobs.Widget}
	u.jobsBox.Refresh()
	u.updateAnalyse()
	u.Jobs.Show(listed)
	for _, p := range u.Scans.Items() { // DICOM added before the helper answered
		if p.Listing == nil && IsDICOM(p.Path) && !IsScan(p.Path) {
			u.listSeries(p.Path)
		}
	}
	if len(u.toOpen) > 0 {
		paths := u.toOpen
		u.toOpen = nil
		u.OpenScans(paths...)
	}
	for _, dir := range u.toOpenResults {
		u.OpenFolder(dir)
	}
	u.toOpenResults = nil
}

// Dropped handles files dropped on the window (Window.SetOnDropped).
func (u *UI) Dropped(_ fyne.Position, uris []fyne.URI) {
	var paths []string
	for _, uri := range uris {
		paths = append(paths, uri.Path())
	}
	u.add(paths)
}

func (u *UI) add(paths []string) {
	rejected := u.Scans.Add(paths...)
	if u.svc != nil {
		for _, p := range paths {
			if IsDICOM(p) && !IsScan(p) {
				u.listSeries(p)
			}
		}
	}
	msg := fmt.Sprintf("%d scan(s) ready.", len(u.Scans.Items()))
	if len(rejected) > 0 {
		names := make([]string, len(rejected))
		for i, r := range rejected {
			names[i] = filepath.Base(r)
		}
		msg += " Not a NIfTI scan (.nii, .nii.gz) or DICOM (folder, .zip, DICOMDIR): " + strings.Join(names, ", ")
	}
	fyne.Do(func() { u.Status.SetText(msg) })
}

// OpenScans analyses scans right away with the current settings and automatic masks (the
// --open flag), once the helper answers.
func (u *UI) OpenScans(paths ...string) {
	if u.svc == nil {
		u.toOpen = append(u.toOpen, paths...)
		return
	}
	for _, p := range paths {
		u.submit(Pending{Path: p})
	}
}

// analysePending sends every pending scan to the helper.
func (u *UI) analysePending() {
	for _, p := range u.Scans.Take() {
		u.submit(p)
	}
}

// submit sends one scan with the current settings, off the UI goroutine.
func (u *UI) submit(p Pending) {
	s, err := u.Settings.Settings()
	if err != nil {
		u.Status.SetText("Not started: " + err.Error())
		u.Scans.put(p)
		return
	}
	if u.Jobs == nil {
		u.Status.SetText("Not started: the helper is not connected.")
		u.Scans.put(p)
		return
	}
	l := u.Jobs
	norm := u.Settings.Norm.Path
	u.submitting.Add(1)
	go func() {
		defer u.submitting.Done()
		s.DICOMSeries = p.Series
		_, err := l.Submit(u.ctx, ipc.JobRequest{Scan: p.Path, Mask: p.Mask, Norm: norm, Settings: &s})
		fyne.Do(func() {
			if err != nil {
				u.Status.SetText(fmt.Sprintf("Could not start %s: %v", filepath.Base(p.Path), err))
			} else {
				u.Status.SetText(fmt.Sprintf("Started %s.", filepath.Base(p.Path)))
			}
		})
	}()
}

// open fetches a finished job's summary and shows it.
func (u *UI) open(j ipc.Job) {
	svc, volumes := u.svc, u.volumes
	go func() {
		s, err := svc.Summary(u.ctx, j.ID)
		var r *Result
		if err == nil && !compareview.Has(s) {
			r, err = newResult(u.ctx, volumes, s, u.opts.Window)
		}
		fyne.Do(func() {
			if err != nil {
				u.Status.SetText(fmt.Sprintf("Could not open the results of %s: %v", j.Name, err))
				return
			}
			if r == nil {
				u.showComparison(s) // a two-group comparison: its t-maps
				return
			}
			u.clearResults()
			u.Result = r
			r.Tabs.OnSelected = func(it *container.TabItem) {
				// Three slices and the inspector (or the timelines) need the window's width.
				if it.Text == TabSlices || it.Text == TabDynamics {
					u.SetListShown(false)
				}
			}
			u.resultBox.Objects = []fyne.CanvasObject{r.Content()}
			u.resultBox.Refresh()
			if u.opts.OnResult != nil {
				u.opts.OnResult(r)
			}
			r.start() // last: what it starts applies its widgets on other goroutines in tests
		})
	}()
}

// OpenDialog asks for a scan file.
func (u *UI) OpenDialog() {
	d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
		if err != nil {
			u.Status.SetText("Could not open: " + err.Error())
			return
		}
		if rc == nil {
			return
		}
		rc.Close()
		u.add([]string{rc.URI().Path()})
	}, u.opts.Window)
	d.SetFilter(scanFilter{}) // NIfTI, and DICOM as .zip, .dcm or DICOMDIR (folders: drop them)
	d.Show()
}

// maskDialog asks for a mask for one pending scan.
func (u *UI) maskDialog(scan string) {
	d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
		if err != nil {
			u.Status.SetText("Could not open the mask: " + err.Error())
			return
		}
		if rc == nil {
			return
		}
		rc.Close()
		p := rc.URI().Path()
		if !IsScan(p) {
			u.Status.SetText(filepath.Base(p) + " is not a NIfTI mask (.nii, .nii.gz).")
			return
		}
		u.Scans.SetMask(scan, p)
	}, u.opts.Window)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".nii", ".gz"}))
	d.Show()
}

// pendingRow shows one scan waiting to be analysed.
type pendingRow struct {
	widget.BaseWidget
	name, mask   *widget.Label
	setMask, del *widget.Button
	series       *widget.Select // DICOM input: the series chooser
	item         Pending
	u            *UI
}

func newPendingRow(u *UI) *pendingRow {
	r := &pendingRow{name: widget.NewLabel("sub-01_task-rest_bold.nii.gz"), mask: widget.NewLabel("automatic mask"), series: newSeriesSelect(), u: u}
	r.name.Truncation = fyne.TextTruncateEllipsis
	r.mask.Importance = widget.LowImportance
	r.setMask = widget.NewButton("Mask…", func() { u.maskDialog(r.item.Path) })
	r.del = widget.NewButtonWithIcon("", theme.DeleteIcon(), func() { u.Scans.Remove(r.item.Path) })
	r.ExtendBaseWidget(r)
	return r
}

func (r *pendingRow) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewBorder(nil, r.series, nil, container.NewHBox(r.mask, r.setMask, r.del), r.name))
}

func (r *pendingRow) show(p Pending) {
	r.item = p
	r.name.SetText(filepath.Base(p.Path))
	if p.Mask == "" {
		r.mask.SetText("automatic mask")
	} else {
		r.mask.SetText("mask " + filepath.Base(p.Mask))
	}
	r.showSeries(p)
}

// header is the title, the helper's backend (or why it is unreachable), Retry and the button
// that folds the scan list away.
func (u *UI) header() fyne.CanvasObject {
	title := widget.NewLabelWithStyle(schema.AppName+" "+schema.Version, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	return container.NewVBox(container.NewBorder(nil, nil, title, container.NewHBox(u.Retry, u.ListToggle), u.Backend), widget.NewSeparator())
}

// SetListShown shows or folds away the left column (scans, settings, analyses).
func (u *UI) SetListShown(on bool) {
	if u.left == nil || u.left.Visible() == on {
		return
	}
	if on {
		u.left.Show()
		u.ListToggle.SetText("Hide the scan list")
		u.ListToggle.SetIcon(theme.NavigateBackIcon())
	} else {
		u.left.Hide()
		u.ListToggle.SetText("Show the scan list")
		u.ListToggle.SetIcon(theme.NavigateNextIcon())
	}
	u.split.Refresh()
}

// inputs is the left column's top: open, watch, the drop note, pending scans and settings.
func (u *UI) inputs() fyne.CanvasObject {
	open := widget.NewButtonWithIcon("Open scan…", theme.FolderOpenIcon(), func() { u.openScan() })
	buttons := container.NewHBox(open)
	if w := u.watchUI.button(); w != nil {
		buttons.Add(w)
	}
	if c := u.cohortButton(); c != nil {
		buttons.Add(c)
	}
	drop := container.NewBorder(nil, nil, widget.NewIcon(theme.UploadIcon()), nil, u.Status)
	pendingBox := container.NewGridWrap(fyne.NewSize(420, 110), u.pending)
	box := container.NewVBox(buttons)
	box.Add(u.watchUI.status())
	for _, o := range []fyne.CanvasObject{drop, pendingBox, u.Settings.Content(), u.Analyse, widget.NewSeparator(),
		widget.NewLabelWithStyle("Analyses", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})} {
		box.Add(o)
	}
	return box
}

// Content is the main screen: header; inputs and job list on the left; the open result's
// tabs on the right.
func (u *UI) Content() fyne.CanvasObject {
	u.left = container.NewBorder(u.inputs(), nil, nil, nil, u.jobsBox)
	u.split = container.NewHSplit(u.left, u.resultBox)
	u.split.Offset = 0.34
	return container.NewBorder(u.header(), nil, nil, nil, u.split)
}
