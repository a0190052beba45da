//go:build !js

package ipc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubscope/hubscope/ipc/ipctest"
)

// rawRequest sends text as one HTTP/1.1 request on a new connection and returns the status,
// the headers and the body of the answer. The request goes out byte for byte, so paths reach
// the server exactly as an attacker would write them.
func rawRequest(t *testing.T, network, addr, text string) (int, http.Header, string) {
	t.Helper()
	st, hd, body, err := ipctest.Raw(network, addr, text)
	if err != nil {
		t.Fatal(err)
	}
	return st, hd, body
}

// hostileServer serves a scripted Service with a small upload limit and the given write
// timeout (0 = the default).
func hostileServer(t *testing.T, writeTimeout time.Duration) (*Server, *scripted) {
	svc := newScripted()
	srv := startServer(t, svc, ServerOptions{Web: "127.0.0.1:0", Handler: HandlerOptions{
		MaxUploadBytes: 64 << 10,
		WriteTimeout:   writeTimeout,
	}})
	return srv, svc
}

func TestHostileAuthOriginHost(t *testing.T) {
	srv, svc := hostileServer(t, 0)
	addr := srv.WebAddr()
	_, port, _ := net.SplitHostPort(addr)
	tok := "Authorization: Bearer " + srv.Token() + "\r\n"
	req := func(method, path, host, extra string) string {
		return method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra + "Connection: close\r\n\r\n"
	}
	local := "127.0.0.1:" + port
	cases := []struct {
		name, text string
		status     int
	}{
		{"no token", req("GET", "/v1/info", local, ""), 401},
		{"wrong token", req("GET", "/v1/info", local, "Authorization: Bearer "+strings.Repeat("0", 64)+"\r\n"), 401},
		{"token prefix", req("GET", "/v1/info", local, "Authorization: Bearer "+srv.Token()[:63]+"\r\n"), 401},
		{"basic auth", req("GET", "/v1/info", local, "Authorization: Basic "+srv.Token()+"\r\n"), 401},
		{"token in the API's query", req("GET", "/v1/info?token="+srv.Token(), local, ""), 401},
		{"foreign origin", req("GET", "/v1/info", local, tok+"Origin: http://evil.example\r\n"), 403},
		{"own host, other port", req("GET", "/v1/info", local, tok+"Origin: http://127.0.0.1:1\r\n"), 403},
		{"https origin", req("GET", "/v1/info", local, tok+"Origin: https://127.0.0.1:"+port+"\r\n"), 403},
		{"null origin", req("GET", "/v1/info", local, tok+"Origin: null\r\n"), 403},
		{"foreign origin preflight", req("OPTIONS", "/v1/jobs", local, "Origin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\n"), 403},
		{"rebinding host", req("GET", "/v1/info", "evil.example:"+port, tok), 403},
		{"rebinding host without port", req("GET", "/v1/info", "evil.example", tok), 403},
		{"host 127.0.0.1.evil.example", req("GET", "/v1/info", "127.0.0.1.evil.example:"+port, tok), 403},
		{"private address host", req("GET", "/v1/info", "192.168.1.10:"+port, tok), 403},
		{"right token", req("GET", "/v1/info", local, tok), 200},
		{"localhost", req("GET", "/v1/info", "localhost:"+port, tok), 200},
		{"ipv6 loopback", req("GET", "/v1/info", "[::1]:"+port, tok), 200},
		{"own origin", req("GET", "/v1/info", local, tok+"Origin: http://localhost:"+port+"\r\n"), 200},
		{"own origin preflight", req("OPTIONS", "/v1/jobs", local, "Origin: http://127.0.0.1:"+port+"\r\nAccess-Control-Request-Method: POST\r\n"), 204},
		{"page with the token in the URL", req("GET", "/?token="+srv.Token(), local, ""), 303},
		{"API with the cookie from another site", req("GET", "/v1/info", local, "Cookie: hubscope_token_"+port+"="+srv.Token()+"\r\nSec-Fetch-Site: same-site\r\n"), 403},
		{"API with the cookie, posted from another origin", req("POST", "/v1/jobs", local, "Cookie: hubscope_token_"+port+"="+srv.Token()+"\r\nOrigin: http://127.0.0.1:1\r\nContent-Length: 2\r\n") + "{}", 403},
		{"API with the cookie", req("GET", "/v1/info", local, "Cookie: hubscope_token_"+port+"="+srv.Token()+"\r\nSec-Fetch-Site: same-origin\r\n"), 200},
		{"page without a token", req("GET", "/", local, ""), 401},
		{"unknown endpoint", req("GET", "/v1/nope", local, tok), 404},
		{"wrong method", req("DELETE", "/v1/jobs/j1", local, tok), 405},
	}
	for _, c := range cases {
		st, hd, body := rawRequest(t, "tcp", addr, c.text)
		if st != c.status {
			t.Errorf("%s: status %d (%s), want %d", c.name, st, strings.TrimSpace(body), c.status)
			continue
		}
		if st >= 400 && !strings.Contains(body, `"code"`) {
			t.Errorf("%s: error body %q is not an ErrorBody", c.name, body)
		}
		if st == 401 && hd.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", c.name)
		}
		if strings.Contains(c.name, "own origin") {
			if o := hd.Get("Access-Control-Allow-Origin"); !strings.HasPrefix(o, "http://") || !strings.HasSuffix(o, ":"+port) {
				t.Errorf("%s: Access-Control-Allow-Origin %q", c.name, o)
			}
			if c.status == 204 && !strings.Contains(hd.Get("Access-Control-Allow-Headers"), "Authorization") {
				t.Errorf("%s: preflight allows headers %q", c.name, hd.Get("Access-Control-Allow-Headers"))
			}
		} else if o := hd.Get("Access-Control-Allow-Origin"); o != "" {
			t.Errorf("%s: CORS header %q for a request that is not from the helper's origin", c.name, o)
		}
		if c.name == "page with the token in the URL" && (!strings.Contains(hd.Get("Set-Cookie"), "HttpOnly") ||
			!strings.Contains(hd.Get("Set-Cookie"), "SameSite=Strict") || hd.Get("Location") != "/") {
			t.Errorf("%s: cookie %q, Location %q", c.name, hd.Get("Set-Cookie"), hd.Get("Location"))
		}
	}
	// The refused requests reached nothing: Info ran once per accepted request only.
	n := 0
	for _, c := range svc.Calls() {
		if c == "web Info" {
			n++
		}
	}
	if n != 5 {
		t.Errorf("the Service answered Info %d times, want 5 (the accepted requests): %q", n, svc.Calls())
	}
}

// Over the Unix socket no Origin is accepted: no browser can connect to it, so an Origin
// means something forwards browser traffic.
func TestHostileUnixOrigin(t *testing.T) {
	srv, svc := hostileServer(t, 0)
	st, _, _ := rawRequest(t, "unix", srv.SocketPath(), "GET /v1/info HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n\r\n")
	if st != 403 {
		t.Fatalf("status %d, want 403", st)
	}
	st, _, _ = rawRequest(t, "unix", srv.SocketPath(), "GET /v1/info HTTP/1.1\r\nHost: evil.example\r\n\r\n")
	if st != 403 {
		t.Fatalf("foreign host over the socket: status %d, want 403", st)
	}
	if svc.called("Info") {
		t.Fatalf("the Service was called: %q", svc.Calls())
	}
}

func TestHostileBodies(t *testing.T) {
	srv, svc := hostileServer(t, 0)
	addr := srv.WebAddr()
	post := func(path, ctype, body string, chunked bool) string {
		h := "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + srv.Token() + "\r\nConnection: close\r\n"
		if ctype != "" {
			h += "Content-Type: " + ctype + "\r\n"
		}
		if !chunked {
			return h + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		}
		return h + "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	}
	big := `{"name":"` + strings.Repeat("a", 2<<20) + `","settings":{}}`
	cases := []struct {
		name, text string
		status     int
	}{
		{"oversize JSON", post("/v1/jobs", "application/json", big, false), 413},
		{"oversize JSON, chunked", post("/v1/jobs", "application/json", big, true), 413},
		{"malformed JSON", post("/v1/jobs", "application/json", `{"scan_upload": "u1",`, false), 400},
		{"not JSON at all", post("/v1/jobs", "application/json", `scan=/etc/passwd`, false), 400},
		{"unknown field", post("/v1/jobs", "application/json", `{"scan_upload":"u1","settings":{},"run_as":"root"}`, false), 400},
		{"unknown nested field", post("/v1/jobs", "application/json", `{"scan_upload":"u1","settings":{"shell":"rm"}}`, false), 400},
		{"two values", post("/v1/jobs", "application/json", `{"scan_upload":"u1","settings":{}} {}`, false), 400},
		{"empty body", post("/v1/jobs", "application/json", ``, false), 400},
		{"form body", post("/v1/jobs", "application/x-www-form-urlencoded", `{"scan_upload":"u1","settings":{}}`, false), 415},
		{"text/plain body", post("/v1/jobs", "text/plain", `{"scan_upload":"u1","settings":{}}`, false), 415},
		{"scan path over TCP", post("/v1/jobs", "application/json", `{"scan":"/etc/shadow","settings":{}}`, false), 403},
		{"mask path over TCP", post("/v1/jobs", "application/json", `{"scan_upload":"u1","mask":"../../m.nii","settings":{}}`, false), 403},
		{"upload ID with a path", post("/v1/jobs", "application/json", `{"scan_upload":"../u1","settings":{}}`, false), 400},
		{"cancel with a body", post("/v1/jobs/j1/cancel", "", `x`, false), 400},
		{"upload without a name", post("/v1/uploads", "", "abc", false), 400},
		{"upload named with a path", post("/v1/uploads?name=../../etc/cron.d/x", "", "abc", false), 400},
		{"upload named with a newline", post("/v1/uploads?name=a%0Ab.nii", "", "abc", false), 400},
		{"oversize upload, announced", post("/v1/uploads?name=big.nii", "", strings.Repeat("z", 100<<10), false), 413},
	}
	for _, c := range cases {
		st, _, body := rawRequest(t, "tcp", addr, c.text)
		if st != c.status {
			t.Errorf("%s: status %d (%s), want %d", c.name, st, strings.TrimSpace(body), c.status)
		}
		if !strings.Contains(body, `"message"`) {
			t.Errorf("%s: body %q has no message", c.name, body)
		}
	}
	if svc.called("Submit") || svc.called("Upload") || svc.called("Cancel") {
		t.Fatalf("a refused request reached the Service: %q", svc.Calls())
	}

	// A chunked upload announces no size: the Service streams it and the limit cuts it off.
	st, _, body := rawRequest(t, "tcp", addr, post("/v1/uploads?name=big.nii", "", strings.Repeat("z", 200<<10), true))
	if st != 413 {
		t.Fatalf("oversize chunked upload: status %d (%s), want 413", st, body)
	}
	if up := svc.Uploaded(); len(up) != 1 || up[0] > 64<<10 {
		t.Fatalf("the Service read %v bytes of an upload limited to %d", up, 64<<10)
	}
	// At the limit exactly, the upload is accepted.
	st, _, body = rawRequest(t, "tcp", addr, post("/v1/uploads?name=ok.nii", "", strings.Repeat("z", 64<<10), true))
	if st != 201 || !strings.Contains(body, `"size":65536`) {
		t.Fatalf("upload at the limit: status %d (%s), want 201", st, body)
	}
}

func TestHostileTraversal(t *testing.T) {
	srv, svc := hostileServer(t, 0)
	paths := []string{
		"../x", "%2e%2e/x", "%2E%2E/x", "..%2fx", "..%2Fmetrics.json", "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
		"/etc/passwd", "%2fetc%2fpasswd", "a/../../b", "a/%2e%2e/%2e%2e/b", "./metrics.json", "a//b",
		`..\x`, `a\..\..\b`, "..%5cx", "a%5cb", "x%00y", "..",
		// The whole job: traversal in the ID.
	}
	for _, p := range paths {
		for _, tr := range []struct{ network, addr, auth string }{
			{"tcp", srv.WebAddr(), "Authorization: Bearer " + srv.Token() + "\r\n"},
			{"unix", srv.SocketPath(), ""},
		} {
			text := "GET /v1/jobs/j2/files/" + p + " HTTP/1.1\r\nHost: localhost\r\n" + tr.auth + "Connection: close\r\n\r\n"
			st, _, body := rawRequest(t, tr.network, tr.addr, text)
			if st != 400 && st != 404 {
				t.Errorf("%s files/%s: status %d (%s), want 400 or 404", tr.network, p, st, strings.TrimSpace(body))
			}
		}
	}
	for _, p := range []string{"/v1/jobs/..%2fj2/files/metrics.json", "/v1/jobs/%2e%2e/summary", "/v1/jobs/j2/volumes/..%2fdegree"} {
		st, _, _ := rawRequest(t, "unix", srv.SocketPath(), "GET "+p+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
		if st != 400 && st != 404 {
			t.Errorf("%s: status %d, want 400 or 404", p, st)
		}
	}
	for _, c := range svc.Calls() {
		if strings.Contains(c, "OpenFile") || strings.Contains(c, "Summary") || strings.Contains(c, "Volume") {
			t.Errorf("the Service was called with a traversal: %q", c)
		}
	}
	// A well-formed name still works, so the refusals above are not a broken route.
	st, _, body := rawRequest(t, "unix", srv.SocketPath(), "GET /v1/jobs/j2/files/maps/degree.nii.gz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	if st != 200 || body != svc.files["maps/degree.nii.gz"] {
		t.Fatalf("plain download: status %d, body %q", st, body)
	}
}

// settleGoroutines waits until the goroutine count is back at (or below) want, and fails with
// a dump of the goroutines if it never is.
func settleGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines, want at most %d:\n%s", n, want, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor polls cond until it holds, failing the test after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that opens an event stream and never reads is dropped once its socket buffers are
// full and a write has waited WriteTimeout; the stream's producer and handler goroutines end
// while the client still holds its end open.
func TestHostileSlowReader(t *testing.T) {
	srv, svc := hostileServer(t, 300*time.Millisecond)
	before := ipctest.StableGoroutines()
	for _, tr := range []struct{ network, addr, auth string }{
		{"tcp", srv.WebAddr(), "Authorization: Bearer " + srv.Token() + "\r\n"},
		{"unix", srv.SocketPath(), ""},
	} {
		c, err := net.Dial(tr.network, tr.addr)
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(4 << 10)
		}
		io.WriteString(c, "GET /v1/jobs/flood/events HTTP/1.1\r\nHost: localhost\r\n"+tr.auth+"\r\n")
		waitFor(t, "the flood stream to start", func() bool { return svc.producers.Load() == 1 })
		// Never read: the server must give up on its own.
		waitFor(t, tr.network+" slow reader to be dropped", func() bool { return svc.producers.Load() == 0 })
		// The server has closed its end although the client still holds its own open.
		waitFor(t, tr.network+" slow reader's connection to be closed by the server", func() bool { _, idle := srv.Idle(); return idle })
		c.Close()
	}
	settleGoroutines(t, before)
}

func TestConcurrentInfoNoLeak(t *testing.T) {
	srv, svc := hostileServer(t, 0)
	before := ipctest.StableGoroutines()
	for _, c := range []*Client{NewWebClient(srv.WebURL(), srv.Token()), NewUnixClient(srv.SocketPath())} {
		var wg sync.WaitGroup
		errs := make(chan error, 1000)
		for k := 0; k < 1000; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := c.Info(context.Background()); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("%s: %v", c.Addr(), err)
		}
		c.Close()
	}
	if n := len(svc.Calls()); n != 2000 {
		t.Fatalf("the Service answered %d Info calls, want 2000", n)
	}
	settleGoroutines(t, before)
}

func TestConcurrentStreamsNoLeak(t *testing.T) {
	srv, svc := hostileServer(t, 0)
	// "hold" streams one event and stays open, as a running job's stream does.
	svc.mu.Lock()
	svc.jobs["hold"] = Job{ID: "hold", State: JobRunning}
	svc.script["hold"] = []Event{{Seq: 0, Job: svc.jobs["hold"]}}
	svc.mu.Unlock()
	before := ipctest.StableGoroutines()
	for _, c := range []*Client{NewWebClient(srv.WebURL(), srv.Token()), NewUnixClient(srv.SocketPath())} {
		// 100 streams that run to their terminal event…
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []string
		for k := 0; k < 100; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var last Event
				err := c.Follow(context.Background(), "j1", func(ev Event) { last = ev })
				if err != nil || last.Job.State != JobDone {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%v, last %+v", err, last.Job))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(bad) > 0 {
			t.Fatalf("%s: %d streams failed, e.g. %s", c.Addr(), len(bad), bad[0])
		}
		// …and 100 that the clients abandon mid-stream.
		ctx, cancel := context.WithCancel(context.Background())
		for k := 0; k < 100; k++ {
			ch, err := c.Events(ctx, "hold")
			if err != nil {
				t.Fatal(err)
			}
			if ev := <-ch; ev.Job.ID != "hold" {
				t.Fatalf("first event %+v", ev)
			}
		}
		if n := svc.producers.Load(); n != 100 {
			t.Fatalf("%d producers running, want 100", n)
		}
		cancel()
		waitFor(t, "the abandoned streams' producers to end", func() bool { return svc.producers.Load() == 0 })
		c.Close()
	}
	settleGoroutines(t, before)
}

// Logs name the route, never the scan names or paths in queries and bodies, unless Verbose.
func TestLogsKeepNamesOut(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		var logs logBuffer
		svc := newScripted()
		srv := startServer(t, svc, ServerOptions{Web: "127.0.0.1:0", Handler: HandlerOptions{Logger: slogTo(&logs), Verbose: verbose}})
		c := NewUnixClient(srv.SocketPath())
		if _, err := c.Upload(context.Background(), "patient-doe.nii.gz", bytes.NewReader([]byte("x"))); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Submit(context.Background(), JobRequest{Scan: "/data/patient-doe/bold.nii.gz"}); err != nil {
			t.Fatal(err)
		}
		c.Close()
		// The web token never reaches the log, not even a verbose one.
		if srv.WebURL() != "" {
			if resp, err := http.Get(srv.TokenURL()); err == nil {
				resp.Body.Close()
			}
		}
		out := logs.String()
		if strings.Contains(out, srv.Token()) || verbose != strings.Contains(out, "token=REDACTED") {
			t.Errorf("verbose=%v: the token (or its redaction) in the log:\n%s", verbose, out)
		}
		for _, want := range []string{`route="POST /v1/uploads"`, "status=201", `route="POST /v1/jobs"`, "status=202", "duration="} {
			if !strings.Contains(out, want) {
				t.Errorf("verbose=%v: log lacks %s:\n%s", verbose, want, out)
			}
		}
		if got := strings.Contains(out, "patient-doe"); got != verbose {
			t.Errorf("verbose=%v: scan name in the log = %v:\n%s", verbose, got, out)
		}
	}
}
