package progress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Display shows a Tracker's progress on w: a redrawn bar with ETA when w is a terminal, plain
// lines (one per stage change and at most one per Interval) otherwise, so logs stay readable.
type Display struct {
	*Tracker
	w        io.Writer
	tty      bool
	Interval time.Duration // plain-line period (default 5 s)
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	lastLine time.Time
	lastDone map[string]bool // stages whose plain line showed them complete
	width    int
}

// IsTerminal reports whether f is a character device (a terminal), without cgo or x/term.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

// NewDisplay starts a display on w (os.Stderr usually). Call Close when the work ends.
func NewDisplay(w io.Writer) *Display {
	f, ok := w.(*os.File)
	return newDisplay(w, ok && IsTerminal(f))
}

func newDisplay(w io.Writer, tty bool) *Display {
	d := &Display{Tracker: NewTracker(), w: w, tty: tty, Interval: 5 * time.Second, stop: make(chan struct{}), width: 28, lastDone: map[string]bool{}}
	d.Tracker.OnStart = func(prev Snapshot) { d.finish(prev) }
	d.Tracker.OnFail = func(prev Snapshot, err error) { d.fail(prev, err) }
	d.Tracker.OnNote = func(msg string) { d.println(msg) }
	d.wg.Add(1)
	go d.loop()
	return d
}

func (d *Display) loop() {
	defer d.wg.Done()
	period := 100 * time.Millisecond
	if !d.tty {
		period = 250 * time.Millisecond
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-t.C:
			d.draw(false)
		}
	}
}

// draw shows every running stage (Tracker.Snapshots: stages of lanes run beside the main
// one): on a terminal one redrawn line, a lone stage as a bar and several side by side
// ("nodal measures: 1.2s | random networks: 40% (6/15) 3.1s"); in a log one line per stage.
func (d *Display) draw(final bool) {
	ss := d.Snapshots()
	if final { // Close: the main stage as it stood (the lanes have ended)
		ss = nil
		if s := d.Snapshot(); s.Stage != "" {
			ss = []Snapshot{s}
		}
	}
	if len(ss) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tty {
		line := FormatBar(ss[0], d.width)
		if len(ss) > 1 {
			parts := make([]string, len(ss))
			for i, s := range ss {
				parts[i] = FormatLine(s)
			}
			line = strings.Join(parts, " | ")
		}
		fmt.Fprintf(d.w, "\r\033[K%s", line)
		if final {
			fmt.Fprintln(d.w)
		}
		return
	}
	if final || time.Since(d.lastLine) >= d.Interval {
		printed := false
		for _, s := range ss {
			if s.Total > 0 && s.Done >= s.Total {
				if d.lastDone[s.Stage] {
					continue
				}
				d.lastDone[s.Stage] = true
			}
			fmt.Fprintln(d.w, FormatLine(s))
			printed = true
		}
		if printed {
			d.lastLine = time.Now()
		}
	}
}

// finish prints the final state of a stage that has just ended.
func (d *Display) finish(prev Snapshot) {
	if prev.Total > 0 {
		prev.Done, prev.Fraction, prev.ETA = prev.Total, 1, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tty {
		fmt.Fprintf(d.w, "\r\033[K%s\n", FormatBar(prev, d.width))
	} else if !d.lastDone[prev.Stage] {
		fmt.Fprintln(d.w, FormatLine(prev))
	}
	d.lastLine = time.Time{}
	delete(d.lastDone, prev.Stage)
}

// fail prints a stage that ended in an error as it stood, with the error: "random networks:
// 40% (6/15) 3.1s — failed: …", or "— stopped" when it was cancelled because other work
// failed or the run was cancelled.
func (d *Display) fail(prev Snapshot, err error) {
	prev.ETA = 0
	how := "failed: " + err.Error()
	if errors.Is(err, context.Canceled) {
		how = "stopped"
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	line := FormatLine(prev) + " — " + how
	if d.tty {
		fmt.Fprintf(d.w, "\r\033[K%s\n", line)
	} else {
		fmt.Fprintln(d.w, line)
	}
	d.lastLine = time.Time{}
	delete(d.lastDone, prev.Stage)
}

func (d *Display) println(msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tty {
		fmt.Fprintf(d.w, "\r\033[K%s\n", msg)
	} else {
		fmt.Fprintln(d.w, msg)
	}
}

// Close stops redrawing and prints the last stage's final state. ok=false (failed or
// cancelled work) leaves the stage as it stood instead of showing it complete.
func (d *Display) Close(ok bool) {
	close(d.stop)
	d.wg.Wait()
	s := d.Snapshot()
	if s.Stage == "" {
		return
	}
	if ok {
		d.finish(s)
		return
	}
	d.draw(true)
}

// FormatBar renders "stage  [#####.....]  45%  12.3s  ETA 15s".
func FormatBar(s Snapshot, width int) string {
	if s.Total <= 0 {
		return fmt.Sprintf("%-12s %s", s.Stage, fmtDur(s.Elapsed))
	}
	filled := int(s.Fraction*float64(width) + 0.5)
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	line := fmt.Sprintf("%-12s [%s] %3.0f%%  %s", s.Stage, bar, 100*s.Fraction, fmtDur(s.Elapsed))
	if s.ETA > 0 {
		line += "  ETA " + fmtDur(s.ETA)
	}
	return line
}

// FormatLine renders a plain log line "stage: 45% (120/266) 12.3s, ETA 15s".
func FormatLine(s Snapshot) string {
	if s.Total <= 0 {
		return fmt.Sprintf("%s: %s", s.Stage, fmtDur(s.Elapsed))
	}
	line := fmt.Sprintf("%s: %.0f%% (%d/%d) %s", s.Stage, 100*s.Fraction, s.Done, s.Total, fmtDur(s.Elapsed))
	if s.ETA > 0 {
		line += ", ETA " + fmtDur(s.ETA)
	}
	return line
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
