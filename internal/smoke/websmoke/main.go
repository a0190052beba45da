// Command websmoke drives HubScope's browser app in headless Chromium (for
// scripts/web-smoke.sh): it opens the token URL of a helper started with
// `serve --web … --web-root bin/web`, checks that the app starts (page title, the app's
// upload control, the helper seeing the app's API calls, a screenshot with the window drawn,
// no console errors), how the page holds the token (checkToken), and, given files, uploads them through the page's file input: a file
// that is not NIfTI and one over the helper's limit must be refused in words, and the scan
// must be analysed to the end (followed through the helper's /v1/jobs with the token) and its
// result drawn in the page.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Element IDs the app creates (app/upload_js.go; that file builds only for js, so they are
// repeated here).
const (
	uploadInput  = "#hubscope-upload"
	uploadStatus = "hubscope-upload-status"
	uploadPanel  = "#hubscope-upload-panel"
	// The confounds table's input and the line saying what the browser cannot do.
	uploadConfounds = "#hubscope-upload-confounds"
	uploadMask      = "#hubscope-upload-mask"
	browserLimits   = "hubscope-browser-limits"
)

// patience bounds each wait for the page (drawn, connected, an upload's answer): long enough
// for a loaded machine, while --timeout bounds the whole run.
const patience = 4 * time.Minute

// Window size of the browser (the desktop app opens at 1280×800 too).
const winW, winH = 1280, 800

func main() {
	pageURL := flag.String("url", "", "the token URL the helper printed (web: open …)")
	browser := flag.String("chromium", "", "the browser program (default: chromium, chromium-browser or google-chrome on PATH)")
	helperLog := flag.String("helper-log", "", "the helper's log file; the app has connected once the helper logged its GET /v1/jobs over the web transport")
	scan := flag.String("scan", "", "a NIfTI scan to upload through the page and analyse to the end")
	confounds := flag.String("confounds", "", "with --scan: a confounds table (.tsv) to upload beside the scan; the job must use it")
	mask := flag.String("mask", "", "with --scan: a brain mask (.nii.gz) to upload beside the scan; the job must use it")
	notNIfTI := flag.String("not-nifti", "", "a file the page must refuse as not NIfTI")
	tooLarge := flag.String("too-large", "", "a .nii.gz over the helper's --max-upload that the page must refuse as too large (dropped on the page)")
	corrupt := flag.String("corrupt", "", "a .nii.gz that is not a NIfTI image inside, which the helper must refuse")
	openCohort := flag.String("open-cohort", "", "a cohort's derivatives folder under the helper's --open-root, to open through the page's \"Open results folder…\" list")
	openFolder := flag.String("open-folder", "", "a group-mean bundle's path under the helper's --open-root, to open through the page's \"Open results folder…\" list")
	out := flag.String("out", "", "folder for the screenshots (start.png, result.png) and console.log")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	flag.Parse()
	if *pageURL == "" || *out == "" || *helperLog == "" {
		fmt.Fprintln(os.Stderr, "usage: websmoke --url TOKEN_URL --helper-log FILE --out DIR [--scan F --not-nifti F --too-large F --corrupt F] [--chromium PROG]")
		os.Exit(2)
	}
	s := &smoke{url: *pageURL, browser: *browser, helperLog: *helperLog, out: *out}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	err := s.run(ctx, files{scan: *scan, mask: *mask, confounds: *confounds, notNIfTI: *notNIfTI, tooLarge: *tooLarge, corrupt: *corrupt, openFolder: *openFolder, openCohort: *openCohort})
	if werr := s.writeConsole(); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "websmoke: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("websmoke: ok")
}

// files are what the page is given; "" = that check is skipped.
type files struct{ scan, mask, confounds, notNIfTI, tooLarge, corrupt, openFolder, openCohort string }

type smoke struct {
	url, browser, helperLog, out string
	client                       *ipc.Client

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
	// refusedUpload: the helper answered an upload with 400 on purpose (the corrupt file),
	// which the browser logs as a failed request; refusedNoCookie likewise its 401 to the
	// page's request without the cookie (checkToken).
	refusedUpload, refusedNoCookie bool
	// refusedDownload: checkDownloads asked for the downloads without the cookie (401s);
	// refusedFolders: checkOpenFolder likewise for the list of results folders.
	refusedDownload, refusedFolders bool
}

func (s *smoke) logf(format string, args ...any) {
	fmt.Printf("websmoke: "+format+"\n", args...)
}

func (s *smoke) run(ctx context.Context, f files) error {
	u, err := url.Parse(s.url)
	if err != nil || u.Query().Get("token") == "" {
		return fmt.Errorf("--url %q is not a token URL (http://127.0.0.1:PORT/?token=…)", s.url)
	}
	s.client = ipc.NewWebClient(u.Scheme+"://"+u.Host, u.Query().Get("token"))
	defer s.client.Close()
	if err := os.MkdirAll(s.out, 0o755); err != nil {
		return err
	}
	prog, err := findBrowser(s.browser)
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "websmoke-profile-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)

	// TOOLCHAIN.md's flags for a headless browser in a container; WebGL (which Fyne draws
	// with) then runs on SwiftShader, which Chromium only allows with the last flag.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(prog),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(winW, winH),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx); err != nil {
		return fmt.Errorf("starting %s: %w", prog, err)
	}
	messages := chromedp.Console(bctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			s.mu.Lock()
			s.console = append(s.console, m)
			s.mu.Unlock()
		}
	}()

	s.logf("opening the app in %s", filepath.Base(prog))
	if err := chromedp.Do(bctx, chromedp.Navigate(s.url)); err != nil {
		return fmt.Errorf("opening %s: %w", u.Host, err)
	}
	// The wasm (about 40 MB) downloads, compiles and starts; the upload panel is the app's
	// first DOM element after Fyne's canvas.
	if _, err := chromedp.Run(bctx, chromedp.Poll[bool](
		`!!document.querySelector("`+uploadPanel+`") && !!document.querySelector("body > canvas") &&
		 getComputedStyle(document.getElementById("loading")).display === "none"`,
		chromedp.WithPollingInterval(250*time.Millisecond), chromedp.WithPollingTimeout(patience))); err != nil {
		return fmt.Errorf("the app did not start in the page (no canvas and upload control after %v): %w%s", patience, err, s.pageError(bctx))
	}
	title, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		return err
	}
	if !strings.HasPrefix(title, schema.AppName+" ") {
		return fmt.Errorf("page title %q, want %q followed by the version (the app names its window)", title, schema.AppName)
	}
	s.logf("app started: title %q", title)
	if err := s.waitConnected(ctx); err != nil {
		return err
	}
	s.logf("the app reached the helper's API")
	if err := s.checkConsole(); err != nil {
		return err
	}
	if err := s.checkToken(ctx, bctx, u.Scheme+"://"+u.Host); err != nil {
		return err
	}
	if err := s.checkLimits(bctx); err != nil {
		return err
	}
	// The window is drawn once the header names the helper's backend: the left column (header,
	// settings, analyses; above the upload panel) has drawn text and widgets.
	if _, err := s.waitDrawn(bctx, "start.png", area{0, 0, 0.34, 0.75}, 0.02); err != nil {
		return err
	}

	// Refused by the page by name and by size (dropped, to check the drop zone as well), and
	// by the helper by content.
	for _, c := range []struct {
		path string
		drop bool
		want string
	}{
		{f.notNIfTI, false, "is not a NIfTI scan"},
		{f.tooLarge, true, "more than this helper accepts"},
		{f.corrupt, false, "not a valid NIfTI image"},
	} {
		if c.path == "" {
			continue
		}
		if c.path == f.corrupt {
			s.mu.Lock()
			s.refusedUpload = true
			s.mu.Unlock()
		}
		if err := s.upload(bctx, c.path, c.drop, c.want); err != nil {
			return err
		}
	}
	if f.scan != "" {
		if f.mask != "" {
			// A mask beside the scan: uploaded first, sent with the scan.
			if err := s.uploadVia(bctx, uploadMask, f.mask, false, "goes with the next scan"); err != nil {
				return err
			}
		}
		if f.confounds != "" {
			// The confounds table likewise.
			if err := s.uploadVia(bctx, uploadConfounds, f.confounds, false, "goes with the next scan"); err != nil {
				return err
			}
		}
		if err := s.upload(bctx, f.scan, false, "Started "); err != nil {
			return err
		}
		if err := s.waitJob(ctx, filepath.Base(f.scan)); err != nil {
			return err
		}
		if f.confounds != "" || f.mask != "" {
			if err := s.checkCompanions(ctx, filepath.Base(f.scan), f.mask != "", f.confounds != ""); err != nil {
				return err
			}
		}
		// The first result of a session opens by itself: the right side then shows its tabs,
		// plots and tables instead of one line of text.
		if _, err := s.waitDrawn(bctx, "result.png", area{0.36, 0.12, 1, 1}, 0.05); err != nil {
			return fmt.Errorf("the finished analysis was not shown in the page: %w", err)
		}
		// Its files, as downloads from the page's links (no save dialog in the browser).
		id, err := s.jobID(ctx, filepath.Base(f.scan))
		if err != nil {
			return err
		}
		if err := s.checkDownloads(ctx, bctx, u.Scheme+"://"+u.Host, id); err != nil {
			return err
		}
	}
	if f.openFolder != "" {
		if err := s.checkOpenFolder(ctx, bctx, f.openFolder, false, "folder.png"); err != nil {
			return err
		}
	}
	if f.openCohort != "" {
		if err := s.checkOpenFolder(ctx, bctx, f.openCohort, true, "cohort.png"); err != nil {
			return err
		}
	}
	return s.checkConsole()
}

// findBrowser returns prog, or the first Chromium on PATH.
func findBrowser(prog string) (string, error) {
	if prog != "" {
		return exec.LookPath(prog)
	}
	for _, p := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(p); err == nil {
			return path, nil
		}
	}
	return "", errors.New("no chromium, chromium-browser or google-chrome on PATH (scripts/setup-deps.sh web installs Debian's chromium)")
}

// webJobsLine matches the helper's log line of a successful GET /v1/jobs over TCP (ipc's
// request log: transport, method, route, status).
var webJobsLine = regexp.MustCompile(`transport=web .*route="GET /v1/jobs" status=200`)

// waitConnected waits until the app has listed the helper's jobs, the last call it makes
// before it shows the helper as connected (app.UI.Start).
func (s *smoke) waitConnected(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	for {
		b, err := os.ReadFile(s.helperLog)
		if err != nil {
			return fmt.Errorf("reading the helper's log: %w", err)
		}
		if webJobsLine.Match(b) {
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("the app in the page never listed the helper's jobs (no web GET /v1/jobs with status 200 in %s)%s", s.helperLog, s.consoleTail())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// area is a part of the page as fractions of its width and height: x0, y0, x1, y1.
type area [4]float64

func (a area) in(b image.Rectangle) image.Rectangle {
	w, h := float64(b.Dx()), float64(b.Dy())
	return image.Rect(b.Min.X+int(a[0]*w), b.Min.Y+int(a[1]*h), b.Min.X+int(a[2]*w), b.Min.Y+int(a[3]*h))
}

// waitDrawn takes screenshots until the share of pixels in part that differ from its most
// common colour (its background) reaches minShare, and keeps the last one as name.
func (s *smoke) waitDrawn(ctx context.Context, name string, part area, minShare float64) (float64, error) {
	// Generous: on a shared machine (load 25 on 2 cores) Fyne's first frames under
	// SwiftShader once took longer than 90 s. The whole run stays bounded by --timeout.
	deadline := time.Now().Add(patience)
	for {
		buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			return 0, fmt.Errorf("screenshot: %w", err)
		}
		img, err := png.Decode(bytes.NewReader(buf))
		if err != nil {
			return 0, fmt.Errorf("screenshot: %w", err)
		}
		rect := part.in(img.Bounds())
		share := drawnShare(img, rect)
		if share >= minShare || time.Now().After(deadline) {
			path := filepath.Join(s.out, name)
			if err := os.WriteFile(path, buf, 0o644); err != nil {
				return share, err
			}
			if share < minShare {
				return share, fmt.Errorf("%s: only %.1f%% of the pixels in %v differ from the background, want at least %.0f%% (the window was not drawn)", path, 100*share, rect, 100*minShare)
			}
			s.logf("%s: %.1f%% of the pixels in %v drawn", path, 100*share, rect)
			return share, nil
		}
		time.Sleep(time.Second)
	}
}

// drawnShare is the share of pixels in rect whose colour differs from the most common one.
func drawnShare(img image.Image, rect image.Rectangle) float64 {
	rect = rect.Intersect(img.Bounds())
	if rect.Empty() {
		return 0
	}
	counts := map[[3]uint8]int{}
	at := func(x, y int) [3]uint8 {
		r, g, b, _ := img.At(x, y).RGBA()
		return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
	}
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			counts[at(x, y)]++
		}
	}
	var bg [3]uint8
	for c, n := range counts {
		if n > counts[bg] {
			bg = c
		}
	}
	diff := 0
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			c := at(x, y)
			d := 0
			for i := range c {
				d = max(d, absDiff(c[i], bg[i]))
			}
			// Anti-aliasing leaves faint fringes; count only what a reader can see.
			if d > 32 {
				diff++
			}
		}
	}
	return float64(diff) / float64(rect.Dx()*rect.Dy())
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// upload gives path to the page (through its file input, or dropped on the middle of the
// page when drop is set) and waits for the app's answer beside the input, which must contain
// want.
func (s *smoke) upload(ctx context.Context, path string, drop bool, want string) error {
	return s.uploadVia(ctx, uploadInput, path, drop, want)
}

// uploadVia is upload through the file input sel.
func (s *smoke) uploadVia(ctx context.Context, sel, path string, drop bool, want string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	// A fresh status line, so that the answer read below is this file's.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("`+uploadStatus+`").textContent = ""`)); err != nil {
		return err
	}
	if drop {
		if err := chromedp.Do(ctx, dropFiles(abs)); err != nil {
			return fmt.Errorf("dropping %s on the page: %w", path, err)
		}
	} else if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS(sel), []string{abs})); err != nil {
		return fmt.Errorf("giving %s to the page's file input: %w", path, err)
	}
	// "Uploading …" and "Uploaded …" are on the way; anything else is the answer.
	text, err := chromedp.Run(ctx, chromedp.Poll[string](
		`(() => { const t = document.getElementById("`+uploadStatus+`").textContent;
		  return t && !t.startsWith("Uploading ") && !t.startsWith("Uploaded ") ? t : null })()`,
		chromedp.WithPollingInterval(250*time.Millisecond), chromedp.WithPollingTimeout(patience)))
	if err != nil {
		return fmt.Errorf("no answer from the page after uploading %s: %w%s", path, err, s.consoleTail())
	}
	s.logf("%s: %s", filepath.Base(path), text)
	if !strings.Contains(text, want) {
		return fmt.Errorf("uploading %s: the page said %q, want it to say %q", path, text, want)
	}
	return nil
}

// dropFiles drags files from outside the browser onto the middle of the page (Fyne's canvas)
// and drops them there, as a file manager would.
func dropFiles(files ...string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var none chromedp.Void
		mid, err := chromedp.Evaluate[[2]float64](`[innerWidth / 2, innerHeight / 2]`)(ctx, t)
		if err != nil {
			return none, err
		}
		data := &input.DragData{Items: []*input.DragDataItem{}, Files: files, DragOperationsMask: 1} // copy
		for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter,
			input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
			if _, err := cdp.Call(ctx, t, input.DispatchDragEvent,
				input.DispatchDragEventParams{Type: typ, X: mid[0], Y: mid[1], Data: data}); err != nil {
				return none, fmt.Errorf("%s: %w", typ, err)
			}
		}
		return none, nil
	}
}

// waitJob follows the job named name through the helper's API until it ends; it must end
// done.
// jobID is the ID of the helper's job named name.
func (s *smoke) jobID(ctx context.Context, name string) (string, error) {
	jobs, err := s.client.Jobs(ctx)
	if err != nil {
		return "", err
	}
	for _, j := range jobs {
		if j.Name == name {
			return j.ID, nil
		}
	}
	return "", fmt.Errorf("the helper has no job named %s", name)
}

func (s *smoke) waitJob(ctx context.Context, name string) error {
	last := ""
	for {
		jobs, err := s.client.Jobs(ctx)
		if err != nil {
			return fmt.Errorf("listing the helper's jobs: %w", err)
		}
		var job *ipc.Job
		for i := range jobs {
			if jobs[i].Name == name {
				job = &jobs[i]
			}
		}
		if job == nil {
			return fmt.Errorf("the page said it started %s, but the helper has no job of that name", name)
		}
		if st := fmt.Sprintf("%s %s", job.State, job.Stage); st != last {
			s.logf("job %s: %s", job.ID, st)
			last = st
		}
		if job.State.Terminal() {
			if job.State != ipc.JobDone {
				return fmt.Errorf("job %s (%s) ended %s: %s", job.ID, name, job.State, job.Error)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("job %s (%s) still %s when time ran out", job.ID, name, job.State)
		case <-time.After(time.Second):
		}
	}
}

// checkConsole fails on any error the page logged: an exception, console.error (the page's
// own loader reports there), a failed request in the browser's log, or a Go panic (which the
// wasm runtime prints as a plain log line). The one failed request it expects is the
// helper's 400 for the corrupt upload and its 401 to the page's request without the cookie.
func (s *smoke) checkConsole() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var bad []string
	for _, m := range s.console {
		if s.refusedUpload && m.Source == "network" && (strings.Contains(m.URL, ipc.Prefix+"/uploads?") || strings.Contains(m.URL, ipc.Prefix+"/uploads/parts/")) &&
			strings.Contains(m.Text, "status of 400") {
			continue
		}
		if s.refusedNoCookie && m.Source == "network" && strings.HasSuffix(m.URL, ipc.Prefix+"/jobs") && strings.Contains(m.Text, "status of 401") {
			continue
		}
		if s.refusedDownload && m.Source == "network" && (strings.HasSuffix(m.URL, "/bundle.zip") || strings.HasSuffix(m.URL, "/report.pdf")) &&
			strings.Contains(m.Text, "status of 401") {
			continue
		}
		if s.refusedFolders && m.Source == "network" && strings.HasSuffix(m.URL, ipc.Prefix+"/folders") && strings.Contains(m.Text, "status of 401") {
			continue
		}
		if m.Type == chromedp.ConsoleError || m.IsException() || strings.Contains(m.Text, "panic:") {
			bad = append(bad, fmt.Sprintf("%s: %s %s", m.Type, m.Text, m.URL))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the page logged %d error(s):\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	return nil
}

// consoleTail is the page's last console lines, for an error message.
func (s *smoke) consoleTail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	from := max(0, len(s.console)-15)
	for _, m := range s.console[from:] {
		fmt.Fprintf(&b, "\n  console %s: %s", m.Type, m.Text)
	}
	return b.String()
}

// pageError is what the page's loader says, for an error message.
func (s *smoke) pageError(ctx context.Context) string {
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`(document.getElementById("action") || {}).textContent || ""`))
	if err != nil || text == "" {
		return s.consoleTail()
	}
	return fmt.Sprintf("; the page says %q%s", text, s.consoleTail())
}

// writeConsole keeps the page's console in the output folder.
func (s *smoke) writeConsole() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, m := range s.console {
		fmt.Fprintf(&b, "%s %s: %s", m.Time.Format(time.TimeOnly), m.Type, m.Text)
		if m.Source == "network" {
			// A failed request's address, with the token (never in an API URL) left out.
			u := m.URL
			if i := strings.Index(u, "token="); i >= 0 {
				u = u[:i] + "token=REDACTED"
			}
			fmt.Fprintf(&b, " (%s)", u)
		}
		b.WriteString("\n")
	}
	return os.WriteFile(filepath.Join(s.out, "console.log"), []byte(b.String()), 0o644)
}
