//go:build !js

package ipc

import (
	"context"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func TestSocketModes(t *testing.T) {
	srv := startServer(t, newScripted(), ServerOptions{})
	fi, err := os.Lstat(srv.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %s: mode %v, want a socket with 0600", srv.SocketPath(), fi.Mode())
	}
	di, err := os.Lstat(filepath.Dir(srv.SocketPath()))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory: mode %v, want 0700", di.Mode())
	}
}

func TestDefaultSocketPath(t *testing.T) {
	run := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", run)
	if got, want := DefaultSocketPath(), filepath.Join(run, "hubscope", "helper.sock"); got != want {
		t.Fatalf("DefaultSocketPath() = %s, want %s", got, want)
	}
	s, err := NewServer(newScripted(), ServerOptions{Handler: HandlerOptions{Logger: quietLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	di, err := os.Stat(filepath.Join(run, "hubscope"))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("runtime socket directory: %v, %v", di.Mode(), err)
	}
	s.Close()

	// Without a runtime directory: a per-user directory under the temporary directory,
	// which must be private and ours.
	tmp := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(tmp, "hubscope-"+strconv.Itoa(os.Getuid()))
	if got := DefaultSocketPath(); got != filepath.Join(dir, "helper.sock") {
		t.Fatalf("DefaultSocketPath() = %s, want it in %s", got, dir)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	if _, err := NewServer(newScripted(), ServerOptions{}); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Fatalf("a 0755 socket directory was accepted (err %v)", err)
	}
	os.Chmod(dir, 0o700)
	if os.Getuid() == 0 {
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := NewServer(newScripted(), ServerOptions{}); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Fatalf("a socket directory of another user was accepted (err %v)", err)
		}
		os.Chown(dir, 0, 0)
	}
	// A symbolic link where the directory should be (to a directory someone else made).
	os.Remove(dir)
	other := t.TempDir()
	os.Chmod(other, 0o700)
	if err := os.Symlink(other, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := NewServer(newScripted(), ServerOptions{}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("a symbolic link as the socket directory was accepted (err %v)", err)
	}
	os.Remove(dir)
	s, err = NewServer(newScripted(), ServerOptions{Handler: HandlerOptions{Logger: quietLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestSecondServerFails(t *testing.T) {
	srv := startServer(t, newScripted(), ServerOptions{})
	_, err := NewServer(newScripted(), ServerOptions{Socket: srv.SocketPath()})
	if err == nil || !strings.Contains(err.Error(), "a helper is already running at "+srv.SocketPath()) {
		t.Fatalf("second server on a live socket: %v", err)
	}
	// The first one still answers.
	c := NewUnixClient(srv.SocketPath())
	defer c.Close()
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}

	// A live socket of something that does not hold the lock is not replaced either.
	sock := filepath.Join(t.TempDir(), "s", "helper.sock")
	os.MkdirAll(filepath.Dir(sock), 0o700)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := NewServer(newScripted(), ServerOptions{Socket: sock}); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("server on a socket someone answers: %v", err)
	}
}

func TestStaleSocketReplaced(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s", "helper.sock")
	os.MkdirAll(filepath.Dir(sock), 0o700)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() // the socket file stays, as after a crash
	if _, err := os.Lstat(sock); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, newScripted(), ServerOptions{Socket: sock})
	c := NewUnixClient(srv.SocketPath())
	defer c.Close()
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}

	// A file that is not a socket is never removed.
	plain := filepath.Join(filepath.Dir(sock), "plain.sock")
	os.WriteFile(plain, []byte("keep"), 0o600)
	if _, err := NewServer(newScripted(), ServerOptions{Socket: plain}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("server over a plain file: %v", err)
	}
	if b, _ := os.ReadFile(plain); string(b) != "keep" {
		t.Fatalf("the plain file was touched: %q", b)
	}
}

func TestWebAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0", "[::]:0", "127.0.0.1"} {
		if s, err := NewServer(newScripted(), ServerOptions{NoSocket: true, Web: addr}); err == nil {
			s.Close()
			t.Errorf("web address %q was accepted", addr)
		}
	}
	srv := startServer(t, newScripted(), ServerOptions{NoSocket: true, Web: "localhost:0"})
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{64}$`).MatchString(srv.TokenURL()) {
		t.Fatalf("token URL %q", srv.TokenURL())
	}
	other := startServer(t, newScripted(), ServerOptions{NoSocket: true, Web: "127.0.0.1:0"})
	if other.Token() == srv.Token() {
		t.Fatal("two servers drew the same token")
	}
	// The token URL opens the page (a browser keeps the cookie and follows to the address
	// without the token); its token works on the API as a bearer token.
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(srv.TokenURL())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "helper") || resp.Request.URL.RawQuery != "" {
		t.Fatalf("token URL: %s %q, ended at %s", resp.Status, b, resp.Request.URL)
	}
	u, _ := http.NewRequest("GET", srv.TokenURL(), nil)
	c := NewWebClient(srv.WebURL(), u.URL.Query().Get("token"))
	defer c.Close()
	if info, err := c.Info(context.Background()); err != nil || info.Transport != "web" {
		t.Fatalf("info over the web: %+v, %v", info, err)
	}
}

func TestWebRoot(t *testing.T) {
	root := fstest.MapFS{
		"index.html": {Data: []byte("<html>hubscope</html>")},
		"app.wasm":   {Data: []byte("\x00asm")},
	}
	srv := startServer(t, newScripted(), ServerOptions{NoSocket: true, Web: "127.0.0.1:0", Handler: HandlerOptions{WebRoot: root}})
	get := func(path string, cookie *http.Cookie) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.WebURL()+path, nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	// The token URL is exchanged for the cookie and the page loaded again without the token.
	resp, _ := get("/?token="+srv.Token()+"&view=3d", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?view=3d" {
		t.Fatalf("token URL: %s, Location %q", resp.Status, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if strings.HasPrefix(c.Name, tokenCookie+"_") {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value != srv.Token() {
		t.Fatalf("cookie %+v", cookie)
	}
	if resp, body := get("/", cookie); resp.StatusCode != 200 || body != "<html>hubscope</html>" {
		t.Fatalf("page with the cookie: %s %q", resp.Status, body)
	}
	if resp, body := get("/app.wasm", cookie); resp.StatusCode != 200 || body != "\x00asm" {
		t.Fatalf("wasm with the cookie: %s %q", resp.Status, body)
	}
	if resp, _ := get("/app.wasm", nil); resp.StatusCode != 401 {
		t.Fatalf("wasm without a token: %s", resp.Status)
	}
	if resp, _ := get("/app.wasm", &http.Cookie{Name: cookie.Name, Value: "guess"}); resp.StatusCode != 401 {
		t.Fatalf("wasm with a wrong cookie: %s", resp.Status)
	}
	if resp, _ := get("/app.wasm", &http.Cookie{Name: tokenCookie + "_1", Value: srv.Token()}); resp.StatusCode != 401 {
		t.Fatalf("wasm with another port's cookie: %s", resp.Status)
	}
	// The cookie authorises the API for the page's own requests, and only those: a request
	// the browser marks as coming from another site (another port of this host is the same
	// site, so SameSite=Strict sends the cookie) is refused.
	api := func(cookie *http.Cookie, site string) int {
		req, _ := http.NewRequest("GET", srv.WebURL()+"/v1/info", nil)
		if cookie != nil {
			req.AddCookie(cookie)
		}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		cookie *http.Cookie
		site   string
		want   int
	}{{cookie, "same-origin", 200}, {cookie, "", 200}, {nil, "same-origin", 401}, {cookie, "same-site", 403}, {cookie, "cross-site", 403},
		{&http.Cookie{Name: cookie.Name, Value: "guess"}, "same-origin", 401}} {
		if got := api(c.cookie, c.site); got != c.want {
			t.Errorf("API with cookie %v, Sec-Fetch-Site %q: status %d, want %d", c.cookie != nil, c.site, got, c.want)
		}
	}
	c := NewWebClient(srv.WebURL(), "")
	defer c.Close()
	if _, err := c.Info(context.Background()); !IsCode(err, CodeUnauthorized) {
		t.Errorf("a web client without token or cookie: %v, want unauthorized", err)
	}
}

func TestIdle(t *testing.T) {
	srv := startServer(t, newScripted(), ServerOptions{})
	since0, idle := srv.Idle()
	if !idle {
		t.Fatal("a server nobody connected to is not idle")
	}
	c := NewUnixClient(srv.SocketPath())
	if _, err := c.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The client keeps its connection for the next request: the server is not idle.
	if _, idle := srv.Idle(); idle {
		t.Fatal("the server is idle while a client holds a connection")
	}
	c.Close()
	waitFor(t, "the server to become idle", func() bool {
		since, idle := srv.Idle()
		return idle && since.After(since0)
	})
}

// Follow keeps following across a helper restart: the stream breaks, the client reconnects
// to the new helper on the same socket and ends with the terminal event it reports.
func TestFollowSurvivesRestart(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s", "helper.sock")
	svc1 := newScripted()
	svc1.script["j1"] = svc1.script["j1"][:3] // running, then the helper stops
	srv1 := startServer(t, svc1, ServerOptions{Socket: sock})

	c := NewUnixClient(sock)
	defer c.Close()
	got := make(chan Event, 100)
	errc := make(chan error, 1)
	go func() {
		errc <- c.Follow(context.Background(), "j1", func(ev Event) { got <- ev })
	}()
	for k := 0; k < 3; k++ {
		if ev := <-got; ev.Job.State != JobRunning {
			t.Fatalf("event %d: %+v", k, ev.Job)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// While nothing listens the follow waits; then a new helper knows the job as done.
	time.Sleep(200 * time.Millisecond)
	svc2 := newScripted()
	done := svc2.jobs["j1"]
	done.State = JobDone
	svc2.jobs["j1"] = done
	svc2.script["j1"] = []Event{{Seq: 0, Job: done}}
	startServer(t, svc2, ServerOptions{Socket: sock})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	close(got)
	var last Event
	for ev := range got {
		last = ev
	}
	if last.Job.State != JobDone {
		t.Fatalf("follow ended with %+v, want the done event", last.Job)
	}
	if !svc2.called("Events j1") {
		t.Fatalf("the new helper was never asked: %q", svc2.Calls())
	}
}

// Without any helper, Follow gives up after ReconnectWithin with ErrUnreachable.
func TestFollowGivesUp(t *testing.T) {
	c := NewUnixClient(filepath.Join(t.TempDir(), "nobody.sock"))
	c.ReconnectWithin = 300 * time.Millisecond
	err := c.Follow(context.Background(), "j1", func(Event) { t.Error("an event from nowhere") })
	if err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Fatalf("follow without a helper: %v", err)
	}
	// A job the helper does not know ends the follow at once with its error.
	srv := startServer(t, newScripted(), ServerOptions{})
	c2 := NewUnixClient(srv.SocketPath())
	defer c2.Close()
	err = c2.Follow(context.Background(), "nope", func(Event) {})
	wantError(t, "follow nope", err, http.StatusNotFound, CodeNotFound)
	// Cancelling the context ends it too.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	srvHold := newScripted()
	srvHold.script["j1"] = srvHold.script["j1"][:1]
	s3 := startServer(t, srvHold, ServerOptions{})
	c3 := NewUnixClient(s3.SocketPath())
	defer c3.Close()
	if err := c3.Follow(ctx, "j1", func(Event) {}); err != context.Canceled {
		t.Fatalf("cancelled follow: %v", err)
	}
}
