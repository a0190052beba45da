//go:build race

package daemon

// raceEnabled reports a -race build, where the load test applies a tenth of the connections
// and the soak fewer jobs (goroutines cost about ten times more there).
const raceEnabled = true
