//go:build js

package app

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall/js"

	"fyne.io/fyne/v2"

	"github.com/hubscope/hubscope/app/cohortview"
	"github.com/hubscope/hubscope/ipc"
)

// Element IDs of the page's "Open results folder…" controls (in the upload panel), for the
// page's users and for scripts/web-smoke.sh.
const (
	FoldersButtonID = "hubscope-open-folder"
	FoldersListID   = "hubscope-folders"
	FoldersOpenID   = "hubscope-folders-open"
	FoldersStatusID = "hubscope-folders-status"
)

// folderKinds name a result folder's kind (ipc.ResultFolder.Kind) in the list.
var folderKinds = map[string]string{ipc.FolderBundle: "results", ipc.FolderGroup: "group mean", ipc.FolderComparison: "comparison", ipc.FolderCohort: "cohort"}

// addFolderControls puts "Open results folder…" in the page's panel: a web page sees no paths
// on the helper's machine, so the button lists the finished results folders the helper may
// open (GET /v1/folders: its jobs' bundles and those under serve --open-root) and "Open"
// opens the one chosen by its ID (JobRequest.open_folder), shown as the desktop app shows an
// opened folder. The window's own "Open results folder…" button does the same.
func (u *UI) addFolderControls(doc, panel js.Value) {
	row := doc.Call("createElement", "div")
	row.Set("style", "margin-top:6px")
	button := doc.Call("createElement", "button")
	button.Set("id", FoldersButtonID)
	button.Set("textContent", "Open results folder…")
	button.Set("style", "cursor:pointer; padding:2px 8px; margin-right:6px; border-radius:4px; color:#1f6feb; border:1px solid #1f6feb; background:#fff; font:13px sans-serif")
	list := doc.Call("createElement", "select")
	list.Set("id", FoldersListID)
	list.Set("style", "display:none; max-width:260px; margin-right:6px")
	open := doc.Call("createElement", "button")
	open.Set("id", FoldersOpenID)
	open.Set("textContent", "Open")
	open.Set("style", "display:none; cursor:pointer")
	status := doc.Call("createElement", "div")
	status.Set("id", FoldersStatusID)
	status.Set("style", "margin-top:4px; font-size:12px")
	for _, e := range []js.Value{button, list, open} {
		row.Call("appendChild", e)
	}
	row.Call("appendChild", status)
	panel.Call("appendChild", row)

	var (
		mu     sync.Mutex
		listed []ipc.ResultFolder // the last listing, for a cohort's group means and comparison
	)
	say := func(msg string) {
		fyne.Do(func() {
			status.Set("textContent", msg)
			u.Status.SetText(msg)
		})
	}
	listFolders := func() {
		var svc ipc.Service
		fyne.DoAndWait(func() { svc = u.svc })
		if svc == nil {
			say("The helper is not connected; results folders cannot be listed yet.")
			return
		}
		fl, ok := svc.(ipc.FolderLister)
		if !ok {
			say("This helper cannot list its results folders; update it to this app's version.")
			return
		}
		say("Listing the results folders on the helper's machine…")
		folders, err := fl.Folders(u.ctx)
		if err != nil {
			say(fmt.Sprintf("Could not list the results folders: %v", err))
			return
		}
		mu.Lock()
		listed = folders
		mu.Unlock()
		fyne.Do(func() {
			was := list.Get("value").String() // kept chosen when the new listing still has it
			list.Set("innerHTML", "")
			for _, f := range folders {
				o := doc.Call("createElement", "option")
				o.Set("value", f.ID)
				kind := folderKinds[f.Kind]
				if kind == "" {
					kind = f.Kind
				}
				where := "this helper's analyses"
				if f.Root == ipc.FolderRootOpen {
					where = "the helper's results folder"
				}
				o.Set("textContent", fmt.Sprintf("%s (%s, %s, %s)", f.Name, kind, where, f.Modified.Local().Format("2006-01-02 15:04")))
				o.Set("selected", f.ID == was)
				list.Call("appendChild", o)
			}
			shown := "none"
			if len(folders) > 0 {
				shown = "inline-block"
			}
			list.Get("style").Set("display", shown)
			open.Get("style").Set("display", shown)
		})
		if len(folders) == 0 {
			say("The helper lists no results folders: none of its analyses has finished, and it was started without --open-root DIR (the folder of results it may open).")
			return
		}
		say(fmt.Sprintf("%d results folders on the helper's machine: choose one and press Open.", len(folders)))
	}
	openChosen := func(id, label string) {
		var svc ipc.Service
		fyne.DoAndWait(func() { svc = u.svc })
		if svc == nil {
			say("The helper is not connected.")
			return
		}
		mu.Lock()
		folders := listed
		mu.Unlock()
		var chosen ipc.ResultFolder
		for _, f := range folders {
			if f.ID == id {
				chosen = f
			}
		}
		if chosen.Kind != ipc.FolderCohort {
			say("Opening " + label + "…")
			j, err := svc.Submit(u.ctx, ipc.JobRequest{OpenFolder: id})
			if err != nil {
				say(fmt.Sprintf("Could not open %s: %v", label, err))
				return
			}
			fyne.Do(func() { u.open(j) })
			say("Opened " + label + ".")
			return
		}
		// A cohort's folder: its tables from the helper, its group means and comparison by
		// the IDs the helper listed them under.
		ft, ok := svc.(ipc.FolderTabler)
		if !ok {
			say("This helper cannot serve a cohort's tables; update it to this app's version.")
			return
		}
		say("Reading the cohort's tables in " + label + "…")
		r, err := cohortview.Load(label, func(name string) (*cohortview.Table, error) {
			if !slices.Contains(chosen.Tables, name) {
				return nil, nil // not in the folder (asking would log a 404 in the page's console)
			}
			b, err := ft.FolderTable(u.ctx, id, name)
			if err != nil {
				return nil, err
			}
			return cohortview.ParseTSV(bytes.NewReader(b), label+"/"+name)
		})
		if err != nil {
			say(fmt.Sprintf("Could not open %s: %v", label, err))
			return
		}
		var groups []cohortGroup
		var openCmp func(func(ipc.Summary, error))
		for _, f := range folders {
			rel, ok := strings.CutPrefix(f.ID, id+"/")
			switch {
			case !ok:
			case f.Kind == ipc.FolderGroup && path.Dir(rel) == "group":
				fid, name := f.ID, f.Name
				groups = append(groups, cohortGroup{name: path.Base(rel), open: func() { u.openRequest(ipc.JobRequest{OpenFolder: fid}, name, nil) }})
			case f.Kind == ipc.FolderComparison && rel == cohortview.CompareDir:
				fid, name := f.ID, f.Name
				openCmp = func(done func(ipc.Summary, error)) { u.openRequest(ipc.JobRequest{OpenFolder: fid}, name, done) }
			}
		}
		fyne.Do(func() {
			u.showCohort(r, path.Base(label), label, groups, openCmp)
			hideDownloads() // they were the previous result's
		})
		say("Opened " + label + ".")
	}
	u.openFolders = func() { go listFolders() }
	button.Call("addEventListener", "click", js.FuncOf(func(js.Value, []js.Value) any {
		go listFolders()
		return nil
	}))
	open.Call("addEventListener", "click", js.FuncOf(func(js.Value, []js.Value) any {
		id := list.Get("value").String()
		if id == "" {
			say("Choose a results folder first.")
			return nil
		}
		label := id
		if i := list.Get("selectedIndex").Int(); i >= 0 {
			label, _, _ = strings.Cut(list.Get("options").Index(i).Get("textContent").String(), " (")
		}
		go openChosen(id, label)
		return nil
	}))
}

// hideDownloads empties the page's download links (showDownloads) while no result is on show.
func hideDownloads() {
	if box := js.Global().Get("document").Call("getElementById", DownloadsID); !box.IsNull() {
		box.Set("textContent", "")
	}
}
