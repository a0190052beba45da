package daemon

import (
	"context"
	"sync"

	"github.com/hubscope/hubscope/ipc"
)

// maxPending bounds the events waiting for one slow subscriber. Progress never piles up (a
// new progress event replaces a waiting one); messages and state changes are few per job, so
// the bound is reached only by a reader that has stopped reading, whose oldest messages then
// go. The terminal event, always last, is never dropped.
const maxPending = 256

// subscriberBuffer is the channel capacity handed to a reader.
const subscriberBuffer = 4

// hub fans a job's events out to its subscribers.
type hub struct {
	mu   sync.Mutex
	seq  int64
	subs map[*subscriber]struct{}
	over bool // the terminal event has been published
	last ipc.Event
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

type pending struct {
	ev       ipc.Event
	progress bool // may be replaced by a newer progress event
}

type subscriber struct {
	mu    sync.Mutex
	queue []pending
	wake  chan struct{} // capacity 1: "the queue changed"
}

func (s *subscriber) push(p pending) {
	s.mu.Lock()
	if n := len(s.queue); p.progress && n > 0 && s.queue[n-1].progress {
		s.queue[n-1] = p // coalesce: the reader only needs the latest progress
	} else {
		if n >= maxPending {
			s.queue = append(s.queue[:0], s.queue[1:]...)
		}
		s.queue = append(s.queue, p)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) pop() (pending, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return pending{}, false
	}
	p := s.queue[0]
	s.queue[0] = pending{}
	s.queue = s.queue[1:]
	return p, true
}

// publish numbers an event and queues it for every subscriber; it never blocks on a reader.
func (h *hub) publish(ev ipc.Event, progress bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.over {
		return
	}
	h.seq++
	ev.Seq = h.seq
	h.last = ev
	for s := range h.subs {
		s.push(pending{ev, progress})
	}
	if ev.Job.State.Terminal() {
		h.over = true
		h.subs = map[*subscriber]struct{}{} // their forwarders end after delivering it
	}
}

// subscribe returns a channel that yields first, then the job's later events, and closes
// after the terminal event or when ctx ends; either way the forwarding goroutine and the
// subscription are released.
func (h *hub) subscribe(ctx context.Context, first ipc.Event) <-chan ipc.Event {
	out := make(chan ipc.Event, subscriberBuffer)
	s := &subscriber{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	first.Seq = h.seq
	if h.over {
		first = h.last
	}
	s.queue = append(s.queue, pending{ev: first})
	if !h.over {
		h.subs[s] = struct{}{}
	}
	h.mu.Unlock()
	go func() {
		defer close(out)
		defer func() {
			h.mu.Lock()
			delete(h.subs, s)
			h.mu.Unlock()
		}()
		for {
			p, ok := s.pop()
			if !ok {
				select {
				case <-s.wake:
					continue
				case <-ctx.Done():
					return
				}
			}
			select {
			case out <- p.ev:
			case <-ctx.Done():
				return
			}
			if p.ev.Job.State.Terminal() {
				return
			}
		}
	}()
	return out
}
