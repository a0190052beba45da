//go:build race

package synth

// raceEnabled reports a -race build, where single-goroutine O(N²·L) arithmetic checks run 10–50×
// slower and teach the race detector nothing.
const raceEnabled = true
