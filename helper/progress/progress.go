// Package progress carries progress of long work (stages with a known amount of units) from
// the engine to whoever shows it: a terminal bar, plain log lines, or IPC events.
//
// Engine code calls Start at the beginning of a stage and Add as units finish; Add is safe to
// call from several goroutines. Cancellation is not this package's concern: it travels in a
// context.Context that long loops check at least every few hundred milliseconds.
package progress

import (
	"sync"
	"sync/atomic"
	"time"
)

// Reporter receives progress. Implementations must be safe for concurrent Add calls; engine
// code that runs stages side by side wraps its reporter in Serialize, so Start and Note never
// reach an implementation from two goroutines at once.
type Reporter interface {
	// Start begins a new stage of total units (total ≤ 0: unknown amount).
	Start(stage string, total int64)
	// Add records n more finished units of the current stage.
	Add(n int64)
	// Note passes a one-line human-readable message (dropped voxels, chosen threshold, …).
	Note(msg string)
}

// Discard is a Reporter that ignores everything.
var Discard Reporter = discard{}

type discard struct{}

func (discard) Start(string, int64) {}
func (discard) Add(int64)           {}
func (discard) Note(string)         {}

// Serialize returns a Reporter that passes Start and Note to r one at a time (Add goes straight
// through, as every Reporter takes concurrent Adds). Wrapping twice is harmless.
func Serialize(r Reporter) Reporter {
	r = OrDiscard(r)
	if _, ok := r.(*serialized); ok {
		return r
	}
	return &serialized{r: r}
}

type serialized struct {
	mu sync.Mutex
	r  Reporter
}

func (s *serialized) Start(stage string, total int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r.Start(stage, total)
}

func (s *serialized) Add(n int64) { s.r.Add(n) }

func (s *serialized) Note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r.Note(msg)
}

// Lane returns a Reporter for work that runs beside r's stages (a background branch: the
// random networks beside the modules), so that its stages and units are counted apart and a
// display shows each running stage on its own; end(err) finishes the lane's last stage:
// complete when err is nil, else as it stood, with the error (a display prints it: the
// stage must not look done when its work failed). On a Reporter that keeps no stages
// (Discard, an event forwarder) it is r itself.
func Lane(r Reporter) (lane Reporter, end func(err error)) {
	r = OrDiscard(r)
	if s, ok := r.(*serialized); ok {
		l, end := Lane(s.r)
		if l == s.r {
			return r, end
		}
		return Serialize(l), end
	}
	if l, ok := r.(laner); ok {
		return l.lane()
	}
	return r, func(error) {}
}

// laner is implemented by Tracker (and what embeds it: Display).
type laner interface {
	lane() (Reporter, func(error))
}

// OrDiscard returns r, or Discard when r is nil.
func OrDiscard(r Reporter) Reporter {
	if r == nil {
		return Discard
	}
	return r
}

// Snapshot is the state of a stage at one moment, with an ETA extrapolated from its rate.
type Snapshot struct {
	Stage    string
	Done     int64
	Total    int64
	Fraction float64       // Done/Total in [0,1], or 0 when Total is unknown
	Elapsed  time.Duration // since Start
	ETA      time.Duration // remaining time estimate; 0 when unknown
}

// Tracker is a Reporter that keeps the current stage's counters so that a display (terminal
// bar, IPC event stream) can poll Snapshot at its own pace. Notes go to OnNote if set.
type Tracker struct {
	mu     sync.Mutex
	stage  string
	total  int64
	start  time.Time
	done   atomic.Int64
	OnNote func(string)
	// OnStart, if set, is called when a new stage begins (after the previous one's final state
	// can still be read through the snapshot passed in).
	OnStart func(prev Snapshot)
	// OnFail, if set, is called instead of OnStart when a lane's last stage ends in an error
	// (Lane's end(err)), with the stage as it stood.
	OnFail func(prev Snapshot, err error)
	now    func() time.Time
	lanes  []*trackerLane // stages running beside the main one (Lane), in start order
}

// NewTracker returns an idle Tracker.
func NewTracker() *Tracker { return &Tracker{now: time.Now} }

func (t *Tracker) Start(stage string, total int64) {
	prev := t.Snapshot()
	t.mu.Lock()
	t.stage, t.total, t.start = stage, total, t.clock()
	t.done.Store(0)
	cb := t.OnStart
	t.mu.Unlock()
	if cb != nil && prev.Stage != "" {
		cb(prev)
	}
}

func (t *Tracker) Add(n int64) { t.done.Add(n) }

func (t *Tracker) Note(msg string) {
	t.mu.Lock()
	cb := t.OnNote
	t.mu.Unlock()
	if cb != nil {
		cb(msg)
	}
}

// Snapshot reads the current stage's state (of the main lane: see Snapshots).
func (t *Tracker) Snapshot() Snapshot {
	t.mu.Lock()
	s := Snapshot{Stage: t.stage, Total: t.total}
	start := t.start
	t.mu.Unlock()
	return t.snapshot(s, start, t.done.Load())
}

// Snapshots reads every running stage: the main one first, then those of the lanes (Lane)
// in the order they started.
func (t *Tracker) Snapshots() []Snapshot {
	var out []Snapshot
	if s := t.Snapshot(); s.Stage != "" {
		out = append(out, s)
	}
	t.mu.Lock()
	lanes := append([]*trackerLane(nil), t.lanes...)
	t.mu.Unlock()
	for _, l := range lanes {
		if s := l.Snapshot(); s.Stage != "" {
			out = append(out, s)
		}
	}
	return out
}

func (t *Tracker) clock() time.Time {
	if t.now == nil {
		return time.Now()
	}
	return t.now()
}

func (t *Tracker) snapshot(s Snapshot, start time.Time, done int64) Snapshot {
	s.Done = done
	if s.Stage == "" {
		return s
	}
	s.Elapsed = t.clock().Sub(start)
	if s.Total > 0 {
		if s.Done > s.Total {
			s.Done = s.Total
		}
		s.Fraction = float64(s.Done) / float64(s.Total)
		if s.Done > 0 && s.Done < s.Total {
			// Linear extrapolation of the stage's average rate: remaining = elapsed·(1−f)/f.
			s.ETA = time.Duration(float64(s.Elapsed) * float64(s.Total-s.Done) / float64(s.Done))
		}
	}
	return s
}

// trackerLane is one Lane of a Tracker: its own stage and counter; a stage that ends (the
// lane's next Start, or its end) reaches the Tracker's OnStart like the main lane's.
type trackerLane struct {
	t     *Tracker
	mu    sync.Mutex
	stage string
	total int64
	start time.Time
	done  atomic.Int64
}

func (t *Tracker) lane() (Reporter, func(error)) {
	l := &trackerLane{t: t}
	t.mu.Lock()
	t.lanes = append(t.lanes, l)
	t.mu.Unlock()
	return l, l.end
}

func (l *trackerLane) Start(stage string, total int64) {
	prev := l.Snapshot()
	l.mu.Lock()
	l.stage, l.total, l.start = stage, total, l.t.clock()
	l.done.Store(0)
	l.mu.Unlock()
	l.ended(prev)
}

func (l *trackerLane) Add(n int64) { l.done.Add(n) }

func (l *trackerLane) Note(msg string) { l.t.Note(msg) }

func (l *trackerLane) Snapshot() Snapshot {
	l.mu.Lock()
	s := Snapshot{Stage: l.stage, Total: l.total}
	start := l.start
	l.mu.Unlock()
	return l.t.snapshot(s, start, l.done.Load())
}

// end removes the lane; its last stage ends, complete or (err ≠ nil) failed.
func (l *trackerLane) end(err error) {
	prev := l.Snapshot()
	t := l.t
	t.mu.Lock()
	for i, x := range t.lanes {
		if x == l {
			t.lanes = append(t.lanes[:i], t.lanes[i+1:]...)
			break
		}
	}
	t.mu.Unlock()
	l.mu.Lock()
	l.stage = ""
	l.mu.Unlock()
	if err != nil {
		l.t.mu.Lock()
		cb := l.t.OnFail
		l.t.mu.Unlock()
		if cb != nil && prev.Stage != "" {
			cb(prev, err)
		}
		return
	}
	l.ended(prev)
}

func (l *trackerLane) ended(prev Snapshot) {
	l.t.mu.Lock()
	cb := l.t.OnStart
	l.t.mu.Unlock()
	if cb != nil && prev.Stage != "" {
		cb(prev)
	}
}
