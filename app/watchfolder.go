//go:build !js

package app

import (
	"fmt"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/app/watch"
)

// folderWatch is the watched-folder control: scans that settle in the folder are analysed
// with the current settings and the automatic mask.
type folderWatch struct {
	u      *UI
	label  *widget.Label
	folder *watch.Folder
	opt    watch.Options
}

func newFolderWatch(u *UI) *folderWatch {
	l := widget.NewLabel("")
	l.Wrapping = fyne.TextWrapWord
	l.Hide()
	return &folderWatch{u: u, label: l}
}

func (w *folderWatch) button() fyne.CanvasObject {
	return widget.NewButtonWithIcon("Watch folder…", theme.FolderIcon(), func() {
		dialog.ShowFolderOpen(func(d fyne.ListableURI, err error) {
			if err != nil {
				w.say("Could not open the folder: " + err.Error())
				return
			}
			if d != nil {
				w.Watch(d.Path())
			}
		}, w.u.opts.Window)
	})
}

func (w *folderWatch) status() fyne.CanvasObject { return w.label }

func (w *folderWatch) say(msg string) {
	w.label.SetText(msg)
	w.label.Show()
}

// Watch starts watching dir (stopping any earlier watch).
func (w *folderWatch) Watch(dir string) error {
	if w.folder != nil {
		w.folder.Stop()
		w.folder = nil
	}
	f, err := watch.Start(w.u.ctx, dir, w.opt,
		func(path string) {
			fyne.Do(func() {
				w.say(fmt.Sprintf("Watching %s · %s arrived and is being analysed.", dir, filepath.Base(path)))
				w.u.submit(Pending{Path: path})
			})
		},
		func(msg string) { fyne.Do(func() { w.say("Watching " + dir + " · " + msg) }) })
	if err != nil {
		w.say("Could not watch the folder: " + err.Error())
		return err
	}
	w.folder = f
	w.say(fmt.Sprintf("Watching %s: new scans there are analysed once they have finished copying.", dir))
	return nil
}

// WatchFolder watches dir for new scans (the desktop's watched folder).
func (u *UI) WatchFolder(dir string) error { return u.watchUI.Watch(dir) }
