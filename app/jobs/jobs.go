// Package jobs is the job list of HubScope's window: one row per analysis with its name,
// state, stage, progress bar, time left, a cancel button and, for finished jobs, an open
// button. Rows follow the helper's event streams (reconnecting when the helper goes away) and
// include the jobs of earlier sessions the helper lists.
package jobs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/ipc"
)

// Row is what the list knows about one job.
type Row struct {
	Job ipc.Job
	// Note is the engine's latest message (chosen threshold, dropped voxels, …) or a word
	// from the app (lost contact, cancel refused).
	Note string
}

// List is the job list's view model and widget. Its methods are for the UI goroutine; event
// streams are read on their own goroutines and applied with fyne.Do.
type List struct {
	Widget *widget.List
	// OnOpen is called when the user opens a finished job.
	OnOpen func(ipc.Job)
	// OnFinished is called when a job followed by this list finishes successfully.
	OnFinished func(ipc.Job)
	// OnDetails is called when the user selects a job that is not finished, so the window can
	// show its note or problem in full (a row has room for one line).
	OnDetails func(Row)

	svc ipc.Service
	ctx context.Context

	mu       sync.Mutex // rows are written on the UI goroutine and read by tests and dumps
	rows     []*Row     // newest first
	byID     map[string]*Row
	followed map[string]bool

	// applied, when set (tests), is called after each event or update is shown.
	applied func(id string)

	following sync.WaitGroup // followers running (Wait: tests end with none left behind)
}

// New makes an empty list that talks to svc; ctx bounds every stream it follows.
func New(ctx context.Context, svc ipc.Service) *List {
	l := &List{svc: svc, ctx: ctx, byID: map[string]*Row{}, followed: map[string]bool{}}
	l.Widget = widget.NewList(
		func() int { l.mu.Lock(); defer l.mu.Unlock(); return len(l.rows) },
		func() fyne.CanvasObject { return newRowView(l) },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if r, ok := l.Row(i); ok {
				o.(*RowView).show(r)
			}
		})
	l.Widget.OnSelected = func(i widget.ListItemID) {
		r, ok := l.Row(i)
		switch {
		case !ok:
		case r.Job.State == ipc.JobDone && l.OnOpen != nil:
			l.OnOpen(r.Job)
		case r.Job.State != ipc.JobDone && l.OnDetails != nil:
			l.OnDetails(r)
		}
		l.Widget.UnselectAll() // so that tapping the same row again acts again
	}
	return l
}

// Row returns a copy of row i (newest first).
func (l *List) Row(i int) (Row, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < 0 || i >= len(l.rows) {
		return Row{}, false
	}
	return *l.rows[i], true
}

// Get returns a copy of a job's row.
func (l *List) Get(id string) (Row, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.byID[id]
	if !ok {
		return Row{}, false
	}
	return *r, true
}

// Len is the number of rows.
func (l *List) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.rows)
}

// Load lists the helper's jobs (this session's and earlier ones, as the helper keeps them)
// and follows those still queued or running. Call it off the UI goroutine.
func (l *List) Load(ctx context.Context) error {
	js, err := l.svc.Jobs(ctx)
	if err != nil {
		return fmt.Errorf("listing the helper's jobs: %w", err)
	}
	fyne.Do(func() { l.Show(js) })
	return nil
}

// Show lists jobs the helper reported (UI goroutine) and follows those still queued or running.
func (l *List) Show(js []ipc.Job) {
	for _, j := range js {
		l.update(j, "")
	}
	l.Widget.Refresh()
	for _, j := range js {
		l.done(j.ID)
	}
	for _, j := range js {
		if !j.State.Terminal() {
			l.Follow(j.ID)
		}
	}
}

// Submit asks the helper to run req and follows the new job. Call it off the UI goroutine.
func (l *List) Submit(ctx context.Context, req ipc.JobRequest) (ipc.Job, error) {
	j, err := l.svc.Submit(ctx, req)
	if err != nil {
		return j, err
	}
	fyne.Do(func() { l.update(j, ""); l.Widget.Refresh(); l.done(j.ID) })
	l.Follow(j.ID)
	return j, nil
}

// Cancel asks the helper to stop a job; the stream then reports it cancelled.
func (l *List) Cancel(id string) {
	go func() {
		j, err := l.svc.Cancel(l.ctx, id)
		fyne.Do(func() {
			if err != nil {
				l.note(id, "Could not cancel: "+err.Error())
			} else {
				l.update(j, "")
			}
			l.Widget.Refresh()
			l.done(id)
		})
	}()
}

// Follow reads a job's events until it ends, once per job. When the stream breaks before the
// job ended (the helper stopped or restarted), it reconnects with a growing pause; a restarted
// helper reports the job's true state first (interrupted, if it died with the old helper).
func (l *List) Follow(id string) {
	l.mu.Lock()
	if l.followed[id] {
		l.mu.Unlock()
		return
	}
	l.followed[id] = true
	l.following.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.following.Done()
		l.follow(id)
	}()
}

// Wait returns once every job this list follows has ended or its context was cancelled.
func (l *List) Wait() { l.following.Wait() }

// follower is implemented by *ipc.Client: a follow that also restarts the helper it launched.
type follower interface {
	Follow(ctx context.Context, id string, fn func(ipc.Event)) error
}

func (l *List) follow(id string) {
	if f, ok := l.svc.(follower); ok {
		err := f.Follow(l.ctx, id, func(ev ipc.Event) { fyne.Do(func() { l.apply(ev) }) })
		if err != nil && l.ctx.Err() == nil {
			fyne.Do(func() {
				l.note(id, "Lost contact with the helper: "+err.Error())
				l.Widget.Refresh()
				l.done(id)
			})
		}
		return
	}
	pause := 250 * time.Millisecond
	for {
		ch, err := l.svc.Events(l.ctx, id)
		if err == nil {
			for ev := range ch {
				pause = 250 * time.Millisecond
				ev := ev
				fyne.Do(func() { l.apply(ev) })
				if ev.Job.State.Terminal() {
					return
				}
			}
		}
		if l.ctx.Err() != nil {
			return
		}
		if ipc.IsCode(err, ipc.CodeNotFound) {
			fyne.Do(func() {
				l.note(id, "The helper no longer knows this analysis.")
				l.Widget.Refresh()
				l.done(id)
			})
			return
		}
		msg := "Lost contact with the helper; reconnecting…"
		if err != nil {
			msg = "Lost contact with the helper (" + err.Error() + "); reconnecting…"
		}
		fyne.Do(func() { l.note(id, msg); l.Widget.Refresh(); l.done(id) })
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// apply shows one event (UI goroutine).
func (l *List) apply(ev ipc.Event) {
	l.mu.Lock()
	prev, had := l.byID[ev.Job.ID]
	wasDone := had && prev.Job.State == ipc.JobDone
	l.mu.Unlock()
	l.update(ev.Job, ev.Message)
	l.Widget.Refresh()
	if ev.Job.State == ipc.JobDone && !wasDone && l.OnFinished != nil {
		l.OnFinished(ev.Job)
	}
	l.done(ev.Job.ID)
}

func (l *List) done(id string) {
	if l.applied != nil {
		l.applied(id)
	}
}

// update stores a job's state, keeping the newest-first order; msg replaces the note when set.
func (l *List) update(j ipc.Job, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.byID[j.ID]
	if !ok {
		r = &Row{}
		l.byID[j.ID] = r
		l.rows = append(l.rows, r)
	}
	r.Job = j
	if msg != "" {
		r.Note = Plain(msg)
	} else if ok && j.State.Terminal() {
		r.Note = "" // a stale "reconnecting" or engine note says nothing about the outcome
	}
	slices.SortStableFunc(l.rows, func(a, b *Row) int { return b.Job.Submitted.Compare(a.Job.Submitted) })
}

func (l *List) note(id, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.byID[id]; ok {
		r.Note = msg
	}
}

// plain spells the helper's mathematical signs that the app's font (Fyne's Noto Sans) lacks in
// ASCII: the browser build has no system fonts to fall back on and draws a box for them.
var plain = strings.NewReplacer("≥", ">=", "≤", "<=", "−", "-", "≈", "~", "→", "->", "⇔", "<=>", "∝", "~")

// signs are the characters plain spells (TestHelperTextsPlainHaveGlyphs finds any other the
// helper writes that the font lacks), as runes: to TestTextsHaveGlyphs a string literal of
// them would be drawn text.
var signs = string([]rune{'\u2265', '\u2264', '\u2212', '\u2248', '\u2192', '\u21d4', '\u221d'})

// Plain is a helper's text as the app shows it: ≥, ≤, −, ≈, →, ⇔ and ∝ in ASCII (every
// string the helper sends passes here: PlainService).
func Plain(s string) string { return plain.Replace(s) }

// StateText says a job's state in words.
func StateText(s ipc.JobState) string {
	switch s {
	case ipc.JobQueued:
		return "Waiting"
	case ipc.JobRunning:
		return "Running"
	case ipc.JobDone:
		return "Finished"
	case ipc.JobFailed:
		return "Failed"
	case ipc.JobCancelled:
		return "Cancelled"
	case ipc.JobInterrupted:
		return "Interrupted"
	}
	return string(s)
}

// ETAText says how long the current stage still needs ("" when unknown).
func ETAText(seconds float64) string {
	switch {
	case seconds <= 0 || math.IsNaN(seconds) || math.IsInf(seconds, 0):
		return ""
	case seconds < 10:
		return "a few seconds left"
	case seconds < 90:
		return fmt.Sprintf("about %d s left", int(math.Round(seconds/5)*5))
	case seconds < 90*60:
		return fmt.Sprintf("about %d min left", int(math.Round(seconds/60)))
	}
	return fmt.Sprintf("about %.1f h left", seconds/3600)
}

// BesideText names the stages running beside a job's main one (ipc.Job.Beside), each with its
// share done when known: "beside it: random networks 40%, global measures"; "" for none.
func BesideText(j ipc.Job) string {
	if len(j.Beside) == 0 {
		return ""
	}
	var side []string
	for _, b := range j.Beside {
		t := b.Stage
		if b.Total > 0 {
			t += fmt.Sprintf(" %d%%", int(math.Floor(100*b.Fraction)))
		}
		side = append(side, t)
	}
	return "beside it: " + strings.Join(side, ", ")
}

// Problem says in words what went wrong with a job, or "" when nothing did.
func Problem(j ipc.Job) string {
	switch j.State {
	case ipc.JobFailed:
		if j.Error == "" {
			return "The analysis failed; the helper gave no reason."
		}
		return "The analysis failed: " + Plain(j.Error)
	case ipc.JobInterrupted:
		why := "the helper stopped while it ran"
		if j.Error != "" {
			why = Plain(j.Error)
		}
		return "Interrupted (" + why + "). Its results are incomplete; open the scan again to redo it."
	case ipc.JobCancelled:
		return "Cancelled; nothing was kept."
	}
	return ""
}
