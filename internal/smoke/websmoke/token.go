package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hubscope/hubscope/ipc"
)

// webStatus matches the helper's request log lines over the web transport, with the status.
var webStatus = regexp.MustCompile(`transport=web .*status=([0-9]+)`)

// statusCounts counts the helper's web request log lines by status.
func (s *smoke) statusCounts() (map[string]int, error) {
	b, err := os.ReadFile(s.helperLog)
	if err != nil {
		return nil, fmt.Errorf("reading the helper's log: %w", err)
	}
	n := map[string]int{}
	for _, m := range webStatus.FindAllStringSubmatch(string(b), -1) {
		n[m[1]]++
	}
	return n, nil
}

// checkToken checks how the page holds the helper's token once the app has started: the
// address bar no longer shows it (the helper exchanged it for an HttpOnly cookie and loaded
// the page again without it); a request without the cookie or the token is refused, from the
// page (credentials omitted) and from outside the browser; the page's own requests with the
// cookie are let in; and a page of another origin on this host (the same site, so
// SameSite=Strict lets the browser send the cookie) is refused when it calls the API.
func (s *smoke) checkToken(ctx, page context.Context, helper string) error {
	href, err := chromedp.Run(page, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		return err
	}
	if strings.Contains(href, "token=") {
		return fmt.Errorf("after the first load the address bar still holds the token: %s", strings.SplitN(href, "token=", 2)[0]+"token=…")
	}
	cookieJS, err := chromedp.Run(page, chromedp.Evaluate[string](`document.cookie`))
	if err != nil {
		return err
	}
	if strings.Contains(cookieJS, "hubscope_token") {
		return fmt.Errorf("the page's script can read the token cookie (%d characters of document.cookie): it must be HttpOnly", len(cookieJS))
	}
	s.mu.Lock()
	s.refusedNoCookie = true
	s.mu.Unlock()
	st, err := chromedp.Run(page, chromedp.Evaluate[[]int](`Promise.all([
		fetch("`+ipc.Prefix+`/jobs", {credentials: "omit"}).then(r => r.status),
		fetch("`+ipc.Prefix+`/jobs").then(r => r.status)])`, chromedp.EvalAwaitPromise))
	if err != nil {
		return fmt.Errorf("the page's requests to the API: %w", err)
	}
	if st[0] != http.StatusUnauthorized || st[1] != http.StatusOK {
		return fmt.Errorf("from the page, GET %s/jobs without the cookie answered %d (want 401) and with it %d (want 200)", ipc.Prefix, st[0], st[1])
	}
	resp, err := http.Get(helper + ipc.Prefix + "/jobs")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return fmt.Errorf("GET %s/jobs without cookie or token from outside the browser answered %d, want 401", ipc.Prefix, resp.StatusCode)
	}
	s.logf("the address bar holds no token; the page's script cannot read the cookie; without it the API answers 401, with it 200")

	// Another origin on this host: a page served on another port of 127.0.0.1 asks the API
	// for the jobs with no-cors (no Origin header, the cookie attached): the helper must
	// refuse it from its Sec-Fetch-Site (403), which only a request that carries the valid
	// cookie gets (one without it is 401).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><title>another site</title><script>
window.probe = fetch(%q, {mode: "no-cors", credentials: "include"}).then(() => "sent", e => "failed: " + e);
</script>`, helper+ipc.Prefix+"/jobs")
	}), ReadHeaderTimeout: 10 * time.Second}
	go other.Serve(ln)
	defer other.Close()
	before, err := s.statusCounts()
	if err != nil {
		return err
	}
	tab, cancel := chromedp.NewContext(page)
	defer cancel()
	origin := "http://" + ln.Addr().String()
	if err := chromedp.Do(tab, chromedp.Navigate(origin+"/")); err != nil {
		return fmt.Errorf("opening a page of another origin (%s): %w", origin, err)
	}
	if sent, err := chromedp.Run(tab, chromedp.Evaluate[string](`window.probe`, chromedp.EvalAwaitPromise)); err != nil || sent != "sent" {
		return fmt.Errorf("the page of %s could not send its request to the helper: %q, %v", origin, sent, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		after, err := s.statusCounts()
		if err != nil {
			return err
		}
		switch {
		case after["403"] > before["403"]:
			s.logf("a request from %s (another origin, the same site) carrying the cookie was refused (403)", origin)
			return nil
		case after["401"] > before["401"]:
			return fmt.Errorf("the request from %s reached the helper without the cookie (401): the check of a cross-site request with the cookie did not run", origin)
		}
		// (The app's own requests answer 200 meanwhile; only a 403 or a 401 is this one.)
		if time.Now().After(deadline) {
			return fmt.Errorf("the helper logged no answer to the request from %s in 30 s", origin)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
