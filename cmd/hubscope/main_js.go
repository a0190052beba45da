//go:build js

package main

import (
	"context"
	"errors"
	"net/url"
	"syscall/js"

	"fyne.io/fyne/v2"

	"github.com/hubscope/hubscope/app"
	"github.com/hubscope/hubscope/ipc"
)

// main connects to the helper that served this page: its origin, with the token from the
// page's address (?token=…), as the helper printed it when started with --web. Scans come in
// through the page's upload control and drop zone (app.UI.EnableBrowserUpload): a web page
// cannot hand the helper a path.
func main() {
	run(config{
		connect: func(context.Context) (ipc.Service, error) {
			href := js.Global().Get("location").Get("href").String()
			u, err := url.Parse(href)
			if err != nil {
				return nil, err
			}
			token := u.Query().Get("token")
			if token == "" {
				return nil, errors.New("this page's address has no ?token=…; open the address hubscope-helper serve --web printed")
			}
			return ipc.NewWebClient(u.Scheme+"://"+u.Host, token), nil
		},
		started: func(u *app.UI, _ fyne.Window) { u.EnableBrowserUpload() },
	})
}
