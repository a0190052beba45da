package app

import (
	"path/filepath"
	"runtime"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/cohortview"
)

// cohortButton opens a cohort's results folder (desktop only: the browser names no folders).
func (u *UI) cohortButton() fyne.CanvasObject {
	if runtime.GOOS == "js" {
		return nil
	}
	return widget.NewButtonWithIcon("Open cohort results…", theme.FolderOpenIcon(), func() {
		if u.opts.Window == nil {
			return
		}
		dialog.NewFolderOpen(func(l fyne.ListableURI, err error) {
			if err != nil {
				u.Status.SetText("Could not open the folder: " + err.Error())
				return
			}
			if l != nil {
				u.ShowCohort(l.Path())
			}
		}, u.opts.Window).Show()
	})
}

// Cohort is the cohort's results on show (nil when none is).
func (u *UI) Cohort() *cohortview.View { return u.cohort }

// ShowCohort shows the cohort's results folder dir (hubscope-helper cohort and compare) in the
// result's place, or says in the status line why it cannot.
func (u *UI) ShowCohort(dir string) {
	r, err := cohortview.Read(dir)
	if err != nil {
		u.Status.SetText("Not a cohort's results: " + err.Error())
		return
	}
	if u.Result != nil {
		u.Result.close()
		u.Result = nil
	}
	v := cohortview.NewView(r)
	u.cohort = v
	title := widget.NewLabelWithStyle("Cohort "+filepath.Base(dir), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	u.resultBox.Objects = []fyne.CanvasObject{container.NewBorder(title, nil, nil, nil, v.Tabs)}
	u.resultBox.Refresh()
	u.Status.SetText("Showing the cohort's results in " + dir + ".")
}
