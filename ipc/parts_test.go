//go:build !js

package ipc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hashingUploads is the scripted Service whose Upload keeps the SHA-256 of what it read, or
// the error the stream ended with; with failAfter > 0 it stops reading after that many bytes
// and refuses the upload, as the daemon does with a body that holds no NIfTI image.
type hashingUploads struct {
	*scripted
	failAfter atomic.Int64
	mu        sync.Mutex
	sums      [][32]byte
	errs      []error
}

func (s *hashingUploads) Upload(ctx context.Context, name string, body io.Reader) (Upload, error) {
	if n := s.failAfter.Load(); n > 0 {
		io.CopyN(io.Discard, body, n)
		return Upload{}, Errorf(CodeBadRequest, "upload %s: not a valid NIfTI image", name)
	}
	h := sha256.New()
	n, err := io.Copy(h, body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
	if err != nil {
		return Upload{}, Errorf(CodeBadRequest, "upload %s: %v", name, err)
	}
	s.sums = append(s.sums, [32]byte(h.Sum(nil)))
	return Upload{ID: "u1", Name: name, Size: n}, nil
}

// sizedReader is a body whose size is known ahead (as the browser's File is).
type sizedReader struct {
	*bytes.Reader
	size int64
}

func (r sizedReader) Stat() (fs.FileInfo, error) { return sizedInfo(r.size), nil }

type sizedInfo int64

func (i sizedInfo) Name() string       { return "scan.nii" }
func (i sizedInfo) Size() int64        { return int64(i) }
func (i sizedInfo) Mode() fs.FileMode  { return 0o444 }
func (i sizedInfo) ModTime() time.Time { return time.Time{} }
func (i sizedInfo) IsDir() bool        { return false }
func (i sizedInfo) Sys() any           { return nil }

// TestUploadInParts: a client with UploadPartSize sends a body in parts, and the Service
// reads the parts joined, byte for byte, as one stream; sizes that are and are not a
// multiple of the part size, and an empty file.
func TestUploadInParts(t *testing.T) {
	svc := &hashingUploads{scripted: newScripted()}
	srv := startServer(t, svc, ServerOptions{})
	c := NewUnixClient(srv.SocketPath())
	defer c.Close()
	c.UploadPartSize = 1000
	for _, n := range []int{10_500, 3000, 1, 0} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + i/1000)
		}
		up, err := c.Upload(context.Background(), "scan.nii", sizedReader{bytes.NewReader(data), int64(n)})
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		svc.mu.Lock()
		got := svc.sums[len(svc.sums)-1]
		svc.mu.Unlock()
		if up.Size != int64(n) || got != sha256.Sum256(data) {
			t.Errorf("%d bytes: the Service read %d bytes, same content %v", n, up.Size, got == sha256.Sum256(data))
		}
	}
}

// TestUploadPartsRefused: a size over the limit, a part out of order, a part past the
// declared size, an upload whose content the Service refuses, and one whose next part does
// not come in time are each refused in words, and what was dropped cannot be continued.
func TestUploadPartsRefused(t *testing.T) {
	svc := &hashingUploads{scripted: newScripted()}
	srv := startServer(t, svc, ServerOptions{Handler: HandlerOptions{MaxUploadBytes: 1 << 20, UploadGrace: 300 * time.Millisecond}})
	hc := &http.Client{Transport: &http.Transport{DialContext: unixDialer(srv.SocketPath())}}
	post := func(path string, body []byte) (int, string) {
		t.Helper()
		resp, err := hc.Post("http://localhost"+Prefix+path, "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	open := func(size int) string {
		t.Helper()
		st, body := post(fmt.Sprintf("/uploads/parts?name=scan.nii&size=%d", size), nil)
		if st != http.StatusCreated {
			t.Fatalf("open: %d %s", st, body)
		}
		i := strings.Index(body, `"id":"`)
		return body[i+6 : i+6+32]
	}
	if st, body := post("/uploads/parts?name=scan.nii&size=2000000", nil); st != http.StatusRequestEntityTooLarge {
		t.Errorf("a size over the limit: %d %s", st, body)
	}
	if st, body := post("/uploads/parts?name=scan.nii&size=-1", nil); st != http.StatusBadRequest {
		t.Errorf("a negative size: %d %s", st, body)
	}

	id := open(100)
	if st, body := post("/uploads/parts/"+id+"?offset=0", make([]byte, 40)); st != http.StatusAccepted || !strings.Contains(body, `"received":40`) {
		t.Errorf("first part: %d %s", st, body)
	}
	if st, body := post("/uploads/parts/"+id+"?offset=0", make([]byte, 40)); st != http.StatusConflict || !strings.Contains(body, "40 bytes were received") {
		t.Errorf("a part sent again: %d %s", st, body)
	}
	if st, body := post("/uploads/parts/"+id+"?offset=40", make([]byte, 61)); st != http.StatusRequestEntityTooLarge || !strings.Contains(body, "past the declared size") {
		t.Errorf("a part past the size: %d %s", st, body)
	}
	if st, body := post("/uploads/parts/"+id+"?offset=40", make([]byte, 60)); st != http.StatusNotFound {
		t.Errorf("a part of a dropped upload: %d %s", st, body)
	}
	svc.mu.Lock()
	err := svc.errs[len(svc.errs)-1]
	svc.mu.Unlock()
	if err == nil || !strings.Contains(err.Error(), "declared size") {
		t.Errorf("the Service's stream of the dropped upload ended with %v", err)
	}

	id = open(100)
	post("/uploads/parts/"+id+"?offset=0", make([]byte, 50))
	time.Sleep(time.Second) // past the 300 ms grace
	if st, body := post("/uploads/parts/"+id+"?offset=50", make([]byte, 50)); st != http.StatusNotFound || !strings.Contains(body, "waited too long") {
		t.Errorf("a part after the wait: %d %s", st, body)
	}

	svc.failAfter.Store(10)
	id = open(100)
	st, body := post("/uploads/parts/"+id+"?offset=0", make([]byte, 50))
	if st == http.StatusAccepted {
		// The Service may stop reading after this part was taken into the pipe's buffer: then
		// the next part carries its answer.
		st, body = post("/uploads/parts/"+id+"?offset=50", make([]byte, 50))
	}
	if st != http.StatusBadRequest || !strings.Contains(body, "not a valid NIfTI image") {
		t.Errorf("content the Service refuses: %d %s", st, body)
	}
}

// unixDialer dials the helper's Unix socket whatever the URL's host.
func unixDialer(path string) func(ctx context.Context, _, _ string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
}
