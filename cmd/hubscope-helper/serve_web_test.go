package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/ipc"
)

// webBuild writes a browser build as `make web` lays it out: the page, Go's loader and a wasm
// binary (the smallest valid module: the magic number and version 1).
func webBuild(t *testing.T) (dir string, files map[string][]byte) {
	t.Helper()
	dir = t.TempDir()
	files = map[string][]byte{
		"index.html":    []byte("<!DOCTYPE html><title>HubScope</title><script src=\"wasm_exec.js\"></script>\n"),
		"wasm_exec.js":  []byte("\"use strict\";\n"),
		"hubscope.wasm": {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00},
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files
}

// tokenURL is the address serve printed after "web: open ".
func tokenURL(t *testing.T, s *serving) *url.URL {
	t.Helper()
	for _, line := range strings.Split(s.out.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "web: open "); ok {
			u, err := url.Parse(rest)
			if err != nil || u.Query().Get("token") == "" {
				t.Fatalf("token URL %q: %v", rest, err)
			}
			return u
		}
	}
	t.Fatalf("serve printed no token URL:\n%s", s.out.String())
	return nil
}

func get(t *testing.T, c *http.Client, u string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestServeWebRoot serves a browser build with --web-root: the token URL gives a cookie and
// the page at its address without the token, the cookie then gives the page's files (with the
// media type WebAssembly.instantiateStreaming requires) and the API for the page's own
// requests, never for another site's; a token in an API URL opens nothing.
func TestServeWebRoot(t *testing.T) {
	root, files := webBuild(t)
	dir := t.TempDir()
	s := startServe(t, "--socket", filepath.Join(dir, "run", "helper.sock"), "--results", filepath.Join(dir, "results"),
		"--backend", "cpu", "--web", "127.0.0.1:0", "--web-root", root)
	page := tokenURL(t, s)
	token := page.Query().Get("token")
	base := page.Scheme + "://" + page.Host

	plain := &http.Client{}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar}

	// Without the token, nothing: not the page, not its files, not the API.
	for _, p := range []string{"/", "/index.html", "/hubscope.wasm", "/wasm_exec.js", ipc.Prefix + "/info", ipc.Prefix + "/jobs"} {
		if resp, _ := get(t, plain, base+p); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: status %d, want 401", p, resp.StatusCode)
		}
	}

	resp, body := get(t, browser, page.String())
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, files["index.html"]) {
		t.Fatalf("GET the token URL: status %d, body %q; want index.html", resp.StatusCode, body)
	}
	if resp.Request.URL.Query().Has("token") {
		t.Errorf("the token URL ended at %s: the token is still in the address", resp.Request.URL)
	}
	for _, f := range []struct{ name, ctype string }{{"hubscope.wasm", "application/wasm"}, {"wasm_exec.js", "javascript"}} {
		resp, body := get(t, browser, base+"/"+f.name)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, files[f.name]) {
			t.Fatalf("GET /%s with the page's cookie: status %d, %d bytes; want the file's %d", f.name, resp.StatusCode, len(body), len(files[f.name]))
		}
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, f.ctype) {
			t.Errorf("GET /%s: Content-Type %q, want %s", f.name, ct, f.ctype)
		}
	}
	if resp, _ := get(t, browser, base+"/missing.js"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /missing.js with the cookie: status %d, want 404", resp.StatusCode)
	}

	// The cookie the page got opens the API for the page's own requests (Sec-Fetch-Site:
	// same-origin), not for another site's (another port of this host is the same site, so
	// SameSite=Strict sends the cookie along); a token in an API URL opens nothing.
	for _, c := range []struct {
		u, site string
		want    int
	}{
		{base + ipc.Prefix + "/info", "same-origin", http.StatusOK},
		{base + ipc.Prefix + "/jobs", "same-origin", http.StatusOK},
		{base + ipc.Prefix + "/jobs", "same-site", http.StatusForbidden},
		{base + ipc.Prefix + "/jobs", "cross-site", http.StatusForbidden},
	} {
		if resp, _ := get(t, browser, c.u, "Sec-Fetch-Site", c.site); resp.StatusCode != c.want {
			t.Errorf("GET %s with the page's cookie from %s: status %d, want %d", c.u, c.site, resp.StatusCode, c.want)
		}
	}
	if resp, _ := get(t, plain, base+ipc.Prefix+"/info?token="+url.QueryEscape(token)); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/info?token=TOKEN: status %d, want 401", resp.StatusCode)
	}
	// A client with the token as a bearer token is let in.
	info, err := ipc.NewWebClient(base, token).Info(context.Background())
	if err != nil {
		t.Fatalf("web client with the token: %v", err)
	}
	if info.Transport != "web" {
		t.Errorf("info over TCP: transport %q, want web", info.Transport)
	}
	// A page from another origin cannot read the API with the token either.
	if resp, _ := get(t, plain, base+ipc.Prefix+"/info", "Authorization", "Bearer "+token, "Origin", "http://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /v1/info from a foreign Origin: status %d, want 403", resp.StatusCode)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeWebHelpPage: with --web and no --web-root the page says how to build the browser
// app and serve it.
func TestServeWebHelpPage(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, "--socket", filepath.Join(dir, "run", "helper.sock"), "--results", filepath.Join(dir, "results"),
		"--backend", "cpu", "--web", "127.0.0.1:0")
	page := tokenURL(t, s)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, &http.Client{Jar: jar}, page.String())
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the token URL: status %d", resp.StatusCode)
	}
	for _, want := range []string{"make web", "--web-root bin/web", "?token="} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("the page does not say %q:\n%s", want, body)
		}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q, want text/html", ct)
	}
	if resp, _ := get(t, &http.Client{Jar: jar}, page.Scheme+"://"+page.Host+"/hubscope.wasm"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /hubscope.wasm of a helper without a browser build: status %d, want 404", resp.StatusCode)
	}
}

// TestServeWebRootRefused: a --web-root that is not a browser build, or without --web, stops
// serve at start with the reason in words.
func TestServeWebRootRefused(t *testing.T) {
	root, _ := webBuild(t)
	if err := os.Remove(filepath.Join(root, "hubscope.wasm")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	common := []string{"--socket", filepath.Join(dir, "run", "helper.sock"), "--results", filepath.Join(dir, "results"), "--backend", "cpu"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--web", "127.0.0.1:0", "--web-root", root}, "has no hubscope.wasm"},
		{[]string{"--web", "127.0.0.1:0", "--web-root", filepath.Join(dir, "nowhere")}, "make web"},
		{[]string{"--web", "127.0.0.1:0", "--web-root", filepath.Join(root, "index.html")}, "is not a folder"},
		{[]string{"--web-root", root}, "needs --web"},
	} {
		var out, errs bytes.Buffer
		err := cmdServe(context.Background(), append(common, tc.args...), &out, &errs)
		if err == nil {
			t.Fatalf("serve %v started", tc.args)
		}
		if msg := err.Error() + errs.String(); !strings.Contains(msg, tc.want) {
			t.Errorf("serve %v: %q, want it to say %q", tc.args, msg, tc.want)
		}
	}
}
