//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/hubscope/hubscope/helper/internal/trace"
	"gorgonia.org/cu"
)

// worker owns the CUDA context. The driver binds a context to the OS thread that made it
// current; from any other thread every call fails with InvalidContext. So one goroutine,
// locked to its thread for its whole life, creates the context and runs every closure that
// touches the device.
type worker struct {
	q        *queue
	finished chan struct{}
	once     sync.Once
}

var errWorkerClosed = errors.New("cuda backend: used after Close")

// startWorker creates the context for device ordinal on a new locked goroutine.
func startWorker(ordinal int) (*worker, error) {
	w := &worker{q: newQueue(), finished: make(chan struct{})}
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
	// With HUBSCOPE_TRACE=1 the thread's busy time per class is printed when it stops: the
	// device thread is the one resource every stage of the metrics shares.
	var busy [3]time.Duration
	var runs [3]int
	began := time.Now()
	for {
		job, class, ok := w.q.next() // the queue's order: rewiring, urgent, plain (queue.go)
		if !ok {
			break
		}
		if trace.On() {
			t := time.Now()
			job()
			busy[class] += time.Since(t)
			runs[class]++
			continue
		}
		job()
	}
	if trace.On() {
		trace.Printf("device thread: %.3f s busy of %.3f s — rewiring %.3f s (%d closures), urgent %.3f s (%d), plain %.3f s (%d)",
			(busy[0] + busy[1] + busy[2]).Seconds(), time.Since(began).Seconds(),
			busy[0].Seconds(), runs[0], busy[1].Seconds(), runs[1], busy[2].Seconds(), runs[2])
	}
	_ = ctx.Destroy()
}

// do runs f on the context's thread and returns its error; a panic inside f comes back as an
// error rather than crossing the package boundary.
func (w *worker) do(f func() error) error { return w.run(w.q.jobs, f) }

// doUrgent is do for short closures that a caller waits on many times in a row (the Lanczos
// steps of the leading-eigenvector modules): the worker takes them before the closures
// waiting in do, so long work queued meanwhile delays each by at most the closure running.
// Several groups' solves run at once, so urgent closures may always be waiting; after
// urgentBurst of them in a row a plain closure waiting goes first, so the groups fill the
// device thread's idle time without starving the rest.
func (w *worker) doUrgent(f func() error) error { return w.run(w.q.urgent, f) }

// doFirst is do for the random networks' rewiring, which goes before all other work (queue).
func (w *worker) doFirst(f func() error) error { return w.run(w.q.first, f) }

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
		w.q.close()
		<-w.finished
		w.q.closeAll()
	})
}
