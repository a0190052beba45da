package cuda

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// runQueue runs q's closures on a goroutine, as the device thread does, until q is closed.
func runQueue(q *queue) (stopped chan struct{}) {
	stopped = make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			job, _, ok := q.next()
			if !ok {
				return
			}
			job()
		}
	}()
	return stopped
}

// drain returns once every closure the device thread has taken so far has run (a plain
// closure after them has run).
func drain(q *queue) {
	ran := make(chan struct{})
	q.jobs <- func() { close(ran) }
	<-ran
}

// send sends f on ch from a new goroutine and returns once that goroutine is blocked on ch
// (the device thread busy): the closure is waiting.
func send(t *testing.T, wg *sync.WaitGroup, ch chan func(), f func()) {
	t.Helper()
	wg.Add(1)
	sent := make(chan struct{})
	go func() {
		defer wg.Done()
		close(sent)
		ch <- f
	}()
	<-sent
	time.Sleep(5 * time.Millisecond) // let it block on ch; the order below does not depend on it
}

// The device thread takes rewiring first, then urgent closures, then plain ones (one urgent
// in a row while a plain one waits); under a hold, plain closures wait until it is released
// while urgent ones still run, and rewiring sent meanwhile goes first.
func TestQueueOrder(t *testing.T) {
	q := newQueue()
	var mu sync.Mutex
	var order []string
	rec := func(s string) func() {
		return func() { mu.Lock(); order = append(order, s); mu.Unlock() }
	}
	// Occupy the device thread so that everything below waits at once.
	busy, unblock := make(chan struct{}), make(chan struct{})
	stopped := runQueue(q)
	go func() { q.jobs <- func() { close(busy); <-unblock } }()
	<-busy
	var wg sync.WaitGroup
	send(t, &wg, q.jobs, rec("plain1"))
	send(t, &wg, q.urgent, rec("urgent1"))
	send(t, &wg, q.first, rec("first1"))
	close(unblock)
	wg.Wait()
	drain(q)
	// The busy closure was plain: an urgent one may go, but rewiring goes before both.
	if want := []string{"first1", "urgent1", "plain1"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}

	// Under a hold: plain closures wait, urgent and first ones run.
	mu.Lock()
	order = nil
	mu.Unlock()
	release := q.holdFirst()
	busy, unblock = make(chan struct{}), make(chan struct{})
	go func() { q.first <- func() { close(busy); <-unblock } }()
	<-busy
	send(t, &wg, q.jobs, rec("plain2"))
	send(t, &wg, q.urgent, rec("urgent2"))
	close(unblock)
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	held := slices.Clone(order)
	mu.Unlock()
	if want := []string{"urgent2"}; !slices.Equal(held, want) {
		t.Fatalf("under a hold: %v ran, want %v", held, want)
	}
	done := make(chan struct{})
	go func() { q.first <- rec("first2"); close(done) }()
	<-done
	release()
	release() // a second call does nothing
	wg.Wait()
	drain(q)
	if want := []string{"urgent2", "first2", "plain2"}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if n := q.hold.Load(); n != 0 {
		t.Fatalf("hold count %d after release", n)
	}

	q.close()
	<-stopped
	q.closeAll()
}
