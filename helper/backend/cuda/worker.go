//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"gorgonia.org/cu"
)

// worker owns the CUDA context. The driver binds a context to the OS thread that made it
// current; from any other thread every call fails with InvalidContext. So one goroutine,
// locked to its thread for its whole life, creates the context and runs every closure that
// touches the device.
type worker struct {
	jobs     chan func()
	urgent   chan func() // taken before jobs whenever both wait (doUrgent)
	finished chan struct{}
	once     sync.Once
}

var errWorkerClosed = errors.New("cuda backend: used after Close")

// startWorker creates the context for device ordinal on a new locked goroutine.
func startWorker(ordinal int) (*worker, error) {
	w := &worker{jobs: make(chan func()), urgent: make(chan func()), finished: make(chan struct{})}
	ready := make(chan error, 1)
	go w.loop(ordinal, ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return w, nil
}

func (w *worker) loop(ordinal int, ready chan<- error) {
	// Never unlocked: when this goroutine returns, its thread (and with it the context's
	// binding) is torn down instead of being handed to other goroutines.
	runtime.LockOSThread()
	defer close(w.finished)
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		ready <- fmt.Errorf("cuda backend: device %d: %w", ordinal, err)
		return
	}
	ctx, err := dev.MakeContext(cu.SchedAuto)
	if err != nil {
		ready <- fmt.Errorf("cuda backend: creating a context on device %d: %w", ordinal, err)
		return
	}
	ready <- nil
	inRow := 0 // urgent closures run since the last plain one
	for {
		var job func()
		ok, urgent := true, false
		if inRow >= urgentBurst { // a plain closure waiting goes now
			select {
			case job, ok = <-w.jobs:
			default:
			}
		}
		if job == nil && ok {
			select { // else an urgent closure waiting goes first
			case job = <-w.urgent:
				urgent = true
			default:
				select {
				case job = <-w.urgent:
					urgent = true
				case job, ok = <-w.jobs:
				}
			}
		}
		if !ok {
			break
		}
		if urgent {
			inRow++
		} else {
			inRow = 0
		}
		job()
	}
	_ = ctx.Destroy()
}

// do runs f on the context's thread and returns its error; a panic inside f comes back as an
// error rather than crossing the package boundary.
func (w *worker) do(f func() error) error { return w.run(w.jobs, f) }

// doUrgent is do for short closures that a caller waits on many times in a row (the Lanczos
// steps of the leading-eigenvector modules): the worker takes them before the closures
// waiting in do, so long work queued meanwhile (random networks) delays each by at most the
// closure running. Several groups' solves run at once, so urgent closures may always be
// waiting; after urgentBurst of them in a row a plain closure waiting goes first. With one
// group solving, the worker alternated already (the group's next step comes after the worker
// has taken a waiting plain closure); urgentBurst = 1 keeps that share of the device thread
// for any number of groups, so the random networks, which end last on W7, wait no longer for
// the modules than before, and the groups fill the device thread's idle time.
func (w *worker) doUrgent(f func() error) error { return w.run(w.urgent, f) }

// urgentBurst is the number of urgent closures run in a row while a plain one waits.
const urgentBurst = 1

func (w *worker) run(queue chan func(), f func() error) (err error) {
	done := make(chan error, 1)
	job := func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("cuda backend: internal error: %v", r)
			}
		}()
		done <- f()
	}
	defer func() {
		if recover() != nil { // send on the closed channel: the worker was stopped
			err = errWorkerClosed
		}
	}()
	queue <- job
	return <-done
}

// stop ends the worker after the closures already sent; it destroys the context.
func (w *worker) stop() {
	w.once.Do(func() {
		close(w.jobs)
		<-w.finished
		close(w.urgent)
	})
}
