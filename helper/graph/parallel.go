package graph

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// workerCount is the number of goroutines the parallel measures use: one per core Go may run
// on (GOMAXPROCS), never more than there are chunks of work.
func workerCount(chunks int) int {
	w := runtime.GOMAXPROCS(0)
	if w > chunks {
		w = chunks
	}
	if w < 1 {
		w = 1
	}
	return w
}

// forEachChunk splits [0, n) into chunks of size chunk and runs body(worker, lo, hi) for each on
// workers goroutines. With static set, chunk c always goes to worker c mod workers, so per-worker
// floating-point accumulators are summed in an order that does not depend on scheduling and the
// results are bit-for-bit reproducible for a given GOMAXPROCS; otherwise chunks are handed out
// dynamically (for integer work, where order cannot change the result). The context is checked
// before every chunk; the first error (or ctx.Err()) stops all workers and is returned.
func forEachChunk(ctx context.Context, n, chunk, workers int, static bool, body func(w, lo, hi int) error) error {
	if n <= 0 {
		return ctx.Err()
	}
	if chunk < 1 {
		chunk = 1
	}
	chunks := (n + chunk - 1) / chunk
	var (
		next    atomic.Int64
		stop    atomic.Bool
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err })
		stop.Store(true)
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := 0; ; k++ {
				var c int
				if static {
					c = w + k*workers
				} else {
					c = int(next.Add(1) - 1)
				}
				if c >= chunks || stop.Load() {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				lo := c * chunk
				hi := min(lo+chunk, n)
				if err := body(w, lo, hi); err != nil {
					fail(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return first
}
