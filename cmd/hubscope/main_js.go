//go:build js

package main

import (
	"context"
	"net/url"
	"syscall/js"

	"fyne.io/fyne/v2"

	"github.com/hubscope/hubscope/app"
	"github.com/hubscope/hubscope/app/jobs"
	"github.com/hubscope/hubscope/ipc"
)

// main connects to the helper that served this page, at the page's origin. The helper
// exchanged the token of its printed address for an HttpOnly cookie when the page was first
// opened and loaded the page again without it; the browser sends that cookie with the app's
// requests (same origin), so the app never sees the token. Scans come in through the page's
// upload control and drop zone (app.UI.EnableBrowserUpload): a web page cannot hand the helper
// a path.
func main() {
	run(config{
		connect: func(context.Context) (ipc.Service, error) {
			href := js.Global().Get("location").Get("href").String()
			u, err := url.Parse(href)
			if err != nil {
				return nil, err
			}
			c := ipc.NewWebClient(u.Scheme+"://"+u.Host, "")
			// Scans go in parts: the fetch transport cannot stream one request's body.
			c.UploadPartSize = app.UploadPart
			// The page's font has no ≥, −, →…: every text the helper sends is spelled in
			// ASCII at this one place (the desktop falls back on the system's fonts).
			return jobs.PlainService(c), nil
		},
		started: func(u *app.UI, _ fyne.Window) { u.EnableBrowserUpload() },
	})
}
