package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/hubscope/hubscope/ipc"
)

// Element IDs of the page's download links (app/save_js.go builds only for js, so they are
// repeated here).
const (
	downloadBundle = "#hubscope-download-bundle"
	downloadReport = "#hubscope-download-report"
)

// checkDownloads follows the links the page shows for the finished job id — the results
// folder as a .zip and the PDF report — as a user's click does, and checks that each arrives
// in the browser's downloads whole (the zip holds the job's metrics.json as the helper serves
// it; the PDF starts as one); and that the same URLs are refused without the cookie, from the
// page (credentials omitted) and from outside the browser.
func (s *smoke) checkDownloads(ctx, page context.Context, helper, id string) error {
	dir, err := filepath.Abs(filepath.Join(s.out, "downloads"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	progress := chromedp.Events(page, browser.DownloadProgress)
	yes := true
	if _, err := chromedp.Call(page, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &yes}); err != nil {
		return fmt.Errorf("letting the browser download: %w", err)
	}
	rc, _, err := s.client.OpenFile(ctx, id, "metrics.json")
	if err != nil {
		return err
	}
	metrics, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return err
	}
	next, stop := iter.Pull2(progress)
	defer stop()
	for _, l := range []struct {
		sel, path string
		check     func([]byte) error
	}{
		{downloadBundle, ipc.DownloadBundlePath(id), func(b []byte) error {
			zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				return fmt.Errorf("not a zip: %w", err)
			}
			for _, f := range zr.File {
				if strings.HasSuffix(f.Name, "/metrics.json") {
					r, err := f.Open()
					if err != nil {
						return err
					}
					got, err := io.ReadAll(r)
					r.Close()
					if err != nil || !bytes.Equal(got, metrics) {
						return fmt.Errorf("its %s differs from the helper's metrics.json (%v)", f.Name, err)
					}
					s.logf("the results .zip arrived: %d files, %d KB", len(zr.File), len(b)/1024)
					return nil
				}
			}
			return fmt.Errorf("it holds no metrics.json among its %d files", len(zr.File))
		}},
		{downloadReport, ipc.DownloadReportPath(id), func(b []byte) error {
			if !bytes.HasPrefix(b, []byte("%PDF-")) {
				return fmt.Errorf("not a PDF (%d bytes starting %q)", len(b), b[:min(len(b), 8)])
			}
			s.logf("the PDF report arrived: %d KB", len(b)/1024)
			return nil
		}},
	} {
		wctx, cancel := context.WithTimeout(page, patience)
		err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(l.sel)), chromedp.Click(chromedp.CSS(l.sel)))
		cancel()
		if err != nil {
			return fmt.Errorf("the page shows no download link %s for the finished job: %w%s", l.sel, err, s.consoleTail())
		}
		deadline := time.Now().Add(patience)
		var done *browser.EventDownloadProgress
		for done == nil {
			ev, err, ok := next()
			if !ok || err != nil {
				return fmt.Errorf("waiting for the download of %s: %v", l.path, err)
			}
			switch ev.State {
			case browser.DownloadProgressStateCompleted:
				done = &ev
			case browser.DownloadProgressStateCanceled:
				return fmt.Errorf("the browser cancelled the download of %s", l.path)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the download of %s did not complete in %v", l.path, patience)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, done.GUID))
		if err != nil {
			return fmt.Errorf("the download of %s: %w", l.path, err)
		}
		if err := l.check(b); err != nil {
			return fmt.Errorf("the download of %s: %w", l.path, err)
		}
	}

	// Without the cookie: from the page and from outside the browser.
	s.mu.Lock()
	s.refusedDownload = true
	s.mu.Unlock()
	st, err := chromedp.Run(page, chromedp.Evaluate[[]int](`Promise.all([
		fetch("`+ipc.DownloadBundlePath(id)+`", {credentials: "omit"}).then(r => r.status),
		fetch("`+ipc.DownloadReportPath(id)+`", {credentials: "omit"}).then(r => r.status)])`, chromedp.EvalAwaitPromise))
	if err != nil {
		return fmt.Errorf("the page's downloads without the cookie: %w", err)
	}
	if st[0] != http.StatusUnauthorized || st[1] != http.StatusUnauthorized {
		return fmt.Errorf("from the page without the cookie, the .zip answered %d and the report %d (want 401)", st[0], st[1])
	}
	for _, p := range []string{ipc.DownloadBundlePath(id), ipc.DownloadReportPath(id)} {
		resp, err := http.Get(helper + p)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("GET %s without cookie or token from outside the browser answered %d, want 401", p, resp.StatusCode)
		}
	}
	s.logf("the downloads are refused without the cookie (401)")
	return nil
}
