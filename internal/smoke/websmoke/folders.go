package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hubscope/hubscope/ipc"
)

// Element IDs of the page's "Open results folder…" controls (app/folders_js.go builds only
// for js, so they are repeated here).
const (
	foldersButton = "#hubscope-open-folder"
	foldersList   = "hubscope-folders"
	foldersOpen   = "#hubscope-folders-open"
	foldersStatus = "hubscope-folders-status"
)

// checkOpenFolder opens, through the page's "Open results folder…", the result folder that
// lies at rel under the helper's --open-root — a group-mean bundle, or with cohort a cohort's
// folder (its tables read from the helper): the list the page shows must hold it, a bundle
// must become a finished job of the helper (a group's, as its summary says), and the page
// must draw it in place of what it showed before (screenshot shot). The list is refused to
// the page's requests without the cookie.
func (s *smoke) checkOpenFolder(ctx, page context.Context, rel string, cohort bool, shot string) error {
	before, err := chromedp.Run(page, chromedp.CaptureScreenshot())
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(page, patience)
	defer cancel()
	// The list the button fetches, not one shown before: emptied first.
	if _, err := chromedp.Run(page, chromedp.Evaluate[chromedp.Void](`document.getElementById("`+foldersList+`").innerHTML = ""`)); err != nil {
		return err
	}
	if err := chromedp.Do(wctx, chromedp.Click(chromedp.CSS(foldersButton))); err != nil {
		return fmt.Errorf("the page has no %s button: %w", foldersButton, err)
	}
	id := ipc.FolderRootOpen + "/" + rel
	if _, err := chromedp.Run(wctx, chromedp.Poll[bool](
		`[...document.getElementById("`+foldersList+`").options].some(o => o.value === "`+id+`")`,
		chromedp.WithPollingInterval(250*time.Millisecond), chromedp.WithPollingTimeout(patience))); err != nil {
		status, _ := chromedp.Run(page, chromedp.Evaluate[string](`document.getElementById("`+foldersStatus+`").textContent`))
		return fmt.Errorf("the page's list of results folders never held %s (it says %q): %w%s", id, status, err, s.consoleTail())
	}
	n, _ := chromedp.Run(page, chromedp.Evaluate[int](`document.getElementById("`+foldersList+`").options.length`))
	s.logf("the page lists %d results folders, %s among them", n, rel)
	// A fresh status line, so that the answer read below is this folder's.
	if _, err := chromedp.Run(page, chromedp.Evaluate[chromedp.Void](`document.getElementById("`+foldersList+`").value = "`+id+`";
		document.getElementById("`+foldersStatus+`").textContent = ""`)); err != nil {
		return err
	}
	if err := chromedp.Do(wctx, chromedp.Click(chromedp.CSS(foldersOpen))); err != nil {
		return err
	}
	text, err := chromedp.Run(wctx, chromedp.Poll[string](
		`(() => { const t = document.getElementById("`+foldersStatus+`").textContent; return t.startsWith("Opened ") || t.startsWith("Could not") ? t : null })()`,
		chromedp.WithPollingInterval(250*time.Millisecond), chromedp.WithPollingTimeout(patience)))
	if err != nil {
		return fmt.Errorf("no answer from the page after opening %s: %w%s", rel, err, s.consoleTail())
	}
	if text != "Opened "+rel+"." {
		return fmt.Errorf("opening %s: the page said %q", rel, text)
	}
	if cohort {
		s.logf("opened the cohort folder %s", rel)
	} else {
		jid, err := s.jobID(ctx, filepath.Base(rel))
		if err != nil {
			return err
		}
		sum, err := s.client.Summary(ctx, jid)
		if err != nil {
			return err
		}
		if sum.Job.State != ipc.JobDone || sum.Group == nil {
			return fmt.Errorf("the folder %s opened as job %s, %s, group %v: want a done group-mean job", rel, jid, sum.Job.State, sum.Group)
		}
		s.logf("opened %s: job %s, a group mean of %d subjects", rel, jid, len(sum.Group.Subjects))
	}
	// The page draws it: the result's side changes from what it showed before.
	part := area{0.36, 0.12, 1, 1}
	old, err := png.Decode(bytes.NewReader(before))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(patience)
	// A brain view is drawn when enough of the side differs from its background; a cohort's
	// tables are mostly background, so there the side must have changed and stayed the same
	// for a second (drawn, not mid-layout) — otherwise the loop would wait out its patience.
	prevShare := -1.0
	for {
		buf, err := chromedp.Run(page, chromedp.CaptureScreenshot())
		if err != nil {
			return err
		}
		img, err := png.Decode(bytes.NewReader(buf))
		if err != nil {
			return err
		}
		share := changedShare(old, img, part.in(img.Bounds()))
		drawn := drawnShare(img, part.in(img.Bounds())) >= 0.05
		if cohort {
			drawn = share == prevShare
		}
		prevShare = share
		if share >= 0.05 && drawn || time.Now().After(deadline) {
			path := filepath.Join(s.out, shot)
			if err := os.WriteFile(path, buf, 0o644); err != nil {
				return err
			}
			if share < 0.05 {
				return fmt.Errorf("%s: only %.1f%% of the result's side changed after opening %s (it was not drawn)", path, 100*share, rel)
			}
			s.logf("%s: %.1f%% of the result's side changed", path, 100*share)
			break
		}
		time.Sleep(time.Second)
	}

	// The list without the cookie, from the page: refused.
	s.mu.Lock()
	s.refusedFolders = true
	s.mu.Unlock()
	st, err := chromedp.Run(page, chromedp.Evaluate[int](`fetch("`+ipc.Prefix+`/folders", {credentials: "omit"}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	if st != http.StatusUnauthorized {
		return fmt.Errorf("GET %s/folders from the page without the cookie answered %d, want 401", ipc.Prefix, st)
	}
	s.logf("the list of results folders is refused without the cookie (401)")
	return nil
}

// changedShare is the share of pixels in rect that differ visibly between a and b.
func changedShare(a, b image.Image, rect image.Rectangle) float64 {
	rect = rect.Intersect(a.Bounds()).Intersect(b.Bounds())
	if rect.Empty() {
		return 0
	}
	diff := 0
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			d := max(absDiff(uint8(r1>>8), uint8(r2>>8)), absDiff(uint8(g1>>8), uint8(g2>>8)), absDiff(uint8(b1>>8), uint8(b2>>8)))
			if d > 32 {
				diff++
			}
		}
	}
	return float64(diff) / float64(rect.Dx()*rect.Dy())
}
