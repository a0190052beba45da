//go:build js

package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"fyne.io/fyne/v2"

	"github.com/hubscope/hubscope/app/jobs"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/settings"
)

// uploadChunk is how much of a file one read takes from the browser (File.slice).
const uploadChunk = 4 << 20

// UploadPart is the size of the parts the browser app sends a file in (ipc.Client's
// UploadPartSize): small enough that a part and its copy in the browser are a few MiB of the
// page's memory, large enough that a gigabyte is a few hundred requests on loopback (well
// under a second of overhead), and smaller than the test phantom, so web-smoke sends several.
const UploadPart = 2 << 20

// Element IDs of the upload controls, for the page's users and for scripts/web-smoke.sh.
const (
	UploadPanelID     = "hubscope-upload-panel"
	UploadInputID     = "hubscope-upload"
	UploadStatusID    = "hubscope-upload-status"
	UploadMaskID      = "hubscope-upload-mask"
	UploadConfoundsID = "hubscope-upload-confounds"
	UploadPendingID   = "hubscope-upload-pending"
	UploadLimitsID    = "hubscope-browser-limits"
)

// BrowserLimits says, on the page, what the browser app cannot do that the desktop app does.
const BrowserLimits = "In the browser HubScope cannot watch a folder, open a results folder by its path (it opens those the helper lists), or open a DICOM folder (upload it as a .zip); " +
	"files are saved as downloads (no save dialog): the links below, once a result is shown, and the Export tab."

// Roles of the files sent beside a scan.
const (
	roleMask      = "mask"
	roleConfounds = "confounds"
)

// EnableBrowserUpload gives the browser app its way to bring scans in, since a web page
// cannot read paths and Fyne's drop and file dialogs do not work there: an HTML file input
// (over the window's bottom-left corner) and the whole page as a drop zone. Each scan chosen
// or dropped is uploaded to the helper and analysed at once with the current settings and an
// automatic mask; the job list follows it as it does on the desktop. Call it once, on the UI
// goroutine, before the window is shown.
func (u *UI) EnableBrowserUpload() {
	doc := js.Global().Get("document")
	body := doc.Get("body")
	if body.IsNull() {
		// index.html starts the wasm from <body onload>, so only another page gets here.
		u.Status.SetText("This page has no <body> to put the upload control in; open the page the helper serves (its token URL).")
		return
	}
	panel := doc.Call("createElement", "div")
	panel.Set("id", UploadPanelID)
	panel.Set("style", "position:fixed; left:10px; bottom:10px; z-index:10; max-width:420px;"+
		" padding:8px 10px; border-radius:6px; font:13px sans-serif; color:#222;"+
		" background:rgba(255,255,255,0.92); box-shadow:0 1px 4px rgba(0,0,0,0.35)")
	label := doc.Call("createElement", "label")
	label.Set("htmlFor", UploadInputID)
	label.Set("textContent", "Upload scan…")
	label.Set("style", "display:inline-block; cursor:pointer; padding:4px 10px; margin-right:8px;"+
		" border-radius:4px; color:#fff; background:#1f6feb; font-weight:bold")
	input := doc.Call("createElement", "input")
	input.Set("type", "file")
	input.Set("id", UploadInputID)
	input.Set("multiple", true)
	// .gz as well: some browsers match only the last extension. A .zip of DICOM goes to the
	// helper, which converts it with dcm2niix (docs/dicom.md).
	input.Set("accept", ".nii,.nii.gz,.gz,.zip")
	input.Set("style", "display:none")
	note := doc.Call("createElement", "span")
	note.Set("id", UploadStatusID)
	note.Set("textContent", "or drop .nii / .nii.gz files, or a .zip of DICOM, anywhere on this page.")
	panel.Call("appendChild", label)
	panel.Call("appendChild", input)
	panel.Call("appendChild", note)
	up := &browserUpload{u: u, note: note}
	// A mask and a confounds table go beside the scan: each is uploaded when chosen and sent
	// with the next scan (JobRequest's mask_upload and confounds_upload).
	extras := doc.Call("createElement", "div")
	extras.Set("style", "margin-top:6px")
	for _, c := range []struct{ id, text, accept, role string }{
		{UploadMaskID, "Mask…", ".nii,.nii.gz,.gz", roleMask},
		{UploadConfoundsID, "Confounds…", ".tsv", roleConfounds},
	} {
		l := doc.Call("createElement", "label")
		l.Set("htmlFor", c.id)
		l.Set("textContent", c.text)
		l.Set("style", "display:inline-block; cursor:pointer; padding:2px 8px; margin-right:6px; border-radius:4px; color:#1f6feb; border:1px solid #1f6feb")
		in := doc.Call("createElement", "input")
		in.Set("type", "file")
		in.Set("id", c.id)
		in.Set("accept", c.accept)
		in.Set("style", "display:none")
		role := c.role
		in.Call("addEventListener", "change", js.FuncOf(func(this js.Value, _ []js.Value) any {
			files := fileList(this.Get("files"))
			this.Set("value", "")
			if len(files) == 1 {
				go up.sendCompanion(files[0], role)
			}
			return nil
		}))
		extras.Call("appendChild", l)
		extras.Call("appendChild", in)
	}
	pending := doc.Call("createElement", "span")
	pending.Set("id", UploadPendingID)
	pending.Set("textContent", "(optional, for the next scan)")
	extras.Call("appendChild", pending)
	up.pending = pending
	panel.Call("appendChild", extras)
	u.addFolderControls(doc, panel)
	// What the desktop app does that a web page cannot (Fyne's web driver has no file
	// dialogs, and a page sees no paths).
	limits := doc.Call("createElement", "div")
	limits.Set("id", UploadLimitsID)
	limits.Set("style", "margin-top:6px; font-size:11px; color:#555")
	limits.Set("textContent", BrowserLimits)
	panel.Call("appendChild", limits)
	body.Call("appendChild", panel)

	// "Open scan…" opens the same chooser: the tap is a user gesture, which browsers require
	// before a script may open a file chooser.
	u.openScan = func() { input.Call("click") }
	// The callbacks live as long as the page; they are never released.
	input.Call("addEventListener", "change", js.FuncOf(func(this js.Value, _ []js.Value) any {
		files := fileList(this.Get("files"))
		// Choosing the same file again must fire "change" again.
		this.Set("value", "")
		go up.send(files)
		return nil
	}))
	highlight := func(on bool) {
		if on {
			panel.Get("style").Set("outline", "3px dashed #1f6feb")
		} else {
			panel.Get("style").Set("outline", "none")
		}
	}
	// Without preventDefault on dragover the browser does not offer the page as a drop
	// target, and without it on drop it opens the file instead of handing it over.
	doc.Call("addEventListener", "dragover", js.FuncOf(func(_ js.Value, args []js.Value) any {
		ev := args[0]
		ev.Call("preventDefault")
		if dt := ev.Get("dataTransfer"); !dt.IsNull() && !dt.IsUndefined() {
			dt.Set("dropEffect", "copy")
		}
		highlight(true)
		return nil
	}))
	doc.Call("addEventListener", "dragleave", js.FuncOf(func(js.Value, []js.Value) any {
		highlight(false)
		return nil
	}))
	doc.Call("addEventListener", "drop", js.FuncOf(func(_ js.Value, args []js.Value) any {
		ev := args[0]
		ev.Call("preventDefault")
		highlight(false)
		dt := ev.Get("dataTransfer")
		if dt.IsNull() || dt.IsUndefined() {
			return nil
		}
		go up.send(fileList(dt.Get("files")))
		return nil
	}))
	u.Status.SetText("Upload resting-state scans (.nii, .nii.gz, or DICOM as a .zip) with \"Upload scan…\" at the bottom left, or drop them on this page.")
}

// fileList copies a JS FileList (live, and emptied when the input is reset) into a slice.
func fileList(list js.Value) []js.Value {
	if list.IsNull() || list.IsUndefined() {
		return nil
	}
	files := make([]js.Value, list.Length())
	for i := range files {
		files[i] = list.Index(i)
	}
	return files
}

// browserUpload sends chosen and dropped files, one at a time. A file goes in parts (the
// client's UploadPartSize, set by cmd/hubscope's browser main): Go's fetch transport holds a
// whole request body in the wasm heap, so only a part of the file is in memory at once and a
// scan of any size the helper accepts (--max-upload) can be sent.
type browserUpload struct {
	u       *UI
	note    js.Value
	pending js.Value
	mu      sync.Mutex
	// The mask and confounds table uploaded for the next scan ("" = none), and their names.
	maskID, maskName, confoundsID, confoundsName string
}

// sendCompanion uploads a mask or a confounds table for the next scan.
func (b *browserUpload) sendCompanion(file js.Value, role string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	name := file.Get("name").String()
	size := int64(file.Get("size").Float())
	switch {
	case role == roleMask && !IsScan(name):
		b.say(fmt.Sprintf("%s is not a NIfTI mask (.nii or .nii.gz); it was not uploaded.", name))
		return
	case role == roleConfounds && !strings.EqualFold(filepath.Ext(name), ".tsv"):
		b.say(fmt.Sprintf("%s is not a confounds table (.tsv, as fMRIPrep writes it); it was not uploaded.", name))
		return
	}
	var svc ipc.Service
	fyne.DoAndWait(func() { svc = b.u.svc })
	if svc == nil {
		b.say(fmt.Sprintf("%s was not uploaded: the helper is not connected.", name))
		return
	}
	b.say(fmt.Sprintf("Uploading %s %s (%s)…", role, name, byteSize(size)))
	up, err := svc.Upload(b.u.ctx, name, &fileReader{file: file, name: name, size: size})
	if err != nil {
		b.say(fmt.Sprintf("Could not upload the %s %s: %v", role, name, err))
		return
	}
	if role == roleMask {
		b.maskID, b.maskName = up.ID, name
	} else {
		b.confoundsID, b.confoundsName = up.ID, name
	}
	b.showPending()
	b.say(fmt.Sprintf("The %s %s is ready: it goes with the next scan you upload.", role, name))
}

// showPending says beside the buttons which mask and table the next scan gets.
func (b *browserUpload) showPending() {
	var parts []string
	if b.maskName != "" {
		parts = append(parts, "mask "+b.maskName)
	}
	if b.confoundsName != "" {
		parts = append(parts, "confounds "+b.confoundsName)
	}
	text := "(optional, for the next scan)"
	if len(parts) > 0 {
		text = "next scan: " + strings.Join(parts, ", ")
	}
	fyne.Do(func() { b.pending.Set("textContent", text) })
}

// say shows msg in the window's status line and beside the upload button.
func (b *browserUpload) say(msg string) {
	fyne.Do(func() {
		b.u.Status.SetText(msg)
		b.note.Set("textContent", msg)
	})
}

// send uploads and submits files in order. It runs on its own goroutine: a JS event callback
// must not block, and the upload waits on the browser.
func (b *browserUpload) send(files []js.Value) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range files {
		b.sendOne(f)
	}
}

// sendOne uploads one File and submits it; every outcome is said in words naming the file.
func (b *browserUpload) sendOne(file js.Value) {
	name := file.Get("name").String()
	size := int64(file.Get("size").Float())
	if !IsScan(name) && !strings.EqualFold(filepath.Ext(name), ".zip") {
		b.say(fmt.Sprintf("%s is not a NIfTI scan (.nii or .nii.gz) or a .zip of DICOM; it was not uploaded.", name))
		return
	}
	// What the UI goroutine owns is read there.
	var (
		svc    ipc.Service
		info   ipc.Info
		list   *jobs.List
		set    settings.Settings
		setErr error
	)
	fyne.DoAndWait(func() {
		svc, info, list = b.u.svc, b.u.info, b.u.Jobs
		set, setErr = b.u.Settings.Settings()
	})
	switch {
	case svc == nil || list == nil:
		b.say(fmt.Sprintf("%s was not uploaded: the helper is not connected (see the top of the window, then try again).", name))
		return
	case info.MaxUploadBytes > 0 && size > info.MaxUploadBytes:
		have, limit := byteSize(size), byteSize(info.MaxUploadBytes)
		if have == limit {
			// Rounded alike, "3.3 MiB is more than 3.3 MiB" would read as a mistake.
			have, limit = fmt.Sprintf("%d bytes", size), fmt.Sprintf("%d bytes", info.MaxUploadBytes)
		}
		b.say(fmt.Sprintf("%s is %s, more than this helper accepts (%s). Start the helper with a larger --max-upload, or analyse the scan in the desktop app.",
			name, have, limit))
		return
	case setErr != nil:
		b.say(fmt.Sprintf("%s was not uploaded: %v", name, setErr))
		return
	}
	ctx := b.u.ctx
	b.say(fmt.Sprintf("Uploading %s (%s)…", name, byteSize(size)))
	start := time.Now()
	up, err := svc.Upload(ctx, name, &fileReader{file: file, name: name, size: size})
	if err != nil {
		var e *ipc.Error
		if errors.As(err, &e) && e.Code == ipc.CodeTooLarge {
			b.say(fmt.Sprintf("%s is too large for this helper: %s. Start the helper with a larger --max-upload, or analyse the scan in the desktop app.", name, e.Message))
			return
		}
		b.say(fmt.Sprintf("Could not upload %s: %v", name, err))
		return
	}
	b.say(fmt.Sprintf("Uploaded %s (%s in %.0f s); starting the analysis…", name, byteSize(up.Size), time.Since(start).Seconds()))
	req := ipc.JobRequest{ScanUpload: up.ID, MaskUpload: b.maskID, ConfoundsUpload: b.confoundsID, Name: name, Settings: &set}
	var parts []string
	if b.maskName != "" {
		parts = append(parts, "the mask "+b.maskName)
	}
	if b.confoundsName != "" {
		parts = append(parts, "the confounds "+b.confoundsName)
	}
	with := ""
	if len(parts) > 0 {
		with = " with " + strings.Join(parts, " and ")
	}
	// An upload is used by one job: the next scan gets the mask and table chosen after this.
	b.maskID, b.maskName, b.confoundsID, b.confoundsName = "", "", "", ""
	b.showPending()
	if _, err := list.Submit(ctx, req); err != nil {
		b.say(fmt.Sprintf("Could not start %s%s: %v", name, with, err))
		return
	}
	b.say(fmt.Sprintf("Started %s%s; follow it under Analyses.", name, with))
}

// byteSize writes n in binary units, as --max-upload takes them.
func byteSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	x, i := float64(n), 0
	for x >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", x, units[i])
}

// fileReader reads a browser File a slice at a time (File.slice(…).arrayBuffer()), so the
// page never holds a second whole copy in JS memory. Its Stat gives ipc.Client.Upload the
// size to send ahead.
type fileReader struct {
	file js.Value
	name string
	size int64
	off  int64
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), int64(uploadChunk), r.size-r.off)
	if n == 0 {
		return 0, nil
	}
	buf, err := await(r.file.Call("slice", float64(r.off), float64(r.off+n)).Call("arrayBuffer"))
	if err != nil {
		return 0, fmt.Errorf("reading %s at byte %d: %w", r.name, r.off, err)
	}
	got := js.CopyBytesToGo(p[:n], js.Global().Get("Uint8Array").New(buf))
	if got == 0 {
		// The file shrank since it was chosen.
		return 0, fmt.Errorf("reading %s at byte %d: the file ended early (it changed after it was chosen)", r.name, r.off)
	}
	r.off += int64(got)
	return got, nil
}

func (r *fileReader) Stat() (fs.FileInfo, error) { return fileInfo{r}, nil }

// fileInfo describes the File as a regular file of its size.
type fileInfo struct{ r *fileReader }

func (i fileInfo) Name() string      { return i.r.name }
func (i fileInfo) Size() int64       { return i.r.size }
func (i fileInfo) Mode() fs.FileMode { return 0o444 }
func (i fileInfo) ModTime() time.Time {
	return time.UnixMilli(int64(i.r.file.Get("lastModified").Float()))
}
func (i fileInfo) IsDir() bool { return false }
func (i fileInfo) Sys() any    { return nil }

// await blocks the calling goroutine (never a JS callback's) until promise settles.
func await(promise js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	ok := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- result{v: args[0]}
		return nil
	})
	fail := js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := "the browser refused"
		if len(args) > 0 && !args[0].IsUndefined() && !args[0].IsNull() {
			msg = args[0].Call("toString").String()
		}
		ch <- result{err: errors.New(msg)}
		return nil
	})
	defer ok.Release()
	defer fail.Release()
	promise.Call("then", ok, fail)
	r := <-ch
	return r.v, r.err
}
