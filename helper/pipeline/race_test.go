//go:build race

package pipeline

// raceEnabled reports a -race build: the phantom recovery tests use a coarser grid there.
const raceEnabled = true
