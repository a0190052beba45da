package ipc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Uploads in parts. Go's fetch transport, which the browser app's client runs on, reads a
// request body whole into the wasm heap and hands the browser a second copy, so one request
// cannot carry a scan of gigabytes. The browser app therefore sends a scan as a series of
// requests, each a slice of the file read from the browser's File, and the handler joins them
// into one stream that the Service's Upload reads as it would one request's body: the scan's
// size is declared first and checked against the limit, each part must start where the last
// ended and the parts may not go past the size, and an upload whose next part does not come
// in time is dropped (the Service sees its stream fail and keeps nothing).
//
//	POST /uploads/parts?name=F&size=N   → UploadParts (201)
//	POST /uploads/parts/{id}?offset=O   the bytes from O (at most MaxUploadPart) →
//	                                    UploadProgress (202), or the Upload (201) with the last
const (
	// MaxUploadPart bounds one part's body.
	MaxUploadPart = 16 << 20
	// maxOpenUploads bounds the uploads in parts open at once.
	maxOpenUploads = 8
)

// UploadParts opens an upload in parts.
type UploadParts struct {
	ID       string `json:"id"`
	PartSize int64  `json:"part_bytes"` // the largest part the helper takes
}

// UploadProgress answers a part that is not the last.
type UploadProgress struct {
	Received int64 `json:"received"`
}

// partUpload is one upload in parts: the pipe its parts are written to, read by the Service's
// Upload on its own goroutine.
type partUpload struct {
	send     sync.Mutex // one part at a time
	name     string
	size     int64
	received int64
	pw       *io.PipeWriter
	done     chan struct{} // closed when Upload returned
	up       Upload
	err      error
	idle     *time.Timer // drops the upload when no part comes in time
	cancel   context.CancelFunc
}

// parts is the handler's table of open uploads in parts.
type parts struct {
	mu   sync.Mutex
	open map[string]*partUpload
}

func (h *handler) openParts(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	size, err := strconv.ParseInt(r.URL.Query().Get("size"), 10, 64)
	if err != nil || size < 0 {
		return nil, Errorf(CodeBadRequest, "upload %s: size=%q is not a byte count", in.name, r.URL.Query().Get("size"))
	}
	if size > h.opts.MaxUploadBytes {
		return nil, Errorf(CodeTooLarge, "upload of %d bytes exceeds the limit of %d", size, h.opts.MaxUploadBytes)
	}
	if err := h.discardBody(w, r); err != nil {
		return nil, err
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	pr, pw := io.Pipe()
	// The upload outlives this request: its context keeps the request's values (the
	// transport) but not its end.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	p := &partUpload{name: in.name, size: size, pw: pw, done: make(chan struct{}), cancel: cancel}
	h.parts.mu.Lock()
	if h.parts.open == nil {
		h.parts.open = map[string]*partUpload{}
	}
	if len(h.parts.open) >= maxOpenUploads {
		h.parts.mu.Unlock()
		cancel()
		return nil, Errorf(CodeConflict, "%d uploads are open already; finish one first", maxOpenUploads)
	}
	h.parts.open[id] = p
	h.parts.mu.Unlock()
	p.idle = time.AfterFunc(h.opts.UploadGrace, func() { h.dropParts(id, p, "no part came for "+h.opts.UploadGrace.String()) })
	go func() {
		defer close(p.done)
		p.up, p.err = h.svc.Upload(ctx, in.name, io.LimitReader(pr, size))
		// An Upload that stopped reading (the content is no scan) fails the next part's write.
		pr.CloseWithError(errUploadEnded)
	}()
	return UploadParts{ID: id, PartSize: MaxUploadPart}, nil
}

var errUploadEnded = errors.New("the upload has ended")

// dropParts ends an upload in parts that will not complete: the Service's stream fails, and
// the upload is forgotten.
func (h *handler) dropParts(id string, p *partUpload, why string) {
	h.parts.mu.Lock()
	if h.parts.open[id] == p {
		delete(h.parts.open, id)
	}
	h.parts.mu.Unlock()
	p.pw.CloseWithError(fmt.Errorf("upload %s dropped: %s", p.name, why))
	p.idle.Stop()
	<-p.done
	p.cancel()
}

func (h *handler) uploadPart(w http.ResponseWriter, r *http.Request, in input) (any, error) {
	h.parts.mu.Lock()
	p := h.parts.open[in.id]
	h.parts.mu.Unlock()
	if p == nil {
		return nil, Errorf(CodeNotFound, "no open upload %q (it ended, or waited too long for its next part)", in.id)
	}
	if !p.send.TryLock() {
		return nil, Errorf(CodeConflict, "upload %s: another part is being sent", p.name)
	}
	defer p.send.Unlock()
	offset, err := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	switch {
	case err != nil:
		return nil, Errorf(CodeBadRequest, "upload %s: offset=%q is not a byte offset", p.name, r.URL.Query().Get("offset"))
	case offset != p.received:
		return nil, Errorf(CodeConflict, "upload %s: a part at byte %d, but %d bytes were received so far", p.name, offset, p.received)
	case r.ContentLength < 0:
		return nil, &Error{Status: http.StatusLengthRequired, Code: CodeBadRequest, Message: "a part must state its Content-Length"}
	case r.ContentLength > MaxUploadPart:
		return nil, Errorf(CodeTooLarge, "a part of %d bytes exceeds the limit of %d", r.ContentLength, MaxUploadPart)
	case p.received+r.ContentLength > p.size:
		h.dropParts(in.id, p, "more bytes than its declared size")
		return nil, Errorf(CodeTooLarge, "upload %s: a part up to byte %d goes past the declared size of %d bytes; the upload was dropped", p.name, p.received+r.ContentLength, p.size)
	}
	p.idle.Stop()
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(h.opts.ReadTimeout + time.Duration(r.ContentLength/max(h.opts.MinUploadRate, 1))*time.Second))
	n, err := io.Copy(p.pw, io.LimitReader(r.Body, r.ContentLength))
	p.received += n
	if err == nil && n < r.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		select {
		case <-p.done: // the Service stopped reading: its answer is the upload's
			h.dropParts(in.id, p, "it has ended")
			if p.err != nil {
				return nil, p.err
			}
			return nil, Errorf(CodeBadRequest, "upload %s: ended before its last part", p.name)
		default:
		}
		h.dropParts(in.id, p, "a part could not be read")
		return nil, Errorf(CodeBadRequest, "upload %s: reading a part: %v; the upload was dropped", p.name, err)
	}
	if p.received < p.size {
		p.idle.Reset(h.opts.UploadGrace)
		writeJSON(w, http.StatusAccepted, UploadProgress{Received: p.received})
		return nil, nil
	}
	p.pw.Close()
	<-p.done
	h.parts.mu.Lock()
	delete(h.parts.open, in.id)
	h.parts.mu.Unlock()
	p.cancel()
	if p.err != nil {
		return nil, p.err
	}
	writeJSON(w, http.StatusCreated, p.up)
	return nil, nil
}

// uploadInParts sends body (size bytes) as an upload in parts of at most partSize bytes.
func (c *Client) uploadInParts(ctx context.Context, name string, body io.Reader, size, partSize int64) (Upload, error) {
	var open UploadParts
	q := map[string][]string{"name": {name}, "size": {strconv.FormatInt(size, 10)}}
	if err := c.postJSON(ctx, c.endpoint(q, "uploads", "parts"), nil, &open); err != nil {
		return Upload{}, err
	}
	partSize = min(partSize, open.PartSize)
	if partSize <= 0 {
		return Upload{}, fmt.Errorf("uploading %s: the helper takes parts of %d bytes", name, open.PartSize)
	}
	buf := make([]byte, partSize)
	var off int64
	for {
		n, err := io.ReadFull(body, buf[:min(partSize, size-off)])
		if err != nil && n < int(min(partSize, size-off)) {
			return Upload{}, fmt.Errorf("uploading %s: reading byte %d: %w", name, off+int64(n), err)
		}
		u := c.endpoint(map[string][]string{"offset": {strconv.FormatInt(off, 10)}}, "uploads", "parts", open.ID)
		resp, err := c.do(ctx, http.MethodPost, u, bytes.NewReader(buf[:n]), "application/octet-stream")
		if err != nil {
			return Upload{}, err
		}
		off += int64(n)
		if resp.StatusCode == http.StatusCreated {
			var up Upload
			return up, decodeResponse(resp, &up)
		}
		resp.Body.Close()
		if off >= size {
			return Upload{}, fmt.Errorf("uploading %s: the helper did not answer the last part with the upload", name)
		}
	}
}
