package progress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTrackerETAAndConcurrentAdd(t *testing.T) {
	tr := NewTracker()
	now := time.Unix(0, 0)
	tr.now = func() time.Time { return now }
	tr.Start("edges", 100)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				tr.Add(1)
			}
		}()
	}
	wg.Wait()
	now = now.Add(10 * time.Second)
	s := tr.Snapshot()
	if s.Done != 20 || s.Fraction != 0.2 {
		t.Fatalf("done %d fraction %v, want 20, 0.2", s.Done, s.Fraction)
	}
	// 20 % in 10 s → 40 s remain.
	if s.ETA != 40*time.Second {
		t.Fatalf("ETA %v, want 40s", s.ETA)
	}
	tr.Add(1000)
	if s := tr.Snapshot(); s.Done != 100 || s.Fraction != 1 || s.ETA != 0 {
		t.Fatalf("overshoot not clamped: %+v", s)
	}
}

func TestDisplayPlainLines(t *testing.T) {
	var buf bytes.Buffer
	d := NewDisplay(&buf)
	d.Start("load", 4)
	d.Add(4)
	d.Note("dropped 3 voxels with zero variance")
	d.Start("edges", 10)
	d.Add(5)
	d.Close(false)
	out := buf.String()
	for _, want := range []string{"load: 100% (4/4)", "dropped 3 voxels", "edges: 50% (5/10)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "edges: 100%") {
		t.Errorf("a failed stage was shown complete:\n%s", out)
	}
	if strings.Contains(out, "\r") {
		t.Errorf("plain output contains carriage returns:\n%q", out)
	}
}

func TestFormatBar(t *testing.T) {
	s := Snapshot{Stage: "histogram", Done: 1, Total: 2, Fraction: 0.5, Elapsed: 2 * time.Second, ETA: 2 * time.Second}
	got := FormatBar(s, 10)
	if !strings.Contains(got, "[#####.....]") || !strings.Contains(got, "50%") || !strings.Contains(got, "ETA 2.0s") {
		t.Fatalf("bar %q", got)
	}
}

func TestDisplayPrintsACompleteStageOnce(t *testing.T) {
	var buf bytes.Buffer
	d := NewDisplay(&buf)
	d.Interval = 0
	d.Start("write bundle", 2)
	d.Add(2)
	time.Sleep(600 * time.Millisecond) // several redraw ticks with the stage complete
	d.Close(true)
	if n := strings.Count(buf.String(), "write bundle: 100%"); n != 1 {
		t.Fatalf("complete stage printed %d times:\n%s", n, buf.String())
	}
}

// noteCount is a Reporter that is not safe for concurrent Start or Note calls: the race detector
// and the count catch a Serialize that lets two through at once.
type noteCount struct {
	discard
	starts, notes int
}

func (n *noteCount) Start(string, int64) { n.starts++ }
func (n *noteCount) Note(string)         { n.notes++ }

func TestSerializeOneAtATime(t *testing.T) {
	inner := &noteCount{}
	r := Serialize(inner)
	if Serialize(r) != r {
		t.Error("Serialize wrapped a serialized reporter again")
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				r.Start("stage", 1)
				r.Note("note")
				r.Add(1)
			}
		}()
	}
	wg.Wait()
	if inner.starts != 4000 || inner.notes != 4000 {
		t.Errorf("starts %d, notes %d, want 4000 each", inner.starts, inner.notes)
	}
	if Serialize(nil) == nil {
		t.Error("Serialize(nil) is nil")
	}
}

// TestDisplayConcurrentStages: a stage run beside the main one through Lane (random networks
// beside the modules, as with a device) is counted apart and shown on its own: in a log each
// stage's lines carry its own counts and each ends complete once; on a terminal both stand on
// one line while they run.
func TestDisplayConcurrentStages(t *testing.T) {
	var buf bytes.Buffer
	d := NewDisplay(&buf)
	d.mu.Lock()
	d.Interval = time.Hour // at most one progress line per stage start; the ends are what counts
	d.mu.Unlock()
	rep := Serialize(d)
	rep.Start("modules", 4)
	lane, end := Lane(rep)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer end(nil)
		lane.Start("random networks", 10)
		for range 10 {
			lane.Add(1)
		}
	}()
	go func() {
		defer wg.Done()
		for range 3 {
			rep.Add(1)
		}
	}()
	wg.Wait()
	rep.Add(1)
	rep.Start("nodal measures", 2)
	rep.Add(2)
	d.Close(true)
	out := buf.String()
	for _, want := range []string{"modules: 100% (4/4)", "random networks: 100% (10/10)", "nodal measures: 100% (2/2)"} {
		if n := strings.Count(out, want); n != 1 {
			t.Errorf("%q printed %d times, want once:\n%s", want, n, out)
		}
	}
	// The modules' fourth unit came after the random networks ended: shown complete before,
	// the modules would have been ended by the lane's start.
	if strings.Index(out, "modules: 100%") < strings.Index(out, "random networks: 100%") {
		t.Errorf("modules shown complete before their last unit:\n%s", out)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !regexp.MustCompile(`^(modules: \d+% \(\d/4\)|random networks: \d+% \(\d+/10\)|nodal measures: \d+% \(\d/2\)) \d`).MatchString(l) {
			t.Errorf("unexpected line %q (counts of two stages mixed?)", l)
		}
	}

	// A terminal: both running stages on the redrawn line.
	var tb bytes.Buffer
	d = newDisplay(&tb, true)
	d.Start("modules", 0)
	lane, end = Lane(d)
	lane.Start("random networks", 10)
	lane.Add(4)
	d.draw(false)
	end(nil)
	d.Close(true)
	if s := tb.String(); !strings.Contains(s, "modules: ") || !strings.Contains(s, " | random networks: 40% (4/10)") {
		t.Errorf("terminal output lacks both stages on one line:\n%q", s)
	}
}

// A stage beside the others that ends in an error is shown as it stood, with the error — in a
// log and on a terminal — never as complete; a cancelled one says it stopped.
func TestDisplayFailedLane(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var buf bytes.Buffer
		d := newDisplay(&buf, tty)
		d.Start("modules", 0)
		lane, end := Lane(Serialize(d))
		lane.Start("random networks", 15)
		lane.Add(6)
		end(errors.New("rewiring: out of device memory"))
		lane, end = Lane(d)
		lane.Start("leading eigenvector", 4)
		lane.Add(1)
		end(fmt.Errorf("run stopped: %w", context.Canceled))
		d.Close(false)
		out := buf.String()
		if !strings.Contains(out, "random networks: 40% (6/15)") || !strings.Contains(out, "— failed: rewiring: out of device memory") ||
			strings.Contains(out, "random networks: 100%") || strings.Contains(out, "random networks [") {
			t.Errorf("tty %v: the failed stage:\n%q", tty, out)
		}
		if !strings.Contains(out, "leading eigenvector: 25% (1/4)") || !strings.Contains(out, "— stopped") || strings.Contains(out, "leading eigenvector: 100%") {
			t.Errorf("tty %v: the cancelled stage:\n%q", tty, out)
		}
	}
	// On a Reporter without stages end is a no-op either way.
	_, end := Lane(Discard)
	end(errors.New("x"))
}
