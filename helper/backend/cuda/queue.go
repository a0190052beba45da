package cuda

import (
	"sync"
	"sync/atomic"
)

// queue is the device thread's order of work (docs/algorithms.md, "The device thread's
// order"). Closures come in three classes:
//
//   - first: the random networks' rewiring (Rewire). Each random network's Leiden, the
//     longest chain on host cores, starts only once its rewiring is done, so the rewiring
//     goes before everything else.
//   - urgent: short closures that a caller waits on many times in a row (the Lanczos steps of
//     the leading-eigenvector modules), taken before plain ones; after urgentBurst of them in
//     a row a plain closure waiting goes first.
//   - plain: everything else (searches, triangle counts, local efficiency, the fc kernels), in
//     the order sent.
//
// A hold (holdFirst) keeps plain closures off the device while rewiring is under way or about
// to continue: between two rounds of one network, or two networks, the rewiring's goroutine
// needs a few microseconds to send its next closure, and without the hold a plain closure
// waiting (local efficiency: a quarter of a second) would take the device in that gap. Urgent
// closures (about 130 µs each) may still run in such a gap. A hold must only be taken by
// code that then sends first-class closures without waiting on plain ones.
type queue struct {
	first, urgent, jobs chan func()
	hold                atomic.Int64
	wake                chan struct{} // a hold was released: look at the plain closures again
	inRow               int           // urgent closures run since the last plain one (device thread)
	once                sync.Once
}

// urgentBurst is the number of urgent closures run in a row while a plain one waits.
const urgentBurst = 1

func newQueue() *queue {
	return &queue{first: make(chan func()), urgent: make(chan func()), jobs: make(chan func()), wake: make(chan struct{}, 1)}
}

// holdFirst keeps plain closures waiting until the returned release is called (once; more
// calls do nothing). Holds nest: plain closures go again when every hold is released.
func (q *queue) holdFirst() (release func()) {
	q.hold.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			if q.hold.Add(-1) == 0 {
				select {
				case q.wake <- struct{}{}:
				default:
				}
			}
		})
	}
}

// Closure classes, as next returns them.
const (
	classFirst = iota
	classUrgent
	classPlain
)

// next returns the closure to run and its class, or ok = false once the queue is closed
// (device thread).
func (q *queue) next() (job func(), class int, ok bool) {
	for {
		select { // rewiring first
		case job = <-q.first:
			return job, classFirst, true
		default:
		}
		held := q.hold.Load() > 0
		if !held && q.inRow >= urgentBurst { // a plain closure waiting goes now
			select {
			case job, ok = <-q.jobs:
				q.inRow = 0
				return job, classPlain, ok
			default:
			}
		}
		select { // an urgent closure waiting
		case job = <-q.urgent:
			q.inRow++
			return job, classUrgent, true
		default:
		}
		if held {
			select {
			case job = <-q.first:
				return job, classFirst, true
			case job = <-q.urgent:
				q.inRow++
				return job, classUrgent, true
			case <-q.wake: // the hold may be gone: look again
				continue
			}
		}
		select {
		case job = <-q.first:
			return job, classFirst, true
		case job = <-q.urgent:
			q.inRow++
			return job, classUrgent, true
		case job, ok = <-q.jobs:
			q.inRow = 0
			return job, classPlain, ok
		case <-q.wake: // stale token of an earlier release
			continue
		}
	}
}

// close ends the queue for next's caller: the closures already sent on jobs still run; a
// closure sent on any queue afterwards panics in send (run turns that into errWorkerClosed).
func (q *queue) close() { q.once.Do(func() { close(q.jobs) }) }

// closeAll closes the other queues once the device thread has stopped taking closures.
func (q *queue) closeAll() {
	close(q.first)
	close(q.urgent)
}
