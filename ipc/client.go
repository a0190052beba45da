package ipc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrUnreachable is wrapped by the errors a Client returns when no helper answered (nothing
// listens on the socket, the connection broke, the helper crashed): errors.Is(err,
// ErrUnreachable) tells "start or wait for the helper" apart from the helper's own answers,
// which come back as *Error.
var ErrUnreachable = errors.New("helper not reachable")

type unreachableError struct {
	addr string
	err  error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("helper not reachable at %s: %v", e.addr, e.err)
}
func (e *unreachableError) Unwrap() []error { return []error{ErrUnreachable, e.err} }

// Client is the app's side of the protocol: it implements Service over the Unix socket
// (NewUnixClient, Connect) or the web transport (NewWebClient, also in WebAssembly).
type Client struct {
	base  string // scheme and authority, no trailing slash
	addr  string // what to name in errors: the socket path or the base URL
	token string
	hc    *http.Client
	// relaunch, when set (Connect), starts the helper again after it went away.
	relaunch func(context.Context) error

	// UploadPartSize, when > 0, makes Upload send a body of known size as an upload in parts
	// of at most this many bytes (parts.go): the browser app's, whose fetch transport holds a
	// whole request body in memory.
	UploadPartSize int64

	// ReconnectWithin bounds how long Follow keeps trying to reach a helper that went away
	// (with relaunches when the client came from Connect); 0 = 30 s.
	ReconnectWithin time.Duration
}

// NewWebClient returns a client of the web transport at baseURL (http://127.0.0.1:PORT, as
// in the token URL) that authenticates with token as a bearer token; with token "" it sends
// none, for the browser app, whose requests carry the cookie the page's token URL was
// exchanged for.
func NewWebClient(baseURL, token string) *Client {
	base := strings.TrimRight(baseURL, "/")
	return &Client{
		base:  base,
		addr:  base,
		token: token,
		hc: &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     30 * time.Second,
		}},
	}
}

// Close drops the client's idle connections (so the helper sees no client once the app is
// done with it). The client stays usable.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// Addr is where the client talks to: the socket path or the base URL.
func (c *Client) Addr() string { return c.addr }

var _ Service = (*Client)(nil)

// endpoint builds the URL of an endpoint from its unescaped path segments.
func (c *Client) endpoint(q url.Values, segs ...string) string {
	var b strings.Builder
	b.WriteString(c.base)
	b.WriteString(Prefix)
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	if len(q) > 0 {
		b.WriteByte('?')
		b.WriteString(q.Encode())
	}
	return b.String()
}

// do sends a request and returns the response of a 2xx status; any other status comes back
// as *Error with the helper's code and message.
func (c *Client) do(ctx context.Context, method, u string, body io.Reader, ctype string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("ipc client: %w", err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", method, strings.TrimPrefix(u, c.base), ctx.Err())
		}
		return nil, &unreachableError{addr: c.addr, err: err}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, responseError(resp)
}

// responseError turns an error response into *Error, keeping the status and the code.
func responseError(resp *http.Response) *Error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error != nil && eb.Error.Code != "" {
		eb.Error.Status = resp.StatusCode
		return eb.Error
	}
	code := CodeInternal
	for c, st := range codeStatus {
		if st == resp.StatusCode {
			code = c
		}
	}
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = resp.Status
	}
	return &Error{Status: resp.StatusCode, Code: code, Message: fmt.Sprintf("helper answered %s: %s", resp.Status, msg)}
}

func (c *Client) getJSON(ctx context.Context, u string, out any) error {
	resp, err := c.do(ctx, http.MethodGet, u, nil, "")
	if err != nil {
		return err
	}
	return decodeResponse(resp, out)
}

func (c *Client) postJSON(ctx context.Context, u string, in, out any) error {
	var body io.Reader
	ctype := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("ipc client: encoding the request: %w", err)
		}
		body, ctype = bytes.NewReader(b), "application/json"
	}
	resp, err := c.do(ctx, http.MethodPost, u, body, ctype)
	if err != nil {
		return err
	}
	return decodeResponse(resp, out)
}

func decodeResponse(resp *http.Response, out any) error {
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("ipc client: reading the answer to %s %s: %w", resp.Request.Method, resp.Request.URL.Path, err)
	}
	return nil
}

func (c *Client) Info(ctx context.Context) (Info, error) {
	var v Info
	return v, c.getJSON(ctx, c.endpoint(nil, "info"), &v)
}

// Upload streams body to the helper. When body is a file (or a bytes/strings reader) its
// size is sent ahead, so an upload over the limit is refused before it is sent.
func (c *Client) Upload(ctx context.Context, name string, body io.Reader) (Upload, error) {
	var v Upload
	if err := ValidSegment("upload name", name); err != nil {
		return v, Errorf(CodeBadRequest, "%v", err)
	}
	if c.UploadPartSize > 0 {
		if st, ok := body.(interface{ Stat() (fs.FileInfo, error) }); ok {
			if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
				return c.uploadInParts(ctx, name, body, fi.Size(), c.UploadPartSize)
			}
		}
	}
	u := c.endpoint(url.Values{"name": {name}}, "uploads")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
	if err != nil {
		return v, fmt.Errorf("ipc client: %w", err)
	}
	if st, ok := body.(interface{ Stat() (fs.FileInfo, error) }); ok && req.ContentLength <= 0 {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			req.ContentLength = fi.Size()
			if fi.Size() == 0 {
				req.Body = http.NoBody
			}
		}
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return v, fmt.Errorf("uploading %s: %w", name, ctx.Err())
		}
		return v, &unreachableError{addr: c.addr, err: err}
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return v, responseError(resp)
	}
	return v, decodeResponse(resp, &v)
}

func (c *Client) Submit(ctx context.Context, req JobRequest) (Job, error) {
	var v Job
	return v, c.postJSON(ctx, c.endpoint(nil, "jobs"), req, &v)
}

func (c *Client) Jobs(ctx context.Context) ([]Job, error) {
	var v []Job
	return v, c.getJSON(ctx, c.endpoint(nil, "jobs"), &v)
}

func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var v Job
	return v, c.getJSON(ctx, c.endpoint(nil, "jobs", id), &v)
}

func (c *Client) Cancel(ctx context.Context, id string) (Job, error) {
	var v Job
	return v, c.postJSON(ctx, c.endpoint(nil, "jobs", id, "cancel"), nil, &v)
}

func (c *Client) Summary(ctx context.Context, id string) (Summary, error) {
	var v Summary
	return v, c.getJSON(ctx, c.endpoint(nil, "jobs", id, "summary"), &v)
}

func (c *Client) getVolume(ctx context.Context, u string) (*Volume, error) {
	resp, err := c.do(ctx, http.MethodGet, u, nil, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != VolumeContentType {
		return nil, fmt.Errorf("ipc client: %s answered %q, not a volume", resp.Request.URL.Path, mt)
	}
	return ReadVolume(resp.Body)
}

func (c *Client) Volume(ctx context.Context, id, name string) (*Volume, error) {
	return c.getVolume(ctx, c.endpoint(nil, "jobs", id, "volumes", name))
}

func (c *Client) SeedMap(ctx context.Context, id string, voxel [3]int) (*Volume, error) {
	return c.getVolume(ctx, c.endpoint(url.Values{"voxel": {FormatVoxel(voxel)}}, "jobs", id, "seed"))
}

func (c *Client) Series(ctx context.Context, id string, voxel [3]int) (Series, error) {
	var v Series
	return v, c.getJSON(ctx, c.endpoint(url.Values{"voxel": {FormatVoxel(voxel)}}, "jobs", id, "series"), &v)
}

func (c *Client) Files(ctx context.Context, id string) ([]FileInfo, error) {
	var v []FileInfo
	return v, c.getJSON(ctx, c.endpoint(nil, "jobs", id, "files"), &v)
}

// OpenFile downloads one bundle file; FileInfo.Size is -1 when the helper did not send it.
func (c *Client) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, FileInfo, error) {
	if err := ValidBundleName(name); err != nil {
		return nil, FileInfo{}, Errorf(CodeBadRequest, "%v", err)
	}
	segs := append([]string{"jobs", id, "files"}, strings.Split(name, "/")...)
	resp, err := c.do(ctx, http.MethodGet, c.endpoint(nil, segs...), nil, "")
	if err != nil {
		return nil, FileInfo{}, err
	}
	return resp.Body, FileInfo{Name: name, Size: resp.ContentLength}, nil
}

// Events streams the job's events. The channel closes after the terminal event, when ctx
// ends, or when the connection breaks (Follow tells these apart and reconnects). A reader
// slower than the stream misses intermediate progress events (each replaces the one still
// waiting); events with a message and the terminal event are never dropped.
func (c *Client) Events(ctx context.Context, id string) (<-chan Event, error) {
	resp, err := c.do(ctx, http.MethodGet, c.endpoint(nil, "jobs", id, "events"), nil, "")
	if err != nil {
		return nil, err
	}
	raw := make(chan Event)
	done := make(chan struct{})
	out := make(chan Event, 1)
	// The reader decodes lines; the forwarder queues them for the caller, coalescing
	// progress so that a slow caller never stalls the connection.
	go func() {
		defer close(raw)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			var ev Event
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				return
			}
			select {
			case raw <- ev:
			case <-done:
				return
			}
			if ev.Job.State.Terminal() {
				return
			}
		}
	}()
	go func() {
		defer close(out)
		defer resp.Body.Close()
		defer close(done)
		var queue []Event
		in := raw
		for in != nil || len(queue) > 0 {
			var send chan Event
			var next Event
			if len(queue) > 0 {
				send, next = out, queue[0]
			}
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-in:
				if !ok {
					in = nil
					continue
				}
				if n := len(queue); n > 0 && queue[n-1].Message == "" && !queue[n-1].Job.State.Terminal() {
					queue[n-1] = ev // a newer state supersedes progress nobody has read yet
				} else {
					queue = append(queue, ev)
				}
			case send <- next:
				queue = queue[1:]
			}
		}
	}()
	return out, nil
}

// Follow calls fn with each event of the job until its terminal event, and returns nil then.
// When the connection drops (the helper crashed or restarts) it reconnects with backoff,
// starting the helper again when the client came from Connect, and resubscribes: the
// server's first event is the job's current state, so nothing terminal is missed, and a job
// the restarted helper marks interrupted ends the follow with that event. It gives up after
// ReconnectWithin without a helper, and returns the helper's error when it no longer knows
// the job.
func (c *Client) Follow(ctx context.Context, id string, fn func(Event)) error {
	const minBackoff, maxBackoff = 50 * time.Millisecond, 2 * time.Second
	within := c.ReconnectWithin
	if within <= 0 {
		within = 30 * time.Second
	}
	backoff := minBackoff
	var lostSince time.Time
	var lastErr error
	for {
		ch, err := c.Events(ctx, id)
		if err == nil {
			lostSince, backoff = time.Time{}, minBackoff
			for ev := range ch {
				fn(ev)
				if ev.Job.State.Terminal() {
					return nil
				}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			lastErr = fmt.Errorf("the event stream of job %s broke off", id)
		} else {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !errors.Is(err, ErrUnreachable) && !IsCode(err, CodeUnavailable) {
				return err
			}
			lastErr = err
			if c.relaunch != nil {
				// A helper that answers again (started by us or by another app) is worth
				// trying at once; one that cannot be started is waited for.
				if rerr := c.relaunch(ctx); rerr != nil {
					lastErr = rerr
				} else {
					backoff = minBackoff
				}
			}
		}
		if lostSince.IsZero() {
			lostSince = time.Now()
		} else if time.Since(lostSince) > within {
			return fmt.Errorf("following job %s: no helper for %v: %w", id, within, lastErr)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}
