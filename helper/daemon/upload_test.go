package daemon

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubscope/hubscope/ipc"
)

// An upload cut off by the server for being too slow leaves nothing in uploads/: the daemon
// sees its body fail after the NIfTI header has passed and the partial file was written.
func TestSlowUploadLeavesNoPartial(t *testing.T) {
	scanPath, _ := phantom(t, 12)
	scan, err := os.ReadFile(scanPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(scan) <= probeBytes+1000 {
		t.Fatalf("the phantom has %d bytes; the test needs more than the %d-byte probe", len(scan), probeBytes)
	}
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))
	socket := filepath.Join(t.TempDir(), "run", "helper.sock")
	srv, err := ipc.NewServer(d, ipc.ServerOptions{Socket: socket, Handler: ipc.HandlerOptions{
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		MinUploadRate: 1 << 20,
		UploadGrace:   300 * time.Millisecond,
	}})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
	}()

	c, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	io.WriteString(c, "POST /v1/uploads?name=scan.nii.gz HTTP/1.1\r\nHost: localhost\r\nContent-Length: "+strconv.Itoa(len(scan))+"\r\n\r\n")
	// The header and more at full speed, then a byte every 50 ms.
	if _, err := c.Write(scan[:probeBytes+100]); err != nil {
		t.Fatal(err)
	}
	partials := func() []string {
		m, _ := filepath.Glob(filepath.Join(d.uploads, "*.partial"))
		return m
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(partials()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no partial upload appeared in uploads/")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := probeBytes + 100; i < len(scan); i++ {
			if _, err := c.Write(scan[i : i+1]); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "too slow") {
		t.Fatalf("slow upload: %d %s, want 408 too slow", resp.StatusCode, b)
	}
	entries, _ := os.ReadDir(d.uploads)
	for _, e := range entries {
		t.Errorf("uploads/ still holds %s after the upload was cut off", e.Name())
	}
}
