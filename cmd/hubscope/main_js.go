//go:build js

package main

import (
	"context"
	"errors"
	"net/url"
	"syscall/js"

	"github.com/hubscope/hubscope/ipc"
)

// main connects to the helper that served this page: its origin, with the token from the
// page's address (?token=…), as the helper printed it when started with --web.
func main() {
	run(config{connect: func(context.Context) (ipc.Service, error) {
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
	}})
}
