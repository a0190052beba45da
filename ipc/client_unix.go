//go:build !js

package ipc

import (
	"context"
	"net"
	"net/http"
	"time"
)

// NewUnixClient returns a client of the helper listening on the Unix socket socketPath. It
// does not connect until the first call; Connect also starts the helper when none answers.
func NewUnixClient(socketPath string) *Client {
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", socketPath)
		},
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}
	// The host names nothing (the socket does) but must pass the helper's loopback check.
	return &Client{base: "http://localhost", addr: socketPath, hc: &http.Client{Transport: tr}}
}
