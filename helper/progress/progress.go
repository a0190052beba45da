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
	now     func() time.Time
}

// NewTracker returns an idle Tracker.
func NewTracker() *Tracker { return &Tracker{now: time.Now} }

func (t *Tracker) Start(stage string, total int64) {
	prev := t.Snapshot()
	t.mu.Lock()
	t.stage, t.total, t.start = stage, total, t.now()
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

// Snapshot reads the current stage's state.
func (t *Tracker) Snapshot() Snapshot {
	t.mu.Lock()
	s := Snapshot{Stage: t.stage, Total: t.total}
	start := t.start
	t.mu.Unlock()
	s.Done = t.done.Load()
	if s.Stage == "" {
		return s
	}
	s.Elapsed = t.now().Sub(start)
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
