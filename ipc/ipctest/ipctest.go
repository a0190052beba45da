// Package ipctest holds what the protocol's tests and the daemon's share to play a hostile
// or broken client: a raw HTTP request written on a socket as it stands, its answer read
// back, and a goroutine count to check that nothing the server started is left behind.
package ipctest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"time"
)

// Raw writes text (a whole HTTP/1.1 request, malformed or not) on a new connection to addr
// and reads the answer: its status, headers and body. The request is written while the
// answer is read: a server that refuses an oversize body answers and closes before the
// client has sent it all, and the client's write then ends in a reset — the answer is what a
// test checks. The connection has 10 s to open and 30 s for the whole exchange.
func Raw(network, addr, text string) (int, http.Header, string, error) {
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		return 0, nil, "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c, text)
		written <- err
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		return 0, nil, "", fmt.Errorf("reading the answer to %q: %w (writing it: %v)", text, err, <-written)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}

// ReadStatus reads one answer from c and returns its status, reading its body to the end.
func ReadStatus(c net.Conn) (int, error) {
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// StableGoroutines returns the goroutine count once it has stopped changing (goroutines a
// test just started, such as a server's accept loops, are under way).
func StableGoroutines() int {
	n, same := runtime.NumGoroutine(), 0
	for same < 5 {
		time.Sleep(10 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}
