//go:build js

package app

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/url"
	"path"
	"syscall/js"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/ipc"
)

// Element ID of the page's download links (in the upload panel), for the page's users and for
// scripts/web-smoke.sh: one link per download of the result on show.
const (
	DownloadsID       = "hubscope-downloads"
	DownloadBundleID  = "hubscope-download-bundle"
	DownloadReportID  = "hubscope-download-report"
	DownloadMetricsID = "hubscope-download-metrics"
)

// saveFile is a variable on every platform (nil where there is a save dialog), so that
// results.go's test of it is not always true here (go vet).
var saveFile = saveDownload

// saveDownload hands what the app drew or wrote (a view as PNG, the HTML or PDF report) to the
// browser as a download, since Fyne's web driver has no save dialog: the bytes become a Blob
// and a link to it with a download name is clicked, so the browser saves it where it saves
// downloads.
func saveDownload(name string, write func(io.Writer) error) (string, error) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return "", err
	}
	arr := js.Global().Get("Uint8Array").New(b.Len())
	js.CopyBytesToJS(arr, b.Bytes())
	typ := mime.TypeByExtension(path.Ext(name))
	if typ == "" {
		typ = "application/octet-stream"
	}
	opts := js.Global().Get("Object").New()
	opts.Set("type", typ)
	blob := js.Global().Get("Blob").New(js.Global().Get("Array").New(arr), opts)
	urlAPI := js.Global().Get("URL")
	href := urlAPI.Call("createObjectURL", blob)
	doc := js.Global().Get("document")
	a := doc.Call("createElement", "a")
	a.Set("href", href)
	a.Set("download", name)
	a.Set("style", "display:none")
	doc.Get("body").Call("appendChild", a)
	a.Call("click")
	a.Call("remove")
	// The browser has taken the Blob's bytes once the click returns; a minute later the URL
	// goes, so a slow browser still reads it.
	js.Global().Call("setTimeout", js.FuncOf(func(js.Value, []js.Value) any {
		urlAPI.Call("revokeObjectURL", href)
		return nil
	}), 60000)
	return fmt.Sprintf("Downloaded %s (%d KB) to the browser's downloads.", name, (b.Len()+1023)/1024), nil
}

// downloads are the browser's links to the helper's downloads of the result on show: the
// whole results folder as a .zip and the PDF report (ipc's download routes, authorised by the
// page's cookie). Opening one is a navigation of the page's own origin, so the browser sends
// the cookie and saves the answer as a file.
func (r *Result) downloads() fyne.CanvasObject {
	id := r.Summary.Job.ID
	link := func(text, p string) *widget.Hyperlink {
		u, _ := url.Parse(p) // relative: the page's origin
		return widget.NewHyperlink(text, u)
	}
	note := widget.NewLabel("In the browser, files come as downloads (the browser's downloads folder): the whole results folder as one .zip, or the PDF report built by the helper. The buttons above download what the page shows.")
	note.Wrapping = fyne.TextWrapWord
	showDownloads(id, r.Summary.Job.Name)
	return container.NewVBox(
		widget.NewLabelWithStyle("Download", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		note, container.NewHBox(link("All results (.zip)", ipc.DownloadBundlePath(id)), link("PDF report", ipc.DownloadReportPath(id)),
			link("metrics.json", ipc.DownloadFilePath(id, "metrics.json"))))
}

// showDownloads puts the links of job id's downloads in the page's upload panel (plain HTML
// links, which every browser lets the user follow and save), replacing those of the job shown
// before.
func showDownloads(id, name string) {
	doc := js.Global().Get("document")
	box := doc.Call("getElementById", DownloadsID)
	if box.IsNull() {
		panel := doc.Call("getElementById", UploadPanelID)
		if panel.IsNull() {
			return
		}
		box = doc.Call("createElement", "div")
		box.Set("id", DownloadsID)
		box.Set("style", "margin-top:6px")
		panel.Call("appendChild", box)
	}
	box.Set("textContent", "Download "+name+": ")
	for _, l := range []struct{ id, text, href string }{
		{DownloadBundleID, "all results (.zip)", ipc.DownloadBundlePath(id)},
		{DownloadReportID, "PDF report", ipc.DownloadReportPath(id)},
		{DownloadMetricsID, "metrics.json", ipc.DownloadFilePath(id, "metrics.json")},
	} {
		a := doc.Call("createElement", "a")
		a.Set("id", l.id)
		a.Set("href", l.href)
		a.Set("download", "")
		a.Set("textContent", l.text)
		a.Set("style", "margin-right:8px; color:#1f6feb")
		box.Call("appendChild", a)
	}
}
