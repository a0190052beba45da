//go:build !js

package ipc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubscope/hubscope/ipc/ipctest"
)

// uploadErrors is the scripted Service with a record of the error each Upload's body ended
// with, so a test can see that the Service was told the body failed.
type uploadErrors struct {
	*scripted
	mu   sync.Mutex
	errs []error
}

func (s *uploadErrors) Upload(ctx context.Context, name string, body io.Reader) (Upload, error) {
	_, err := io.Copy(io.Discard, body)
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
	if err != nil {
		return Upload{}, Errorf(CodeBadRequest, "upload %s: the body ended early: %v", name, err)
	}
	return Upload{ID: "u1", Name: name}, nil
}

func (s *uploadErrors) last(t *testing.T) error {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) == 0 {
		t.Fatal("the Service saw no upload")
	}
	return s.errs[len(s.errs)-1]
}

// trickle opens a raw upload of declared bytes on the Unix socket and writes chunk every
// interval until the server answers; it returns the answer's status and error body.
func trickle(t *testing.T, srv *Server, declared int, chunk []byte, interval time.Duration) (int, ErrorBody) {
	t.Helper()
	c, err := net.Dial("unix", srv.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	head := "POST /v1/uploads?name=slow.nii HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: " + strconv.Itoa(declared) + "\r\n\r\n"
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		sent := 0
		for sent+len(chunk) <= declared {
			if _, err := c.Write(chunk); err != nil {
				return
			}
			sent += len(chunk)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	defer func() { close(stop); <-done }()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to the trickled upload: %v", err)
	}
	defer resp.Body.Close()
	var eb ErrorBody
	if resp.StatusCode/100 != 2 {
		if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil || eb.Error == nil {
			t.Fatalf("status %d without an error body (%v)", resp.StatusCode, err)
		}
	}
	return resp.StatusCode, eb
}

// A sender that trickles bytes (each well within ReadTimeout) is cut off once the upload falls
// behind MinUploadRate after its grace; one that keeps up the rate and a plain fast upload are
// not; the Service sees the cut-off body fail; nothing is left running.
func TestUploadMinimumRate(t *testing.T) {
	svc := &uploadErrors{scripted: newScripted()}
	srv := startServer(t, svc, ServerOptions{Handler: HandlerOptions{
		ReadTimeout:   5 * time.Second,
		MinUploadRate: 1000,
		UploadGrace:   300 * time.Millisecond,
	}})
	before := ipctest.StableGoroutines()

	// 1 byte every 50 ms is 20 B/s: cut off soon after the 300 ms grace, not after the
	// hour its declared size would take at that rate, nor at a ReadTimeout.
	start := time.Now()
	st, eb := trickle(t, srv, 100_000, []byte{0}, 50*time.Millisecond)
	if st != http.StatusRequestTimeout || eb.Error.Code != CodeBadRequest || !strings.Contains(eb.Error.Message, "too slow") || !strings.Contains(eb.Error.Message, "1000 bytes/s") {
		t.Fatalf("trickled upload: status %d, %+v; want 408 bad_request naming the minimum rate", st, eb.Error)
	}
	if el := time.Since(start); el > 4*time.Second {
		t.Fatalf("the trickled upload was cut off after %v, want about the 300 ms grace", el)
	}
	if err := svc.last(t); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the Service's body ended with %v, want a deadline error", err)
	}

	// 200 bytes every 50 ms is 4000 B/s, above the minimum: the deadline moves out as the
	// bytes arrive, so this upload outlives the grace by far and still passes.
	start = time.Now()
	if st, eb := trickle(t, srv, 4000, bytes.Repeat([]byte{1}, 200), 50*time.Millisecond); st != http.StatusCreated {
		t.Fatalf("steady upload above the minimum rate: status %d, %+v", st, eb.Error)
	}
	if el := time.Since(start); el < 600*time.Millisecond {
		t.Fatalf("the steady upload took %v; it should have outlived the 300 ms grace", el)
	}
	if err := svc.last(t); err != nil {
		t.Fatalf("steady upload: the Service's body ended with %v", err)
	}

	// A plain upload at full speed.
	c := NewUnixClient(srv.SocketPath())
	defer c.Close()
	if _, err := c.Upload(context.Background(), "fast.nii", bytes.NewReader(make([]byte, 1<<20))); err != nil {
		t.Fatalf("fast upload: %v", err)
	}
	if err := svc.last(t); err != nil {
		t.Fatalf("fast upload: the Service's body ended with %v", err)
	}
	c.Close()
	settleGoroutines(t, before)
}

// A sender that stops sending is dropped after ReadTimeout with a 408 that says so.
func TestUploadStalled(t *testing.T) {
	svc := &uploadErrors{scripted: newScripted()}
	srv := startServer(t, svc, ServerOptions{Handler: HandlerOptions{ReadTimeout: 200 * time.Millisecond}})
	before := ipctest.StableGoroutines()
	// One chunk, then nothing for far longer than ReadTimeout (the ticker's interval).
	st, eb := trickle(t, srv, 100, bytes.Repeat([]byte{1}, 60), time.Hour)
	if st != http.StatusRequestTimeout || !strings.Contains(eb.Error.Message, "stalled") {
		t.Fatalf("stalled upload: status %d, %+v; want 408 naming the stall", st, eb.Error)
	}
	if err := svc.last(t); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the Service's body ended with %v, want a deadline error", err)
	}
	settleGoroutines(t, before)
}

func TestUploadDeadlineArithmetic(t *testing.T) {
	start := time.Unix(1000, 0)
	b := &uploadBody{rate: 1 << 20, start: start, grace: 3 * time.Minute}
	for _, c := range []struct {
		n    int64
		want time.Duration
	}{
		{0, 3 * time.Minute},
		{1 << 19, 3*time.Minute + 500*time.Millisecond},
		{8 << 30, 3*time.Minute + 8192*time.Second},
		{1<<20 + 1, 3*time.Minute + time.Second + time.Second/(1<<20)},
		// Far past what a Duration holds: clamped, not wrapped round to the past.
		{1<<62 - 1, 3*time.Minute + (1<<32)*time.Second},
	} {
		b.n = c.n
		if got := b.total().Sub(start); got != c.want {
			t.Errorf("%d bytes: deadline after %v, want %v", c.n, got, c.want)
		}
	}
}
