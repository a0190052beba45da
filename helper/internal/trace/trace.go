// Package trace prints when the metrics' concurrent chains start and end, so that a run's
// critical path can be read off (docs/algorithms.md, "The device thread's order"). It is off
// unless HUBSCOPE_TRACE=1 is set in the environment; then every event is one line on standard
// error: "trace +S.SSSs EVENT", S the seconds since the process started.
package trace

import (
	"fmt"
	"os"
	"sync"
	"time"
)

var (
	start = time.Now()
	on    = os.Getenv("HUBSCOPE_TRACE") == "1"
	mu    sync.Mutex
)

// On reports whether tracing is enabled.
func On() bool { return on }

// Printf prints one event when tracing is enabled.
func Printf(format string, args ...any) {
	if !on {
		return
	}
	line := fmt.Sprintf("trace +%.3fs %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	mu.Lock()
	defer mu.Unlock()
	_, _ = os.Stderr.WriteString(line)
}

// Span prints "WHAT start" now and returns a function that prints "WHAT end (D s)".
func Span(format string, args ...any) (end func()) {
	if !on {
		return func() {}
	}
	what := fmt.Sprintf(format, args...)
	t := time.Now()
	Printf("%s start", what)
	return func() { Printf("%s end (%.3f s)", what, time.Since(t).Seconds()) }
}
