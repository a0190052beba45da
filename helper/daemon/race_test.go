//go:build race

package daemon

// raceEnabled reports a -race build, where the load test applies a tenth of the connections
// and the soak fewer jobs (goroutines cost about ten times more there).
const raceEnabled = true

// infoBound is the info latency the load test asserts (95th percentile of a phase; see
// loadedBound). Under -race every memory access and goroutine switch is instrumented (the
// race detector's documented cost is 2–20× in time), while each phase carries a tenth of the
// load; the full-metrics job that runs under the streams is not reduced and computes several
// times slower. The bound is 2.5× the goal: measured on a 2-core machine at load average 20,
// the worst phase's p95 was 79 ms (RELIABILITY.md).
const infoBound = 5 * infoGoal / 2
