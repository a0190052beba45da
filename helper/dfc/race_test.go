//go:build race

package dfc

// raceEnabled reports a -race build, where the per-window reference runs of the equality
// tests cost tens of seconds and teach the race detector nothing new: they run fewer cases.
const raceEnabled = true
