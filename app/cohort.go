package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/cohortview"
	"github.com/hubscope/hubscope/app/compareview"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// TabTMaps names the cohort view's tab of a comparison's t-maps (compareview).
const TabTMaps = "T-maps"

// bundleMarker is the file every finished results bundle holds (helper/bundle.Marker).
const bundleMarker = ".hubscope-bundle"

// cohortButton opens a results folder: on the desktop through the folder dialog; in the
// browser, which names no paths, from the helper's list of the folders it may open
// (openFolders, set by EnableBrowserUpload).
func (u *UI) cohortButton() fyne.CanvasObject {
	if runtime.GOOS == "js" {
		return widget.NewButtonWithIcon("Open results folder…", theme.FolderOpenIcon(), func() {
			if u.openFolders != nil {
				u.openFolders()
			}
		})
	}
	return widget.NewButtonWithIcon("Open results folder…", theme.FolderOpenIcon(), func() {
		if u.opts.Window == nil {
			return
		}
		dialog.NewFolderOpen(func(l fyne.ListableURI, err error) {
			if err != nil {
				u.Status.SetText("Could not open the folder: " + err.Error())
				return
			}
			if l != nil {
				u.OpenFolder(l.Path())
			}
		}, u.opts.Window).Show()
	})
}

// OpenFolder shows a results folder: a finished bundle — one scan's, or a group-mean
// network's (hubscope-helper group) — as a result, through the helper; a cohort's folder
// (hubscope-helper cohort) or a comparison's (compare) as the cohort view (ShowCohort).
func (u *UI) OpenFolder(dir string) {
	if _, err := os.Stat(filepath.Join(dir, bundleMarker)); err == nil {
		u.openInHelper(dir, nil)
		return
	}
	u.ShowCohort(dir)
}

// OpenResults shows a results folder as OpenFolder does, once the helper has answered
// (hubscope --open-results).
func (u *UI) OpenResults(dir string) {
	if u.svc == nil {
		u.toOpenResults = append(u.toOpenResults, dir)
		return
	}
	u.OpenFolder(dir)
}

// openInHelper asks the helper to open a finished results folder (JobRequest.Open) and shows
// it (open). done, when set, is called on the UI goroutine with the job's summary instead.
func (u *UI) openInHelper(dir string, done func(ipc.Summary, error)) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	u.openRequest(ipc.JobRequest{Open: abs}, dir, done)
}

// openRequest submits a request that opens a finished results folder (by its path, Open, or
// by the ID the helper listed it under, OpenFolder; label names it in the status line) and
// shows it (open); done, when set, is called on the UI goroutine with the job's summary instead.
func (u *UI) openRequest(req ipc.JobRequest, label string, done func(ipc.Summary, error)) {
	svc := u.svc
	if svc == nil {
		err := errors.New("the helper is not connected")
		if done != nil {
			done(ipc.Summary{}, err)
		} else {
			u.Status.SetText("Could not open " + label + ": " + err.Error() + ".")
		}
		return
	}
	u.submitting.Add(1)
	go func() {
		defer u.submitting.Done()
		j, err := svc.Submit(u.ctx, req)
		if done == nil {
			fyne.Do(func() {
				if err != nil {
					u.Status.SetText(fmt.Sprintf("Could not open %s: %v", label, err))
					return
				}
				u.Status.SetText("Opened " + label + ".")
				u.open(j)
			})
			return
		}
		var s ipc.Summary
		if err == nil {
			s, err = svc.Summary(u.ctx, j.ID)
		}
		fyne.Do(func() { done(s, err) })
	}()
}

// Cohort is the cohort's results on show (nil when none is).
func (u *UI) Cohort() *cohortview.View { return u.cohort }

// Comparison is the t-maps of a comparison on show (in the cohort view's T-maps tab, or on
// their own for a comparison job opened from the list); nil when none are.
func (u *UI) Comparison() *compareview.View { return u.comparison }

// clearResults closes what the result's place shows.
func (u *UI) clearResults() {
	if u.Result != nil {
		u.Result.close()
		u.Result = nil
	}
	if u.comparison != nil {
		u.comparison.Close()
		u.comparison = nil
	}
	u.cohort = nil
}

// SelectCohortTab shows the cohort view's tab with this name (Subjects, Comparison, T-maps)
// and reports whether there is one.
func (u *UI) SelectCohortTab(name string) bool {
	if u.cohort == nil {
		return false
	}
	for _, it := range u.cohort.Tabs.Items {
		if it.Text == name {
			u.cohort.Tabs.Select(it)
			return true
		}
	}
	return false
}

// comparisonDir is the folder with compare.json among a cohort's results: the folder itself
// or its compare/ (compare's default output), "" without one.
func comparisonDir(dir string) string {
	for _, d := range []string{dir, filepath.Join(dir, cohortview.CompareDir)} {
		if _, err := os.Stat(filepath.Join(d, schema.ComparisonFile)); err == nil {
			return d
		} else if !errors.Is(err, fs.ErrNotExist) {
			return ""
		}
	}
	return ""
}

// ShowCohort shows the cohort's results folder dir (hubscope-helper cohort and compare) in the
// result's place, or says in the status line why it cannot. With a comparison (compare.json),
// the helper opens it and a T-maps tab shows its t-maps over the anatomy (compareview); the
// cohort's group-mean networks (its group/ bundles) open from the view's buttons.
func (u *UI) ShowCohort(dir string) {
	r, err := cohortview.Read(dir)
	if err != nil {
		u.Status.SetText("Not a results folder: " + err.Error())
		return
	}
	var groups []cohortGroup
	ms, _ := filepath.Glob(filepath.Join(dir, "group", "*_hubscope", bundleMarker))
	for _, m := range ms {
		b := filepath.Dir(m)
		groups = append(groups, cohortGroup{name: filepath.Base(b), open: func() { u.openInHelper(b, nil) }})
	}
	var openCmp func(func(ipc.Summary, error))
	if cmp := comparisonDir(dir); cmp != "" {
		openCmp = func(done func(ipc.Summary, error)) { u.openInHelper(cmp, done) }
	}
	u.showCohort(r, filepath.Base(dir), dir, groups, openCmp)
}

// cohortGroup is one group-mean network of a cohort on show: its bundle's name and how to
// open it.
type cohortGroup struct {
	name string
	open func()
}

// showCohort shows a cohort's tables r (titled with name; where names the folder in the
// status line), a button per group-mean network, and, when openCmp is set, a T-maps tab whose
// comparison openCmp opens in the helper.
func (u *UI) showCohort(r *cohortview.Results, name, where string, groups []cohortGroup, openCmp func(func(ipc.Summary, error))) {
	u.clearResults()
	v := cohortview.NewView(r)
	u.cohort = v
	title := widget.NewLabelWithStyle("Cohort "+name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	top := container.NewHBox(title)
	u.cohortGroups = nil
	for _, g := range groups {
		label := "Group mean"
		if task, ok := strings.CutPrefix(g.name, "task-"); ok {
			if task, _, ok = strings.Cut(task, "_desc-groupmean"); ok {
				label += " (" + task + ")"
			}
		}
		btn := widget.NewButtonWithIcon(label, theme.FolderOpenIcon(), g.open)
		u.cohortGroups = append(u.cohortGroups, btn)
		top.Add(btn)
	}
	u.resultBox.Objects = []fyne.CanvasObject{container.NewBorder(top, nil, nil, nil, v.Tabs)}
	u.resultBox.Refresh()
	u.Status.SetText("Showing the cohort's results in " + where + ".")
	if openCmp == nil {
		return
	}
	tab := container.NewTabItem(TabTMaps, container.NewStack(widget.NewLabel("Opening the comparison's t-maps in the helper…")))
	v.Tabs.Append(tab)
	v.Tabs.OnSelected = func(it *container.TabItem) {
		if it == tab {
			u.SetListShown(false) // three slices and the table of nodes need the window's width
		}
	}
	openCmp(func(s ipc.Summary, err error) {
		if u.cohort != v {
			return // another result replaced the cohort
		}
		if err == nil && !compareview.Has(s) {
			err = fmt.Errorf("the helper serves no t-maps for the comparison of %s", where)
		}
		if err != nil {
			tab.Content = widget.NewLabel("The t-maps cannot be shown: " + err.Error())
			v.Tabs.Refresh()
			return
		}
		c := compareview.New(u.ctx, u.volumes, s)
		c.OnLoaded = u.comparisonLoaded
		u.comparison = c
		// In a scroll container, as the result's Slices tab: three slices and the table are
		// wider than the result's half of the window beside the scan list, and would make the
		// window itself grow past the screen.
		tab.Content = container.NewScroll(c)
		v.Tabs.Refresh()
		c.Start() // last: it updates the view from other goroutines in tests
	})
}

// comparisonLoaded tells Options.OnComparison (tests and the smoke dump) that the t-maps are shown.
func (u *UI) comparisonLoaded(err error) {
	if u.opts.OnComparison != nil {
		u.opts.OnComparison(u.comparison, err)
	}
}

// showComparison shows a comparison job opened from the list: its t-maps on their own.
func (u *UI) showComparison(s ipc.Summary) {
	u.clearResults()
	c := compareview.New(u.ctx, u.volumes, s)
	c.OnLoaded = u.comparisonLoaded
	u.comparison = c
	title := widget.NewLabelWithStyle(s.Job.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	u.resultBox.Objects = []fyne.CanvasObject{container.NewBorder(title, nil, nil, nil, container.NewScroll(c))}
	u.resultBox.Refresh()
	u.SetListShown(false) // three slices and the table of nodes need the window's width
	c.Start()
}
